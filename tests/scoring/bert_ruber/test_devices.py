"""BERT-RUBER on a chosen device: the CPU path is unchanged (host-side padding packs the same
GRU inputs as ``pack_sequence``), and, where a CUDA GPU is present, training and scoring run on it and
agree with the CPU (bf16 encoder: scores move by about 1e-3)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_sequence

from scoring.metrics.bert_ruber.artifact import BertRuberArtifact, load_bert_ruber
from scoring.metrics.bert_ruber.cells import parse_cell
from scoring.metrics.bert_ruber.features import SentenceTable
from scoring.metrics.bert_ruber.heads import sentence_inputs
from scoring.metrics.ruber.ranking import ranking_accuracy, ranking_triples
from tests.scoring.bert_ruber.test_training import LEARNING_CONFIG, topic_pairs

pytest.importorskip("transformers")
from scoring.metrics.contextual_encoder import ContextualEncoder, minilm_encoder

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_rnn_inputs_are_packed_as_pack_sequence_packs_them() -> None:
    generator = np.random.default_rng(0)
    lengths = np.array([3, 1, 5, 2, 4], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    tokens = generator.standard_normal((int(lengths.sum()), 6)).astype(np.float16)
    table = SentenceTable(pooled={}, tokens=tokens, offsets=offsets, lengths=lengths, dimension=6)
    rows = np.array([4, 0, 1, 4, 2], dtype=np.int64)
    packed = sentence_inputs(table, rows, parse_cell("bert-rnn-ce"), torch.device("cpu"))
    expected = pack_sequence(
        [
            torch.from_numpy(tokens[offsets[row] : offsets[row] + lengths[row]].astype(np.float32))
            for row in rows
        ],
        enforce_sorted=False,
    )
    for got, want in zip(packed, expected, strict=True):
        assert (got is None and want is None) or (
            got is not None and want is not None and torch.equal(got, want)
        )


def test_a_cpu_model_scores_with_the_cpu_settings(tmp_path: Path) -> None:
    config = dataclasses.replace(LEARNING_CONFIG, cells=("word2vec-max-ce",), epochs=1)
    from scoring.metrics.bert_ruber.training import train_bert_ruber

    artifact = train_bert_ruber(
        topic_pairs(40, 1), topic_pairs(10, 2), config=config, output_dir=tmp_path, progress=False
    )
    settings = load_bert_ruber(artifact.path, device="cpu").settings
    assert (settings.scorer_batch_size, settings.scorer_autocast_dtype) == (256, None)


@pytest.fixture(scope="module")
def cuda_learned(tmp_path_factory: pytest.TempPathFactory) -> BertRuberArtifact:
    from scoring.metrics.bert_ruber.training import train_bert_ruber

    return train_bert_ruber(
        topic_pairs(300, seed=1),
        topic_pairs(60, seed=2),
        config=dataclasses.replace(LEARNING_CONFIG, cells=("bert-max-ce", "bert-rnn-ce"), device="cuda"),
        output_dir=tmp_path_factory.mktemp("cuda_learned"),
        progress=False,
    )


@needs_cuda
def test_training_on_cuda_learns_and_records_the_device(cuda_learned: BertRuberArtifact) -> None:
    import json

    timings = json.loads((cuda_learned.path / "timings.json").read_text())
    assert timings["device"].startswith("cuda")
    model = load_bert_ruber(cuda_learned.path, device="cuda")
    assert model.encoder is not None
    assert isinstance(model.encoder, ContextualEncoder)
    assert model.encoder.autocast_dtype == "bfloat16"
    assert model.settings.scorer_batch_size > 256
    triples = ranking_triples(topic_pairs(120, seed=3), seed=4)
    for cell in ("bert-max-ce", "bert-rnn-ce"):
        score = functools.partial(model.unreferenced, cell=cell)
        assert ranking_accuracy(score, triples) > 0.75, cell


@needs_cuda
def test_cuda_scores_agree_with_cpu_scores_of_the_same_artifact(cuda_learned: BertRuberArtifact) -> None:
    gpu = load_bert_ruber(cuda_learned.path, device="cuda", encoder=minilm_encoder(device="cuda"))
    cpu = load_bert_ruber(cuda_learned.path, device="cpu", encoder=minilm_encoder(device="cpu"))
    pairs = topic_pairs(200, seed=9)
    queries, replies = [pair.query for pair in pairs], [pair.reply for pair in pairs]
    for cell in ("bert-max-ce", "bert-rnn-ce"):
        on_gpu = np.array(gpu.unreferenced(queries, replies, cell=cell))
        on_cpu = np.array(cpu.unreferenced(queries, replies, cell=cell))
        assert np.abs(on_gpu - on_cpu).max() < 0.05, cell
        assert np.corrcoef(on_gpu, on_cpu)[0, 1] > 0.99, cell
