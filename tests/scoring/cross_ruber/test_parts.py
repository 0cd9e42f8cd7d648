"""Cross-RUBER's parts without training: the network reproduces MiniLM, contexts are cut newest-first,
the token-state cache appends, reuses and survives an interrupted write, and k = 0 trains the whole
encoder without a cache (the CUDA path, run here on the CPU)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from scoring.metrics.contextual_encoder import minilm_model_path
from scoring.metrics.cross_ruber import CrossRuberConfig
from scoring.metrics.cross_ruber.batches import context_layout
from scoring.metrics.cross_ruber.network import CrossRuberNet, layer_forward, load_bert, load_tokenizer
from scoring.metrics.cross_ruber.token_states import LowerStateCache, encode_states, tokenize_texts
from tests.scoring.cross_ruber.builders import TINY, train_tiny

TEXTS = ["hello there , how are you ?", "fine .", "the train leaves at half past five ."]


@pytest.fixture(scope="module")
def parts() -> tuple[CrossRuberNet, Any]:
    torch.set_num_threads(1)
    path = str(minilm_model_path())
    net = CrossRuberNet(
        load_bert(path),
        frozen_layers=4,
        max_turns=3,
        head_hidden=8,
        dropout=0.1,
        interaction="reply-reads-context",
    )
    return net.eval(), load_tokenizer(path)


def test_lower_and_upper_layers_reproduce_minilm(parts: tuple[CrossRuberNet, Any]) -> None:
    net, tokenizer = parts
    encoded = tokenizer(TEXTS, padding=True, return_tensors="pt")
    mask = encoded["attention_mask"].bool()
    reference = load_bert(str(minilm_model_path()))
    with torch.no_grad():
        states = net.lower_states(encoded["input_ids"], mask)
        for layer in net.upper:
            states = layer_forward(layer, states, mask)
        expected = reference(**encoded).last_hidden_state
    assert torch.equal(states[mask], expected[mask])


def test_a_context_keeps_its_newest_turns_within_the_limit() -> None:
    lengths = np.array([5, 7, 4, 30])
    layout = context_layout([(0, 1, 2), (3,), (2, 3), (3, 2)], lengths, max_tokens=12)
    # turns 2 and 1 fit, 0 does not; the newest turn 3 is cut to 12; after 2, the older 3 does not fit
    assert layout.mask.sum(axis=1).tolist() == [11, 12, 12, 4]
    assert layout.turns[0, layout.mask[0]].tolist() == [2] * 7 + [1] * 4  # oldest first, 1 = newest
    assert layout.positions[1, :12].tolist() == list(range(12))


def test_the_cache_appends_reuses_and_repairs_an_interrupted_write(
    parts: tuple[CrossRuberNet, Any], tmp_path: Path
) -> None:
    net, tokenizer = parts
    tokens = tokenize_texts(tokenizer, TEXTS, max_tokens=16)
    cache = LowerStateCache(tmp_path, key="test", dimension=net.dimension)
    table, encoded = cache.table(
        net, TEXTS[:2], tokenize_texts(tokenizer, TEXTS[:2], max_tokens=16), device="cpu"
    )
    assert encoded == 2
    table, encoded = cache.table(net, TEXTS, tokens, device="cpu")
    assert encoded == 1  # only the new text
    memory = encode_states(net, tokens, device="cpu")
    for row in range(3):
        cached = table.states[table.offsets[row] : table.offsets[row] + table.lengths[row]]
        fresh = memory.states[memory.offsets[row] : memory.offsets[row] + memory.lengths[row]]
        assert np.array_equal(cached, fresh)
    with (tmp_path / "test" / "states.f16").open("ab") as handle:  # rows written after the index
        handle.write(b"\0" * 768 * 3)
    table, encoded = cache.table(
        net, list(reversed(TEXTS)), tokenize_texts(tokenizer, TEXTS[::-1], max_tokens=16), device="cpu"
    )
    assert encoded == 0
    assert table.lengths.tolist() == tokens.lengths.tolist()[::-1]
    assert len(json.loads((tmp_path / "test" / "index.json").read_text())["texts"]) == 3


def test_k0_fine_tunes_the_whole_encoder_without_a_cache(tmp_path: Path) -> None:
    config = CrossRuberConfig(
        **{**TINY.__dict__, "frozen_layers": 0, "epochs": 1, "cache": False, "validation_examples": 8}
    )
    artifact = train_tiny(tmp_path / "model", config=config, count=6)
    weights = torch.load(tmp_path / "model" / "weights.pt", weights_only=True)
    assert any(name.startswith("embeddings.") for name in weights)
    assert any(name.startswith("upper.0.") for name in weights)
    assert not (tmp_path / "model" / "cache").exists()
    assert json.loads((tmp_path / "model" / "timings.json").read_text())["texts_encoded"] == 0
    assert artifact.config["encoder_trained_layers"].endswith("embeddings trained")
