"""One judge as a metric: what it asks (template, question, scale), whom (backend and model), what it reads.

A definition is immutable and named by its content (:meth:`JudgeDefinition.key`): the metric it scores as
is ``llm-judge:<key>``, with the companion ``llm-judge-mass:<key>`` (the probability the judge put on valid
labels, per item). Both are computed by one forward pass or request per item (one metric family). The
names' grammar (the prefixes, the key's length, ``judge_key``) is in stats/judge_names.py, where the report
and the benchmark read judges without their definitions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.metrics.llm_judge.judging import READ_EXPECTATION, READS
from scoring.metrics.llm_judge.prompts import JudgeQuestion, PromptTemplate
from scoring.metrics.llm_judge.scale import JudgeScale
from stats.judge_names import JUDGE_PREFIX, KEY_LENGTH, MASS_PREFIX

BACKEND_LOCAL = "local"
BACKEND_SERVER = "server"
BACKENDS = (BACKEND_LOCAL, BACKEND_SERVER)
JUDGE_VERSION = "1"


@dataclass(frozen=True)
class JudgeDefinition:
    """``backend`` ``local`` (``model`` names one of the operator's local models) or ``server`` (``model``
    names one of the operator's endpoints); ``read`` ``expectation`` or ``argmax``."""

    template: PromptTemplate
    question: JudgeQuestion
    backend: str
    model: str
    read: str = READ_EXPECTATION

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown judge backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        if self.read not in READS:
            raise ValueError(f"unknown reading {self.read!r}; choose one of {', '.join(READS)}")
        self.template.check()

    def as_json(self) -> dict[str, Any]:
        template, question, scale = self.template, self.question, self.question.scale
        return {
            "template": {
                "name": template.name,
                "system": template.system,
                "user": template.user,
                "answer_prefix": template.answer_prefix,
                "pairwise": template.pairwise,
            },
            "question": {
                "name": question.name,
                "text": question.text,
                "minimum": scale.minimum,
                "maximum": scale.maximum,
                "point_labels": list(scale.point_labels),
                "slider": scale.slider,
                "qualities": [list(pair) for pair in question.qualities],
                **({"nominal": True} if scale.nominal else {}),  # a rating judge's key is as it was
            },
            "backend": self.backend,
            "model": self.model,
            "read": self.read,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeDefinition:
        template, question = data["template"], data["question"]
        return cls(
            template=PromptTemplate(
                name=str(template["name"]),
                system=str(template["system"]),
                user=str(template["user"]),
                answer_prefix=str(template.get("answer_prefix", "")),
                pairwise=bool(template.get("pairwise", False)),
            ),
            question=JudgeQuestion(
                name=str(question["name"]),
                text=str(question.get("text", "")),
                scale=JudgeScale(
                    int(question["minimum"]),
                    int(question["maximum"]),
                    tuple(str(label) for label in question.get("point_labels", [])),
                    bool(question.get("slider", False)),
                    bool(question.get("nominal", False)),
                ),
                qualities=tuple((str(name), str(text)) for name, text in question.get("qualities", [])),
            ),
            backend=str(data["backend"]),
            model=str(data["model"]),
            read=str(data.get("read", READ_EXPECTATION)),
        )

    def key(self) -> str:
        text = json.dumps(self.as_json(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]

    @property
    def metric_name(self) -> str:
        return f"{JUDGE_PREFIX}:{self.key()}"

    @property
    def mass_name(self) -> str:
        return f"{MASS_PREFIX}:{self.key()}"

    def question_hash(self) -> str:
        """What of the question the prompt shows besides its name and scale: its text, point words and the
        study's other qualities (8 hex digits)."""
        question = self.as_json()["question"]
        shown = [question["text"], question["point_labels"], question["qualities"]]
        return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode("utf-8")).hexdigest()[:8]

    def signature_parameters(self, *, model_id: str, reads: str) -> dict[str, str]:
        """What the judge's signature records: backend, model (a local model's name, an endpoint's model
        id), the template's name and hash, the question, its scale and the hash of its texts, what is read,
        and how (``logprobs`` or ``parsed``). A local model's content hash is the spec's artifact."""
        return {
            "backend": self.backend,
            "model": model_id.replace("|", "/"),
            "template": f"{self.template.name}@{self.template.content_hash()}".replace("|", "/"),
            "question": f"{self.question.name}@{self.question_hash()}",
            "scale": self.question.scale.code,
            "read": self.read,
            "reads": reads,
        }
