"""The MiniLM contextual encoder BERT-RUBER uses (Ghazarian et al., 2019, section 2.1.1): offline loading, token
vectors without special tokens or padding, order after length sorting, and the pooling helpers."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.metrics.contextual_encoder import (
    MINILM_DIMENSION,
    MINILM_NAME,
    ContextualEncoder,
    device_settings,
    max_pool,
    mean_pool,
    minilm_artifact_hash,
    minilm_encoder,
)
from scoring.metrics.token_cache import TOKEN_CACHE

pytest.importorskip("transformers")

LONG = (
    "well , i have been thinking about the trip we planned for next summer and i am not sure that the "
    "hotel near the station is the best choice , because the reviews say it is noisy at night and the "
    "rooms are small , so maybe we should look for something closer to the beach instead ."
)


@pytest.fixture(scope="module")
def encoder() -> ContextualEncoder:
    return minilm_encoder(device="cpu")


@pytest.fixture(autouse=True)
def _no_token_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about what the model computes: every call encodes (scoring/metrics/token_cache.py
    would hand a sentence's first vectors to the later calls)."""
    monkeypatch.setattr(TOKEN_CACHE, "max_bytes", 0)
    TOKEN_CACHE.clear()


def test_loads_offline_with_384_dimensions(
    encoder: ContextualEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    [vectors] = encoder.encode_tokens(["How are you today ?"])
    assert encoder.name == MINILM_NAME
    assert encoder.dimension == MINILM_DIMENSION == 384
    assert vectors.dtype == np.float32
    assert vectors.shape[1] == 384


def test_token_vectors_exclude_cls_and_sep(encoder: ContextualEncoder) -> None:
    from transformers import AutoTokenizer

    from scoring.metrics.contextual_encoder import minilm_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_model_path()), local_files_only=True)
    sentence = "I want to buy a gift for my mom !"
    pieces = tokenizer.tokenize(sentence)  # word pieces, no special tokens
    [vectors] = encoder.encode_tokens([sentence])
    assert vectors.shape == (len(pieces), 384)
    # the same vectors as a direct model call, rows 1..n (dropping [CLS] at 0 and [SEP] at n+1)
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(minilm_model_path()), local_files_only=True).eval()
    with torch.inference_mode():
        hidden = model(**tokenizer([sentence], return_tensors="pt")).last_hidden_state[0].numpy()
    assert hidden.shape[0] == len(pieces) + 2
    np.testing.assert_allclose(vectors, hidden[1:-1], atol=1e-5)


def test_padding_does_not_change_vectors(encoder: ContextualEncoder) -> None:
    short = "Sure , see you tomorrow ."
    [alone] = encoder.encode_tokens([short])
    together = encoder.encode_tokens([LONG, short, LONG + " really ."])
    assert together[1].shape == alone.shape
    np.testing.assert_allclose(together[1], alone, atol=1e-5)


def test_order_is_restored_after_length_sorting() -> None:
    sentences = [LONG, "Hi .", "What time does the train leave ?", "Ok .", LONG[:80], "Thanks a lot !"]
    sorted_encoder = minilm_encoder(device="cpu", batch_size=2, length_sorted=True)
    unsorted_encoder = minilm_encoder(device="cpu", batch_size=1, length_sorted=False)
    batched = sorted_encoder.encode_tokens(sentences)
    one_by_one = unsorted_encoder.encode_tokens(sentences)
    assert len(batched) == len(sentences)
    for got, expected in zip(batched, one_by_one, strict=True):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=1e-5)
    # sentences of different lengths really have different numbers of token vectors
    assert batched[0].shape[0] > batched[2].shape[0] > batched[1].shape[0]


def test_deterministic(encoder: ContextualEncoder) -> None:
    sentences = ["The taxi drivers are on strike again .", "What for ?"]
    first = encoder.encode_tokens(sentences)
    second = encoder.encode_tokens(sentences)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_empty_sentence_and_empty_batch(encoder: ContextualEncoder) -> None:
    assert encoder.encode_tokens([]) == []
    [vectors] = encoder.encode_tokens([""])
    assert vectors.shape == (0, 384)


def test_truncation_at_max_length() -> None:
    short_encoder = minilm_encoder(device="cpu", max_length=10)
    [vectors] = short_encoder.encode_tokens([LONG])
    assert vectors.shape == (8, 384)  # 10 word pieces minus [CLS] and [SEP]


def test_content_hash_matches_the_installed_record(encoder: ContextualEncoder) -> None:
    assert len(encoder.content_hash) == 64
    assert encoder.content_hash == minilm_artifact_hash()


def test_mean_and_max_pool_by_hand() -> None:
    tokens = np.array([[1.0, -2.0, 0.0], [3.0, 4.0, -1.0]])
    assert mean_pool(tokens).tolist() == [2.0, 1.0, -0.5]
    assert max_pool(tokens).tolist() == [3.0, 4.0, 0.0]
    with pytest.raises(ValueError, match="non-empty"):
        mean_pool(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="non-empty"):
        max_pool(np.zeros(3))


@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_settings_autocast_the_encoder_to_bf16_with_large_batches(device: str) -> None:
    settings = device_settings(device)
    assert settings.is_cuda
    assert settings.encoder_autocast_dtype == "bfloat16"
    assert 256 <= settings.encoder_batch_size <= 4096
    assert settings.scorer_batch_size > 256
    assert settings.scorer_autocast_dtype is None  # the heads stay float32 (see DeviceSettings)
    # a GPU without bfloat16 (before Ampere) keeps float32 and the large batches
    older = device_settings(device, bf16_supported=False)
    assert older.encoder_autocast_dtype is None
    assert older.encoder_batch_size == settings.encoder_batch_size


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_other_devices_keep_float32_and_the_cpu_batches(device: str) -> None:
    settings = device_settings(device)
    assert not settings.is_cuda
    assert (settings.encoder_autocast_dtype, settings.scorer_autocast_dtype) == (None, None)
    assert (settings.encoder_batch_size, settings.scorer_batch_size) == (64, 256)


def test_a_cpu_encoder_takes_the_cpu_settings_unless_given() -> None:
    encoder = minilm_encoder(device="cpu")
    assert (encoder.batch_size, encoder.autocast_dtype) == (64, None)
    assert minilm_encoder(device="cpu", batch_size=8).batch_size == 8
    assert minilm_encoder(device="cpu", autocast=True).autocast_dtype is None  # never on the CPU
    assert minilm_encoder(device="cuda", autocast=False).autocast_dtype is None
    with pytest.raises(ValueError, match="batch_size"):
        minilm_encoder(device="cpu", batch_size=0)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU (bench/gpu_bert_ruber.py runs on one)")
def test_cuda_bf16_token_vectors_agree_with_cpu_float32(encoder: ContextualEncoder) -> None:
    sentences = [LONG, "Hi .", "What time does the train leave ?", "", "Thanks a lot !"] * 3
    gpu = minilm_encoder(device="cuda")
    assert (gpu.batch_size, gpu.autocast_dtype) == (device_settings("cuda").encoder_batch_size, "bfloat16")
    for got, expected in zip(gpu.encode_tokens(sentences), encoder.encode_tokens(sentences), strict=True):
        assert got.dtype == np.float32
        assert got.shape == expected.shape
        if len(expected):
            mean_got, mean_expected = got.mean(axis=0), expected.mean(axis=0)
            cosine = mean_got @ mean_expected / np.linalg.norm(mean_got) / np.linalg.norm(mean_expected)
            assert cosine > 0.995
    fp32 = minilm_encoder(device="cuda", autocast=False).encode_tokens(sentences[:5])
    for got, expected in zip(fp32, encoder.encode_tokens(sentences[:5]), strict=True):
        np.testing.assert_allclose(got, expected, atol=2e-3)


def test_loading_minilm_draws_no_progress_bar_and_leaves_the_bars_as_they_were(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``study_report`` (and ``score_study``) printed transformers' "Loading weights" bars."""
    from transformers.utils import logging as transformers_logging

    from scoring.metrics.contextual_encoder import _load, minilm_model_path

    assert transformers_logging.is_progress_bar_enabled()
    _load.__wrapped__(str(minilm_model_path()), "cpu")  # a fresh load, past the per-process cache
    assert "Loading weights" not in capfd.readouterr().err
    assert transformers_logging.is_progress_bar_enabled()
