"""A GGUF model's converted copy (scoring/metrics/llm_judge/local_model.py): the first load writes the
de-quantised model as a transformers folder named by the file's sha256, later loads read it, and the model
read back is the same, tensor for tensor, token for token and probability for probability. A copy that does
not load is removed and written again; one that cannot be written is skipped with a warning."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from scoring.metrics.llm_judge import local_model
from scoring.metrics.llm_judge.local_model import LocalJudgeModel, model_content_hash
from scoring.metrics.llm_judge.parts import prompt_parts
from scoring.metrics.llm_judge.recipes import BUILT_IN_TEMPLATES
from tests.scoring.llm_judge.examples import ITEMS, QUESTION

pytestmark = pytest.mark.language_model


def test_the_first_load_writes_the_copy_and_the_next_reads_it_unchanged(
    smollm2_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    import torch

    torch.set_num_threads(1)
    converted = tmp_path / "converted"
    converted.mkdir()
    file_hash = model_content_hash(smollm2_path)
    stale, fresh = converted / f".{file_hash}.old", converted / f".{file_hash}.writing"
    for partial in (stale, fresh):  # what processes that died, or are still writing, left
        partial.mkdir()
        (partial / "config.json").write_text("{")
    an_hour_ago = time.time() - local_model.STALE_PARTIAL_SECONDS - 60
    os.utime(stale, (an_hour_ago, an_hour_ago))
    copy = converted / file_hash
    copy.mkdir()  # a copy damaged since it was written: removed, and written again from the file
    (copy / "config.json").write_text("{not json")

    with caplog.at_level(logging.WARNING, logger=local_model.__name__):
        from_file = LocalJudgeModel(smollm2_path, converted_dir=converted)
    assert f"the converted copy {copy} does not load" in caplog.text
    assert from_file.loaded_from == smollm2_path
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {path.name for path in copy.iterdir()}
    assert not stale.exists()  # a partial copy an hour old is removed
    assert fresh.exists()  # a recent one may still be written: kept

    from_copy = LocalJudgeModel(smollm2_path, converted_dir=converted)
    assert from_copy.loaded_from == copy
    assert from_copy.content_hash == from_file.content_hash == file_hash  # the signature names the file
    first, second = from_file.model.state_dict(), from_copy.model.state_dict()
    assert first.keys() == second.keys()
    assert all(torch.equal(first[name], second[name]) for name in first)
    parts = prompt_parts(BUILT_IN_TEMPLATES["g-eval"], QUESTION, ITEMS[:3], from_file.formatted)
    assert parts == prompt_parts(BUILT_IN_TEMPLATES["g-eval"], QUESTION, ITEMS[:3], from_copy.formatted)
    for part in parts:
        assert from_file.token_ids(part.prefix + part.own) == from_copy.token_ids(part.prefix + part.own)
    labels = QUESTION.scale.labels
    assert from_file.label_token_ids(labels) == from_copy.label_token_ids(labels)
    assert (
        from_file.label_probabilities(parts, labels) == from_copy.label_probabilities(parts, labels)
    ).all()


def test_a_copy_that_cannot_be_written_is_skipped_with_a_warning(
    smollm2: LocalJudgeModel, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger=local_model.__name__):
        local_model._write_converted(smollm2.tokenizer, smollm2.model, blocked / "copy")
    assert "could not keep a converted copy of the model" in caplog.text
    assert blocked.read_text() == "not a folder"
