"""Training RUBER on query-reply pairs (seed 000, sections 3.1-3.2 and 4.1): word2vec, then s_U.

1. word2vec (gensim) on the corpus's utterances, tokenized (section 4.1; 50 dimensions by default).
2. s_U (:mod:`.unreferenced_model`) by negative sampling: for every pair (q, r) of a shuffled epoch, a
   reply r- of another random training pair; loss J = max(0, margin - s_U(q, r) + s_U(q, r-)) (eq. 3),
   averaged over a mini-batch; Adam over all parameters, embeddings included.
3. Early stopping on the validation pairs' ranking accuracy (fixed, seeded negatives): training stops
   after ``patience`` epochs without improvement and the best epoch's weights are kept.

Choices the paper leaves open (documented in ``config.json``): margin 0.5, GRU hidden size 128 per
direction, MLP hidden 128, Adam learning rate 1e-3, batch 128, sentences truncated to 40 tokens. The
paper trains on 1.4M Douban pairs; these sizes keep training on DailyDialog's 76k pairs within minutes
on a CPU.

Determinism: fixed seeds (Python, torch, gensim with one worker). On CUDA, GRU kernels may differ in the
last bits between runs.
"""

from __future__ import annotations

import dataclasses
import platform
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.metrics.ruber.artifact import (
    CONFIG_FILE,
    CURVE_FILE,
    HASH_FILE,
    TIMINGS_FILE,
    VECTORS_FILE,
    VOCABULARY_FILE,
    WEIGHTS_FILE,
    RuberArtifact,
    artifact_hash,
    write_json,
)
from scoring.metrics.ruber.corpus import CorpusError, QueryReplyPair, utterances
from scoring.metrics.ruber.ranking import negative_indices
from scoring.metrics.ruber.word2vec import Word2VecConfig, train_word2vec
from scoring.metrics.tokenize import tokenize, tokenizer_name

ARTIFACT_FORMAT = 1


@dataclass(frozen=True)
class RuberConfig:
    word2vec: Word2VecConfig = field(default_factory=Word2VecConfig)
    hidden_size: int = 128
    mlp_hidden: int = 128
    margin: float = 0.5  # Δ of eq. 3; the paper does not give its value
    learning_rate: float = 1e-3
    batch_size: int = 128
    max_length: int = 40
    epochs: int = 10
    patience: int = 2
    seed: int = 0
    language: str = "en"
    device: str | None = None  # None: CUDA when available, else CPU
    corpus_description: str = ""


def train_ruber(
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    config: RuberConfig,
    output_dir: Path,
    progress: bool = True,
) -> RuberArtifact:
    """Train word2vec and s_U on ``pairs``, stop early on ``validation_pairs``, save to ``output_dir``."""
    import numpy as np
    import torch
    from tqdm import tqdm

    from scoring.metrics.ruber.unreferenced_model import UnreferencedScorer, pad_batch, score_pairs, token_ids

    if len(pairs) < 2:
        raise CorpusError(f"{len(pairs)} training pairs; training needs at least 2")
    if len(validation_pairs) < 2:
        raise CorpusError(f"{len(validation_pairs)} validation pairs; early stopping needs at least 2")
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, Any] = {}
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))

    started = time.perf_counter()
    sentences = [tokenize(text, config.language) for text in utterances(pairs)]
    vectors = train_word2vec(sentences, config=config.word2vec, seed=config.seed)
    if len(vectors) == 0:
        raise CorpusError(
            f"no word occurs {config.word2vec.min_count} times in the corpus; word2vec is empty"
        )
    timings["word2vec_seconds"] = round(time.perf_counter() - started, 3)

    def encode(texts: Sequence[str]) -> list[list[int]]:
        return [
            token_ids(tokenize(text, config.language), vectors.vocabulary, max_length=config.max_length)
            for text in texts
        ]

    train_queries = encode([pair.query for pair in pairs])
    train_replies = encode([pair.reply for pair in pairs])
    valid_queries = encode([pair.query for pair in validation_pairs])
    valid_replies = encode([pair.reply for pair in validation_pairs])
    valid_negatives = [valid_replies[j] for j in negative_indices(len(validation_pairs), seed=config.seed)]

    model = UnreferencedScorer(
        vocabulary_size=len(vectors),
        embedding_dim=vectors.dimension,
        hidden_size=config.hidden_size,
        mlp_hidden=config.mlp_hidden,
    )
    model.initialise_embeddings(vectors.matrix)
    model.to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(config.seed)

    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    best_accuracy = -1.0
    best_state: dict[str, Any] = {}
    stale = 0
    count = len(pairs)
    for epoch in range(1, config.epochs + 1):
        epoch_started = time.perf_counter()
        model.train()
        order = torch.randperm(count, generator=generator).tolist()
        # r-: the reply of another pair (offset 1..n-1, so never the pair's own)
        offsets = torch.randint(1, count, (count,), generator=generator).tolist()
        total, batches = 0.0, 0
        bar = tqdm(
            range(0, count, config.batch_size), desc=f"s_U epoch {epoch}", disable=not progress, leave=False
        )
        for start in bar:
            batch = order[start : start + config.batch_size]
            q_ids, q_lengths = pad_batch([train_queries[i] for i in batch], device)
            r_ids, r_lengths = pad_batch([train_replies[i] for i in batch], device)
            n_ids, n_lengths = pad_batch([train_replies[(i + offsets[i]) % count] for i in batch], device)
            query = model.encode_query(q_ids, q_lengths)
            positive = model.match(query, model.encode_reply(r_ids, r_lengths))
            negative = model.match(query, model.encode_reply(n_ids, n_lengths))
            loss = torch.clamp(config.margin - positive + negative, min=0.0).mean()  # eq. 3
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.item())
            batches += 1
            bar.set_postfix(loss=f"{total / batches:.4f}")
        bar.close()
        true_scores = score_pairs(model, valid_queries, valid_replies, device=device)
        false_scores = score_pairs(model, valid_queries, valid_negatives, device=device)
        accuracy = sum(t > f for t, f in zip(true_scores, false_scores, strict=True)) / len(true_scores)
        valid_loss = sum(
            max(0.0, config.margin - t + f) for t, f in zip(true_scores, false_scores, strict=True)
        ) / len(true_scores)
        curve.append(
            {
                "epoch": epoch,
                "train_loss": round(total / batches, 6),
                "validation_accuracy": round(accuracy, 6),
                "validation_loss": round(valid_loss, 6),
            }
        )
        epoch_seconds.append(round(time.perf_counter() - epoch_started, 3))
        if progress:
            tqdm.write(f"epoch {epoch}: train loss {total / batches:.4f}, validation accuracy {accuracy:.4f}")
        if accuracy > best_accuracy:
            best_accuracy, stale = accuracy, 0
            best_state = {name: tensor.detach().cpu().clone() for name, tensor in model.state_dict().items()}
        else:
            stale += 1
            if stale >= config.patience:
                break
    timings["epoch_seconds"] = epoch_seconds
    timings["total_seconds"] = round(time.perf_counter() - started, 3)
    timings["device"] = str(device)

    settings = _config_json(config, pairs, validation_pairs, vocabulary_size=len(vectors))
    settings["best_epoch"] = max(curve, key=lambda row: row["validation_accuracy"])["epoch"]
    write_json(output_dir / CONFIG_FILE, settings)
    write_json(output_dir / VOCABULARY_FILE, list(vectors.vocabulary))
    np.save(output_dir / VECTORS_FILE, np.asarray(vectors.matrix, dtype="<f4"))
    torch.save(best_state, output_dir / WEIGHTS_FILE)
    write_json(output_dir / CURVE_FILE, curve)
    write_json(output_dir / TIMINGS_FILE, timings)
    content_hash = artifact_hash(output_dir)
    (output_dir / HASH_FILE).write_text(content_hash + "\n", encoding="utf-8")
    return RuberArtifact(path=output_dir, content_hash=content_hash, config=settings, curve=curve)


def _config_json(
    config: RuberConfig,
    pairs: Sequence[QueryReplyPair],
    validation_pairs: Sequence[QueryReplyPair],
    *,
    vocabulary_size: int,
) -> dict[str, Any]:
    import hashlib

    import gensim
    import numpy as np
    import torch

    def fingerprint(items: Sequence[QueryReplyPair]) -> str:
        digest = hashlib.sha256()
        for pair in items:
            digest.update(f"{pair.query}\t{pair.reply}\n".encode())
        return digest.hexdigest()

    settings = dataclasses.asdict(config)
    settings.pop("device")  # where it ran is in timings.json; it does not change what the model is
    settings.update(
        {
            "format": ARTIFACT_FORMAT,
            "metric": "ruber",
            "paper": "Tao et al. 2018, RUBER, sections 3.1-3.3",
            "tokenizer": tokenizer_name(config.language),
            "vocabulary_size": vocabulary_size,
            "corpus": {
                "description": config.corpus_description,
                "training_pairs": len(pairs),
                "validation_pairs": len(validation_pairs),
                "training_sha256": fingerprint(pairs),
                "validation_sha256": fingerprint(validation_pairs),
            },
            "versions": {
                "python": platform.python_version(),
                "torch": torch.__version__,
                "gensim": gensim.__version__,
                "numpy": np.__version__,
            },
        }
    )
    return settings
