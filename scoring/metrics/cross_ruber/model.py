"""A loaded Cross-RUBER model and the batch scoring of (hypotheses, contexts, references).

Scoring encodes each distinct text once: every context turn, hypothesis and reference goes through the
embeddings and the frozen lower layers in length-sorted batches (:func:`.token_states.encode_states`);
then each distinct context once through the top layers, with all of its distinct replies
(``reply-reads-context``), in batches of similar context length; then, for the referenced score, each
distinct hypothesis and reference once as a sentence vector.

- unreferenced s_U(c, r) = sigmoid(logit(c, r)): the model's probability that r is the true next turn
  after the context's last ``context_turns`` turns;
- referenced s_R(r, refs) = max over the references of cos(v_r, v_ref) (Gupta et al., 2019, eq. 1): the encoder's
  own mean-pooled sentence vectors (``frozen-cosine``, default), or the fine-tuned top layers' reading
  the text alone (``tuned-cosine``);
- blends: RUBER's eq. 4 normalisation over the scored set and its four blends (``ruber.blends``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.artifacts import (
    CONFIG_FILE,
    ArtifactLoader,
    checked_content_hash,
    model_device,
    read_json,
)
from scoring.metrics.contextual_encoder import MINILM_FILES, MINILM_NAME, minilm_model_path
from scoring.metrics.cross_ruber.artifact import (
    WEIGHTS_FILE,
    CrossRuberArtifact,
    CrossRuberArtifactError,
    cross_ruber_artifact_hash,
)
from scoring.metrics.cross_ruber.config import (
    BLEND_METRICS,
    CROSS_RUBER,
    CROSS_RUBER_REFERENCED,
    CROSS_RUBER_UNREFERENCED,
    FROZEN_COSINE,
    CrossRuberConfig,
)
from scoring.metrics.maude.inputs import TextIndex
from scoring.metrics.ruber.blends import ruber_blends
from scoring.metrics.word_vectors import files_hash

ARTIFACT_FORMAT = 1
SCORE_CONTEXTS = 64  # distinct contexts per top-layer pass when scoring
SCORE_REPLIES = 256  # (context, reply) pairs per top-layer pass when scoring
SENTENCE_BATCH = 256  # texts per sentence-vector pass (referenced score)


@dataclass(frozen=True)
class CrossRuberScores:
    """One value per item: ``unreferenced`` in (0, 1); ``referenced`` a cosine (None for an item without
    references); ``blends`` by metric name (``cross-ruber-min`` ...; None where s_R is)."""

    unreferenced: list[float]
    referenced: list[float | None]
    blends: dict[str, list[float | None]]

    def by_metric(self) -> dict[str, list[float | None]]:
        """Every Cross-RUBER metric's values by name (config.METRIC_NAMES)."""
        return {
            CROSS_RUBER_UNREFERENCED: list(self.unreferenced),
            CROSS_RUBER_REFERENCED: list(self.referenced),
            **{name: list(values) for name, values in self.blends.items()},
        }


def encoder_identity() -> dict[str, Any]:
    """The installed MiniLM's name, content hash (its weight and tokenizer files), size and layers."""
    return {"name": MINILM_NAME, "content_hash": _minilm_hash(), "dimension": 384, "layers": 6}


@functools.cache
def _minilm_hash() -> str:
    folder = minilm_model_path()
    return files_hash([folder / name for name in MINILM_FILES])


def build_network(config: CrossRuberConfig, *, device: Any) -> tuple[Any, Any]:
    """(a fresh network over the installed MiniLM's weights, on ``device``; its tokenizer)."""
    from scoring.metrics.cross_ruber.network import CrossRuberNet, load_bert, load_tokenizer

    path = str(minilm_model_path())
    net = CrossRuberNet(
        load_bert(path),
        frozen_layers=config.frozen_layers,
        max_turns=config.context_turns,
        head_hidden=config.head_hidden,
        dropout=config.dropout,
        interaction=config.interaction,
    )
    return net.to(device), load_tokenizer(path)


def state_source(
    net: Any,
    tokenizer: Any,
    texts: Sequence[str],
    config: CrossRuberConfig,
    *,
    device: Any,
    cache_dir: Path | None,
    on_batch: Callable[[int, int], None] | None = None,
    progress: bool = False,
) -> tuple[Any, int]:
    """(where the lower states of ``texts`` come from, how many texts were encoded now): the cache in
    ``cache_dir`` (k > 0), an in-memory table (k > 0, no cache), or the live encoder (k = 0)."""
    from tqdm import tqdm

    from scoring.metrics.cross_ruber.batches import LiveSource, TableSource
    from scoring.metrics.cross_ruber.token_states import LowerStateCache, encode_states, tokenize_texts

    tokens = tokenize_texts(tokenizer, texts, max_tokens=config.max_utterance_tokens)
    if config.frozen_layers == 0:
        return LiveSource(net, tokens), 0
    bar = tqdm(desc="encoding texts (frozen layers)", unit="text", disable=not progress)

    def encoded(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()
        if on_batch is not None:
            on_batch(done, total)

    try:
        if cache_dir is None:
            done = 0

            def counted(count: int) -> None:
                nonlocal done
                done += count
                encoded(done, len(texts))

            return TableSource(encode_states(net, tokens, device=device, on_batch=counted)), len(texts)
        cache = LowerStateCache(cache_dir, key=cache_key(config), dimension=net.dimension)
        table, count = cache.table(net, texts, tokens, device=device, on_batch=encoded)
        return TableSource(table), count
    finally:
        bar.close()


def cache_key(config: CrossRuberConfig) -> str:
    """The cache folder of one (encoder, frozen layers, word-piece limit): states differ between them."""
    return f"{MINILM_NAME}-{_minilm_hash()[:16]}-k{config.frozen_layers}-t{config.max_utterance_tokens}"


class CrossRuberModel:
    """A loaded artifact: batch scoring of raw text (module docstring)."""

    def __init__(
        self, *, path: Path, config: dict[str, Any], net: Any, tokenizer: Any, device: Any, content_hash: str
    ) -> None:
        self.path = path
        self.config = config
        self.net = net
        self.tokenizer = tokenizer
        self.device = device
        self.content_hash = content_hash
        self.context_turns = int(config["context_turns"])
        self.max_utterance_tokens = int(config["max_utterance_tokens"])
        self.max_context_tokens = int(config["max_context_tokens"])
        self.referenced_kind = str(config["referenced"])
        self.language = str(config.get("language", "en"))

    @property
    def artifact_hash(self) -> str:
        return self.content_hash

    def scores(
        self,
        hypotheses: Sequence[str],
        contexts: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]] | None = None,
        *,
        on_batch: Callable[[str, int, int], None] | None = None,
    ) -> CrossRuberScores:
        """Every score of every item. ``contexts[i]``: item i's turns, oldest first (the last
        ``context_turns`` are read; an empty context reads as one empty turn); ``references[i]``: every
        reference of item i (None or empty lists: no referenced score). ``on_batch(stage, done, total)``
        is called between passes (stages "encoding", "contexts", "references"): a caller's heartbeat."""
        import torch

        from scoring.metrics.cross_ruber.batches import TableSource
        from scoring.metrics.cross_ruber.token_states import encode_states, tokenize_texts

        if len(contexts) != len(hypotheses) or (
            references is not None and len(references) != len(hypotheses)
        ):
            raise ValueError(
                f"{len(hypotheses)} hypotheses, {len(contexts)} contexts and "
                f"{'no' if references is None else len(references)} reference lists: one of each per item"
            )
        if not hypotheses:
            return CrossRuberScores([], [], {name: [] for name in BLEND_METRICS})
        references = references if references is not None else [[] for _ in hypotheses]
        index = TextIndex()
        context_rows = [
            tuple(index.row(turn) for turn in (list(context)[-self.context_turns :] or [""]))
            for context in contexts
        ]
        reply_rows = np.array([index.row(text) for text in hypotheses], dtype=np.int64)
        reference_rows = [[index.row(text) for text in refs] for refs in references]
        tokens = tokenize_texts(self.tokenizer, index.texts, max_tokens=self.max_utterance_tokens)
        done = 0

        def encoded(count: int) -> None:
            nonlocal done
            done += count
            if on_batch is not None:
                on_batch("encoding", done, len(index.texts))

        with torch.inference_mode():
            table = encode_states(self.net, tokens, device=self.device, on_batch=encoded)
            unreferenced = self._unreferenced(TableSource(table), context_rows, reply_rows, on_batch)
            referenced = self._referenced(table, reply_rows, reference_rows, on_batch)
        return CrossRuberScores(
            unreferenced=unreferenced,
            referenced=referenced,
            blends={
                f"{CROSS_RUBER}-{method}": values
                for method, values in ruber_blends(referenced, list(unreferenced)).items()
            },
        )

    def unreferenced(self, contexts: Sequence[Sequence[str]], replies: Sequence[str]) -> list[float]:
        return self.scores(replies, contexts).unreferenced

    def referenced(self, replies: Sequence[str], references: Sequence[Sequence[str]]) -> list[float | None]:
        return self.scores(replies, [[] for _ in replies], references).referenced

    def _unreferenced(
        self,
        source: Any,
        context_rows: Sequence[tuple[int, ...]],
        reply_rows: NDArray[np.int64],
        on_batch: Callable[[str, int, int], None] | None,
    ) -> list[float]:
        import torch

        from scoring.metrics.cross_ruber.batches import context_layout, reply_layout, reply_logits

        lengths = source.table.lengths
        distinct_contexts: dict[tuple[int, ...], int] = {}
        pairs: dict[tuple[int, int], int] = {}
        item_pair = np.empty(len(reply_rows), dtype=np.int64)
        for item, (context, reply) in enumerate(zip(context_rows, reply_rows.tolist(), strict=True)):
            owner = distinct_contexts.setdefault(context, len(distinct_contexts))
            item_pair[item] = pairs.setdefault((owner, reply), len(pairs))
        contexts = list(distinct_contexts)
        replies_of: list[list[tuple[int, int]]] = [[] for _ in contexts]  # (pair, reply row)
        for (owner, reply), pair in pairs.items():
            replies_of[owner].append((pair, reply))
        size = np.array([sum(int(lengths[row]) for row in context) for context in contexts])
        order = np.argsort(size, kind="stable")
        values = np.zeros(len(pairs), dtype=np.float64)
        chunk: list[int] = []
        chunk_pairs = 0
        done = 0

        def flush() -> None:
            nonlocal done
            owners = np.array(
                [position for position, owner in enumerate(chunk) for _ in replies_of[owner]], dtype=np.int64
            )
            chosen = [item for owner in chunk for item in replies_of[owner]]
            layout = context_layout(
                [contexts[owner] for owner in chunk], lengths, max_tokens=self.max_context_tokens
            )
            replies = reply_layout(np.array([reply for _, reply in chosen], dtype=np.int64), lengths)
            logits = reply_logits(self.net, source, layout, replies, owners, self.device)
            values[[pair for pair, _ in chosen]] = torch.sigmoid(logits).cpu().numpy()
            done += len(chosen)
            if on_batch is not None:
                on_batch("contexts", done, len(pairs))

        for owner in order.tolist():
            if chunk and (
                len(chunk) >= SCORE_CONTEXTS or chunk_pairs + len(replies_of[owner]) > SCORE_REPLIES
            ):
                flush()
                chunk, chunk_pairs = [], 0
            chunk.append(owner)
            chunk_pairs += len(replies_of[owner])
        if chunk:
            flush()
        return [float(values[pair]) for pair in item_pair]

    def _referenced(
        self,
        table: Any,
        reply_rows: NDArray[np.int64],
        reference_rows: Sequence[Sequence[int]],
        on_batch: Callable[[str, int, int], None] | None,
    ) -> list[float | None]:
        import torch

        from scoring.metrics.cross_ruber.batches import TableSource, reply_layout

        needed = (
            sorted({*reply_rows.tolist(), *(row for rows in reference_rows for row in rows)})
            if any(reference_rows)
            else []
        )
        if not needed:
            return [None] * len(reply_rows)
        source = TableSource(table)
        order = sorted(needed, key=lambda row: int(table.lengths[row]))
        vectors: dict[int, NDArray[np.float64]] = {}
        for start in range(0, len(order), SENTENCE_BATCH):
            rows = np.array(order[start : start + SENTENCE_BATCH], dtype=np.int64)
            layout = reply_layout(rows, table.lengths)
            (states,) = source.states([layout], self.device)
            mask = torch.from_numpy(layout.mask).to(self.device)
            found = self.net.sentence_vectors(states, mask, pretrained=self.referenced_kind == FROZEN_COSINE)
            found = torch.nn.functional.normalize(found.float(), dim=-1).cpu().numpy().astype(np.float64)
            vectors.update(zip(rows.tolist(), found, strict=True))
            if on_batch is not None:
                on_batch("references", min(start + SENTENCE_BATCH, len(order)), len(order))
        return [
            max(float(vectors[reply] @ vectors[row]) for row in rows) if rows else None
            for reply, rows in zip(reply_rows.tolist(), reference_rows, strict=True)
        ]

    def __repr__(self) -> str:
        return f"CrossRuberModel(path={str(self.path)!r}, hash={self.content_hash[:12]})"


def cross_ruber_scores(
    hypotheses: Sequence[str],
    contexts: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]] | None,
    artifact: Path | str,
    *,
    device: str | None = None,
    on_batch: Callable[[str, int, int], None] | None = None,
) -> CrossRuberScores:
    """Every Cross-RUBER score of each item with the artifact in ``artifact`` (loaded once per process):
    ``contexts[i]`` item i's turns (oldest first), ``references[i]`` its references (None: none)."""
    return load_cross_ruber(artifact, device=device).scores(
        hypotheses, contexts, references, on_batch=on_batch
    )


def _load_uncached(path: Path, device_name: str | None, _encoder: Any) -> CrossRuberModel:
    import torch

    content_hash = checked_content_hash(
        path, content_hash=cross_ruber_artifact_hash, error=CrossRuberArtifactError
    )
    config = read_json(path / CONFIG_FILE)
    if config.get("format") != ARTIFACT_FORMAT or config.get("metric") != CROSS_RUBER:
        raise CrossRuberArtifactError(f"{path}: not a Cross-RUBER artifact of format {ARTIFACT_FORMAT}")
    recorded, installed = config.get("encoder") or {}, encoder_identity()
    if recorded.get("name") != installed["name"] or recorded.get("content_hash") != installed["content_hash"]:
        raise CrossRuberArtifactError(
            f"{path}: trained on encoder {recorded.get('name')!r} with content hash {recorded.get('content_hash')}, "
            f"but the installed {installed['name']} has {installed['content_hash']}; scores would not be the model's"
        )
    device = model_device(device_name)
    settings = {name: config[name] for name in CrossRuberConfig.__dataclass_fields__ if name in config}
    settings["negatives"] = tuple(settings.get("negatives", ()))
    settings["syntactic_kinds"] = tuple(settings.get("syntactic_kinds", ()))
    net, tokenizer = build_network(CrossRuberConfig(**settings), device=torch.device("cpu"))
    net.load_trained_state(torch.load(path / WEIGHTS_FILE, map_location="cpu", weights_only=True))
    return CrossRuberModel(
        path=path,
        config=config,
        net=net.to(device).eval(),
        tokenizer=tokenizer,
        device=device,
        content_hash=content_hash,
    )


# Loaded once per process per (resolved path, device): the files are re-hashed and must match hash.txt,
# and the installed encoder must be the one trained on.
CROSS_RUBER_LOADER: ArtifactLoader[CrossRuberArtifact, CrossRuberModel] = ArtifactLoader(
    CrossRuberArtifact, _load_uncached
)
load_cross_ruber = CROSS_RUBER_LOADER.load
clear_cross_ruber_cache = CROSS_RUBER_LOADER.clear
