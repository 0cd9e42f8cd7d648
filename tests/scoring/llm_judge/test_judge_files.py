"""score_files --judge: a judge of replies outside any study, on the question the command line describes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scoring.metrics.llm_judge.judging import JudgeSetup, local_readings
from scoring.metrics.llm_judge.local_model import LocalJudgeModel
from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from scoring.metrics.llm_judge.scale import JudgeScale
from scoring.models import JudgeRecord

pytestmark = pytest.mark.django_db

CONTEXTS = ["Hi, how are you?\tFine, and you?", "Where is the station?"]
REPLIES = ["I am well, thanks for asking.", "Bananas are yellow."]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    hyp, ctx = tmp_path / "hyp.txt", tmp_path / "ctx.txt"
    hyp.write_text("\n".join(REPLIES) + "\n", encoding="utf-8")
    ctx.write_text("\n".join(CONTEXTS) + "\n", encoding="utf-8")
    return hyp, ctx


@pytest.mark.language_model
def test_score_files_judges_each_line_in_its_context(smollm2: LocalJudgeModel, tmp_path: Path) -> None:
    hyp, ctx = _files(tmp_path)
    out = io.StringIO()
    call_command(
        "score_files", "--hyp", str(hyp), "--context", str(ctx), "--judge", "single-answer",
        "--judge-scale", "0-2", "--judge-labels", "bad,borderline,good", "--format", "json", stdout=out,
    )  # fmt: skip
    found = json.loads(out.getvalue())
    (record,) = JudgeRecord.objects.all()
    name = f"llm-judge:{record.key}"
    question = JudgeQuestion(
        "appropriateness",
        "How appropriate is the reply to the dialog context?",
        JudgeScale(0, 2, ("bad", "borderline", "good")),
    )
    items = [
        JudgeItem(tuple(context.split("\t")), reply) for context, reply in zip(CONTEXTS, REPLIES, strict=True)
    ]
    expected = local_readings(smollm2, JudgeSetup(BUILT_IN_TEMPLATES["single-answer"], question), items)
    lines = found["sentences"]  # one entry per line: {"line": n, metric: value, ...}
    assert [line[name] for line in lines] == pytest.approx([result.expected for result in expected], abs=1e-9)
    assert [line[f"llm-judge-mass:{record.key}"] for line in lines] == pytest.approx(
        [result.mass for result in expected], abs=1e-9
    )
    assert "scale:0-2" in found["signatures"][name]


def test_score_files_names_what_is_wrong_with_a_judge(tmp_path: Path) -> None:
    hyp, ctx = _files(tmp_path)
    base = ["score_files", "--hyp", str(hyp), "--context", str(ctx), "--judge", "g-eval"]
    with pytest.raises(CommandError, match="--judge-scale: '1 to 5' is not MIN-MAX"):
        call_command(*base, "--judge-scale", "1 to 5")
    with pytest.raises(
        CommandError, match=r"--judge-scale / --judge-labels: 2 labels for the 3 points of 0-2"
    ):
        call_command(*base, "--judge-scale", "0-2", "--judge-labels", "bad,good")
    with pytest.raises(
        CommandError, match="template: 'pairwise' compares two replies; a file gives one reply"
    ):
        call_command(*base[:-1], "pairwise")
    assert not JudgeRecord.objects.exists()
