"""What the training-job tests share: a small generated corpus of topic pairs, a study whose replies are on or
off topic, and settings that put models and corpora under the test's own folder."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from annotation.models import Study
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)

TOPICS = 5
FILLER = ["the", "a", "is", "it", "so", "and", "very", "then"]


def topic_text(generator: random.Random, prefix: str, topic: int) -> str:
    words = [f"{prefix}{topic}x{generator.randrange(4)}" for _ in range(4)] + generator.sample(FILLER, 2)
    generator.shuffle(words)
    return " ".join(words)


def write_pairs(path: Path, count: int = 300, seed: int = 3) -> Path:
    """``count`` {"query", "reply"} lines: the reply's words belong to the query's topic."""
    generator = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(count):
            topic = generator.randrange(TOPICS)
            pair = {"query": topic_text(generator, "q", topic), "reply": topic_text(generator, "r", topic)}
            handle.write(json.dumps(pair) + "\n")
    return path


def write_dailydialog(folder: Path, dialogs: int = 60, seed: int = 5) -> Path:
    """A DailyDialog-layout corpus: train/ and validation/ with dialogues_*.txt (turns joined by __eou__)."""
    generator = random.Random(seed)
    for split, count in (("train", dialogs), ("validation", max(4, dialogs // 5))):
        (folder / split).mkdir(parents=True, exist_ok=True)
        lines = []
        for _ in range(count):
            topic = generator.randrange(TOPICS)
            turns = [topic_text(generator, "q" if i % 2 == 0 else "r", topic) for i in range(4)]
            lines.append(" __eou__ ".join(turns) + " __eou__")
        (folder / split / f"dialogues_{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@dataclass(frozen=True)
class TrainingPlaces:
    corpora: Path  # the allowed corpus root (DIALEVAL_CORPUS_ROOTS)
    uploads: Path
    models: Path


def training_places(tmp_path: Path, settings) -> TrainingPlaces:
    """Models, corpora and uploads under ``tmp_path``; only ``corpora`` is an allowed corpus root."""
    places = TrainingPlaces(tmp_path / "corpora", tmp_path / "uploads", tmp_path / "models")
    places.corpora.mkdir()
    settings.DIALEVAL_MODEL_DIR = places.models
    settings.DIALEVAL_CORPUS_ROOTS = [str(places.corpora)]
    settings.DIALEVAL_CORPUS_UPLOAD_DIR = places.uploads
    settings.DIALEVAL_TORCH_THREADS = 1  # a shared machine: one thread per training
    return places


def topic_study(owner=None, name: str = "training study") -> Study:
    """Six contexts; system "on" replies on the context's topic, "off" on another."""
    generator = random.Random(11)
    study = StudyFactory.create(name=name, **({"owner": owner} if owner is not None else {}))
    on, off = SystemFactory.create(study=study, name="on"), SystemFactory.create(study=study, name="off")
    for index in range(6):
        topic = index % TOPICS
        context = DialogContextFactory.create(
            study=study, position=index, turns=[{"speaker": "A", "text": topic_text(generator, "q", topic)}]
        )
        ReferenceFactory.create(context=context, text=topic_text(generator, "r", topic), origin="original")
        ResponseFactory.create(context=context, system=on, text=topic_text(generator, "r", topic))
        ResponseFactory.create(
            context=context, system=off, text=topic_text(generator, "r", (topic + 2) % TOPICS)
        )
    return study
