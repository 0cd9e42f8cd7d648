"""The in-process backend: a causal language model that transformers loads from a folder or a GGUF file.

One forward pass per item, no generation: the probability of each label is read from the next-token
distribution after the prompt (:mod:`.scale`). Every item of a question shares the prompt's beginning (the
system message, the instructions, the question and its scale, up to the first per-item placeholder); with
``prefix_cache`` on, that prefix is encoded once and its keys and values are given to every batch
(``cache``), so an item costs only its own tokens. The prefix and the item's part are tokenized
separately in both modes, so the cache changes the arithmetic's order, not the tokens: the two agree to
float rounding (tests check 1e-5).

A GGUF file (quantised weights) is de-quantised to float32 by transformers with the ``gguf`` package; its
content hash is the file's sha256. A folder's is the sha256 over its files' names and digests. Nothing is
fetched from a model hub (``local_files_only``).

Reading a GGUF file is slow (about 16 s for the 135M default: transformers parses the file's metadata three
times, once each for the tokenizer, the configuration and the weights, then de-quantises). With
``converted_dir``, the first process to load a GGUF file writes what it loaded (tokenizer, configuration,
float32 weights as safetensors) to ``converted_dir/<sha256 of the file>/``, and every later load reads that
folder instead (2.5 s; the weights are the same tensors, bit for bit, at 4 bytes a parameter of disk;
bench/llm_model_load.py). The folder is written under a temporary name and renamed when complete, so a load
never reads half a copy; a copy that cannot be written (a full disk) is skipped with a warning, and the
model loaded from the file is used; a copy that does not load (damaged since) is removed with a warning and
written again from the file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from scoring.metrics.file_hashes import file_sha256

DEFAULT_BATCH_SIZE = 8
_LOCK = threading.Lock()
STALE_PARTIAL_SECONDS = 3600  # a temporary copy this old was left by a process that died while writing it

logger = logging.getLogger(__name__)


class LocalModelError(ValueError):
    """A model path that is not a GGUF file or a transformers folder, or that fails to load."""


@dataclass(frozen=True)
class PromptParts:
    """An item's prompt as the model reads it: ``prefix`` shared by every item of the call, ``own`` its own
    part (formatted with the model's chat template, the answer prefix at the end)."""

    prefix: str
    own: str


@lru_cache(maxsize=16)
def _content_hash(path: str, size: int, mtime_ns: int) -> str:
    target = Path(path)
    if target.is_file():
        return file_sha256(target)
    lines = [
        f"{file.relative_to(target).as_posix()} {file_sha256(file)}"
        for file in sorted(target.rglob("*"))
        if file.is_file()
    ]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def model_content_hash(path: Path) -> str:
    """sha256 of a GGUF file, or over the ``"<relative name> <sha256>"`` lines of a folder's files; cached per
    path, size and modification time."""
    stat = path.stat()
    return _content_hash(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


class LocalJudgeModel:
    """A causal LM loaded once per process (:func:`local_judge_model`), reading label probabilities."""

    def __init__(self, path: Path, *, device: str = "cpu", converted_dir: Path | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.content_hash = model_content_hash(path)
        is_gguf = path.is_file() and path.suffix.lower() == ".gguf"
        converted = converted_dir / self.content_hash if (is_gguf and converted_dir is not None) else None
        if is_gguf:
            folder, extra = str(path.parent), {"gguf_file": path.name}
        elif path.is_dir():
            folder, extra = str(path), {}
        else:
            raise LocalModelError(f"{path}: not a GGUF file or a folder of a transformers model")
        loaded = _load_converted(converted) if converted is not None and converted.is_dir() else None
        if loaded is not None and converted is not None:
            self.loaded_from = converted
        else:
            try:
                loaded = (
                    AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra),
                    AutoModelForCausalLM.from_pretrained(
                        folder, local_files_only=True, dtype=torch.float32, **extra
                    ),
                )
            except (OSError, ValueError) as error:
                message = f"{path}: cannot be loaded as a causal language model ({error})"
                raise LocalModelError(message) from error
            self.loaded_from = Path(folder) / extra.get("gguf_file", "")
            if converted is not None:
                _write_converted(loaded[0], loaded[1], converted)
        self.tokenizer: Any = loaded[0]
        model: Any = loaded[1]
        self.model: Any = model.to(device).eval()
        self.device = device
        self.path = path
        self._label_ids: dict[tuple[str, ...], list[list[int]]] = {}

    # --- prompts -------------------------------------------------------------------------------------
    def formatted(self, system: str, user: str, answer_prefix: str) -> str:
        """The prompt as the model reads it: its chat template over the system and user messages with the
        assistant's turn opened, then the answer prefix; without a chat template, the plain messages."""
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            return str(text) + answer_prefix
        return f"{system}\n\n{user}\n\n{answer_prefix}"

    def token_ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False).input_ids)

    def label_token_ids(self, labels: Sequence[str]) -> list[list[int]]:
        """For each label, the vocabulary's tokens that read as it once spaces are stripped."""
        key = tuple(labels)
        if key not in self._label_ids:
            wanted = {label: index for index, label in enumerate(labels)}
            found: list[list[int]] = [[] for _ in labels]
            for token_id in range(len(self.tokenizer)):
                text = str(self.tokenizer.decode([token_id])).strip(" ")
                if text in wanted:
                    found[wanted[text]].append(token_id)
            self._label_ids[key] = found
        return self._label_ids[key]

    # --- reading ---------------------------------------------------------------------------------------
    def label_probabilities(
        self,
        parts: Sequence[PromptParts],
        labels: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        prefix_cache: bool = True,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """``[item, label]``: the next-token probability of each label after each item's prompt (a label's
        tokens summed). Items are batched ``batch_size`` at a time, shortest first (little padding); with
        ``prefix_cache`` each distinct prefix is encoded once."""
        import torch

        label_ids = self.label_token_ids(labels)
        result = np.zeros((len(parts), len(labels)), dtype=np.float64)
        by_prefix: dict[str, list[int]] = {}
        for index, part in enumerate(parts):
            by_prefix.setdefault(part.prefix, []).append(index)
        done = 0
        with torch.inference_mode():
            for prefix, indices in by_prefix.items():
                prefix_ids = self.token_ids(prefix)
                cached = self._encoded_prefix(prefix_ids) if prefix_cache else None
                tokens = {index: self.token_ids(parts[index].own) for index in indices}
                ordered = sorted(indices, key=lambda index: len(tokens[index]))
                for start in range(0, len(ordered), batch_size):
                    batch = ordered[start : start + batch_size]
                    own = [tokens[index] for index in batch]
                    logits = self._last_logits(prefix_ids, own, cached)
                    probabilities = torch.softmax(logits.double(), dim=-1).cpu().numpy()
                    for row, index in enumerate(batch):
                        result[index] = [probabilities[row, ids].sum() for ids in label_ids]
                    done += len(batch)
                    if progress is not None:
                        progress(done)
        return result

    def _encoded_prefix(self, prefix_ids: list[int]) -> Any:
        """The keys and values of every layer after ``prefix_ids`` (None for an empty prefix)."""
        import torch

        if not prefix_ids:
            return None
        ids = torch.tensor([prefix_ids], device=self.device)
        output = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
        return [(layer.keys, layer.values) for layer in output.cache.layers]

    def _last_logits(self, prefix_ids: list[int], own: list[list[int]], cached: Any) -> Any:
        """The next-token logits after each sequence ``prefix_ids + own[i]``. The batch is right-padded (a
        causal model's last real token never sees the padding after it), and the output layer is applied
        only at the positions where some sequence ends (``logits_to_keep``)."""
        import torch
        from transformers import DynamicCache

        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        sequences = own if cached is not None else [prefix_ids + ids for ids in own]
        offset = len(prefix_ids) if cached is not None else 0
        width = max(len(sequence) for sequence in sequences)
        ids = torch.tensor(
            [sequence + [pad] * (width - len(sequence)) for sequence in sequences], device=self.device
        )
        ends = sorted({len(sequence) - 1 for sequence in sequences})
        keep = torch.tensor(ends, device=self.device)
        column = torch.tensor([ends.index(len(sequence) - 1) for sequence in sequences], device=self.device)
        if cached is None:
            logits = self.model(input_ids=ids, use_cache=False, logits_to_keep=keep).logits
        else:
            size = len(own)
            past = DynamicCache(
                [(keys.expand(size, -1, -1, -1), values.expand(size, -1, -1, -1)) for keys, values in cached],
                config=self.model.config,
            )
            positions = torch.arange(offset, offset + width, device=self.device).expand(size, -1)
            logits = self.model(
                input_ids=ids, cache=past, position_ids=positions, use_cache=True, logits_to_keep=keep
            ).logits
        return logits[torch.arange(len(sequences), device=self.device), column]


def _load_converted(folder: Path) -> tuple[Any, Any] | None:
    """(tokenizer, model) from a converted copy, or None, with a warning, when the copy does not load (it is
    then removed, and the file is loaded and copied again)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        return (
            AutoTokenizer.from_pretrained(str(folder), local_files_only=True),
            AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=torch.float32),
        )
    except (OSError, ValueError) as error:
        logger.warning("the converted copy %s does not load (%s); loading the file again", folder, error)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _write_converted(tokenizer: Any, model: Any, target: Path) -> None:
    """Write the model loaded from a GGUF file to ``target`` as a transformers folder (float32 safetensors),
    under a temporary name first; another process that got there first wins. A copy that cannot be written
    is skipped with a warning: the model loaded from the file serves meanwhile."""
    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        for partial in target.parent.glob(f".{target.name}.*"):
            if time.time() - partial.stat().st_mtime > STALE_PARTIAL_SECONDS:
                shutil.rmtree(partial, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        _save_folder(tokenizer, model, staging)
        staging.rename(target)
    except OSError as error:
        if not target.is_dir():
            logger.warning("could not keep a converted copy of the model in %s: %s", target, error)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _save_folder(tokenizer: Any, model: Any, folder: Path) -> None:
    from safetensors.torch import save_model

    config = model.config.__class__.from_dict(model.config.to_dict())
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights are written de-quantised
    config.save_pretrained(folder)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"), metadata={"format": "pt"})


def local_judge_model(
    path: Path, *, device: str = "cpu", converted_dir: Path | None = None
) -> LocalJudgeModel:
    """The model at ``path`` on ``device``, loaded once per process and content (from its converted copy in
    ``converted_dir`` where it is a GGUF file: see the module's docstring)."""
    key = (str(path.resolve()), device, model_content_hash(path))
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = _MODELS[key] = LocalJudgeModel(path, device=device, converted_dir=converted_dir)
        return model


_MODELS: dict[tuple[str, str, str], LocalJudgeModel] = {}
