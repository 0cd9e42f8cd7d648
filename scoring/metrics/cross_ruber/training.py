"""Training Cross-RUBER from dialogs alone, by ranking each context's true reply above its negatives.

1. Examples and candidates (:mod:`.training_data`): every reply of every training dialog with its last
   ``context_turns`` turns; negatives of the kinds in ``config.negatives``.
2. Word pieces of every distinct text, then (k > 0) the frozen lower layers' states of every distinct
   text, computed once, length-sorted, into the memory-mapped cache (:class:`.token_states.LowerStateCache`;
   ``cache_dir``, by default ``<output_dir>/cache``). With k = 0 nothing is cached: every batch runs the
   whole encoder, which trains.
3. Mini-batches of ``batch_size`` contexts x (1 + negatives) candidates through the top layers and the
   head (:mod:`.network`); the objective over each context's candidates (``listwise`` softmax
   cross-entropy, MaUde's ``binary`` NCE, or RUBER's ``margin``); AdamW, the encoder's layers at
   ``encoder_learning_rate`` and the new parts (head, turn embeddings) at ``head_learning_rate``, linear
   warm-up then linear decay over ``epochs``.
4. After each epoch: the same objective and the ranking accuracies on fixed validation candidates; the
   epoch with the lowest validation loss is kept, training stops after ``patience`` epochs without a
   lower one, and ``config.json`` says which epoch was kept.

``on_progress`` hears of the encoding (``stage="encoding"``, texts done of texts to encode), of each
batch and of each epoch (with validation accuracy and loss); raising from it (``TrainingCancelled``) stops
the training: nothing is saved, and the cache keeps the states encoded so far.

The loop is its own, not :func:`scoring.metrics.training_loop.train_scorer`: AdamW over two parameter
groups (encoder and new parts) with a warm-up and decay stepped per batch, gradient clipping, batches
drawn by context length, and the kept weights are the trained parameters only (``net.trained_state()``,
not MiniLM's frozen layers); the shared loop's Adam, one learning rate and per-epoch plateau would change
what it trains. It shares that module's seeding, thread setting and timings, and the artifact helpers of
:mod:`scoring.metrics.artifacts`.
"""

from __future__ import annotations

import dataclasses
import random
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.metrics.artifacts import (
    CONFIG_FILE,
    CURVE_FILE,
    TIMINGS_FILE,
    model_device,
    write_hash,
    write_json,
)
from scoring.metrics.cross_ruber.artifact import (
    CACHE_FOLDER,
    WEIGHTS_FILE,
    CrossRuberArtifact,
    cross_ruber_artifact_hash,
)
from scoring.metrics.cross_ruber.config import (
    BINARY,
    DIALOG,
    ECHO,
    LISTWISE,
    UTTERANCE,
    CrossRuberConfig,
)
from scoring.metrics.cross_ruber.model import ARTIFACT_FORMAT, build_network, encoder_identity, state_source
from scoring.metrics.cross_ruber.training_data import (
    ExampleSet,
    candidate_rows,
    example_set,
    fixed_validation_candidates,
    random_utterances,
)
from scoring.metrics.maude.dialogs import Dialog, dialogs_provenance
from scoring.metrics.maude.inputs import TextIndex
from scoring.metrics.ruber.corpus import CorpusError
from scoring.metrics.training_loop import seconds_since, seed_generators, training_threads
from scoring.metrics.training_progress import (
    BATCH_STAGE,
    ENCODING_STAGE,
    EPOCH_STAGE,
    ProgressCallback,
    TrainingReport,
    report_progress,
)

VALIDATION_BATCH = 64  # contexts per validation forward pass


def train_cross_ruber(
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    *,
    config: CrossRuberConfig,
    output_dir: Path,
    cache_dir: Path | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> CrossRuberArtifact:
    """Train on ``dialogs``, stop early on ``validation_dialogs``, save to ``output_dir``; ``cache_dir``
    holds the frozen layers' token states (default ``output_dir/cache``; share one folder between
    trainings to encode each text once). ``on_progress`` may raise to stop (module docstring)."""

    config = config.checked()
    if config.language != "en":
        raise ValueError(
            f"Cross-RUBER's encoder (all-MiniLM-L6-v2) covers English only, not {config.language!r}"
        )
    with training_threads(config.torch_threads):
        return _train(dialogs, validation_dialogs, config, Path(output_dir), cache_dir, progress, on_progress)


def _train(
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    config: CrossRuberConfig,
    output_dir: Path,
    cache_dir: Path | None,
    progress: bool,
    on_progress: ProgressCallback | None,
) -> CrossRuberArtifact:
    import torch
    from tqdm import tqdm

    started, cpu_started = time.perf_counter(), time.process_time()
    seed_generators(config.seed)
    torch.manual_seed(config.seed)
    device = model_device(config.device)
    if config.max_train_dialogs is not None and config.max_train_dialogs < len(dialogs):
        keep = sorted(random.Random(config.seed).sample(range(len(dialogs)), config.max_train_dialogs))
        dialogs = [dialogs[i] for i in keep]
    index = TextIndex()
    rng = random.Random(config.seed)
    train = example_set(dialogs, index, config, rng)
    valid = example_set(validation_dialogs, index, config, rng, limit=config.validation_examples)
    for name, found in (("training", train), ("validation", valid)):
        if len(set(found.dialogs.tolist())) < 2:
            raise CorpusError(
                f"{name}: {len(set(found.dialogs.tolist()))} dialog(s) with a reply; need at least 2"
            )
    valid_candidates = fixed_validation_candidates(valid, config.negatives, config.seed)
    timings: dict[str, Any] = {"distinct_texts": len(index.texts), "training_examples": len(train)}

    output_dir.mkdir(parents=True, exist_ok=True)
    net, tokenizer = build_network(config, device=device)
    stage = time.perf_counter()

    def encoded(done: int, total: int) -> None:
        report_progress(
            on_progress, TrainingReport(ENCODING_STAGE, epochs=config.epochs, step=done, steps=total)
        )

    source, encoded_now = state_source(
        net,
        tokenizer,
        index.texts,
        config,
        device=device,
        cache_dir=(cache_dir or output_dir / CACHE_FOLDER) if config.cache else None,
        on_batch=encoded,
        progress=progress,
    )
    timings["encoding_seconds"] = seconds_since(stage)
    timings["texts_encoded"] = encoded_now

    curve, best_state, epoch_seconds = _fit(
        net, source, train, valid, valid_candidates, config, device, progress, on_progress, tqdm
    )
    best = min(curve, key=lambda row: row["validation_loss"])
    timings["epoch_seconds"] = epoch_seconds
    timings["total_seconds"] = seconds_since(started)
    timings["cpu_seconds"] = round(time.process_time() - cpu_started, 3)
    timings["torch_threads"] = torch.get_num_threads()
    timings["device"] = str(device)
    timings["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    settings = _config_json(config, dialogs, validation_dialogs, best, len(curve))
    write_json(output_dir / CONFIG_FILE, settings)
    torch.save(best_state, output_dir / WEIGHTS_FILE)
    write_json(output_dir / CURVE_FILE, curve)
    write_json(output_dir / TIMINGS_FILE, timings)
    content_hash = write_hash(output_dir, cross_ruber_artifact_hash)
    return CrossRuberArtifact(path=output_dir, content_hash=content_hash, config=settings, curve=curve)


def _fit(
    net: Any,
    source: Any,
    train: ExampleSet,
    valid: ExampleSet,
    valid_candidates: NDArray[np.int64],
    config: CrossRuberConfig,
    device: Any,
    progress: bool,
    on_progress: ProgressCallback | None,
    tqdm: Any,
) -> tuple[list[dict[str, float]], dict[str, Any], list[float]]:
    """(curve, the kept epoch's trained state, seconds per epoch)."""
    lengths = _lengths(source)
    steps_per_epoch = (len(train) + config.batch_size - 1) // config.batch_size
    optimiser, scheduler = _optimiser(net, config, steps_per_epoch * config.epochs)
    epoch_run = _EpochRun(
        net=net,
        source=source,
        train=train,
        lengths=lengths,
        context_sizes=np.array([sum(int(lengths[row]) for row in context) for context in train.contexts]),
        optimiser=optimiser,
        scheduler=scheduler,
        generator=np.random.default_rng(config.seed),
        config=config,
        device=device,
        steps=steps_per_epoch,
    )
    curve: list[dict[str, float]] = []
    epoch_seconds: list[float] = []
    best_loss, best_state, stale = float("inf"), net.trained_state(), 0
    for epoch in range(1, config.epochs + 1):
        epoch_started = time.perf_counter()
        train_loss = epoch_run.train_epoch(epoch, progress=progress, on_progress=on_progress, tqdm=tqdm)
        row = {"epoch": epoch, "train_loss": round(train_loss, 6)}
        row.update(validation_figures(net, source, valid, valid_candidates, config, device, lengths))
        curve.append(row)
        epoch_seconds.append(seconds_since(epoch_started))
        report_progress(
            on_progress,
            TrainingReport(
                EPOCH_STAGE,
                epoch=epoch,
                epochs=config.epochs,
                step=steps_per_epoch,
                steps=steps_per_epoch,
                loss=row["train_loss"],
                validation_accuracy=row["validation_accuracy"],
                validation_loss=row["validation_loss"],
            ),
        )
        if progress:
            tqdm.write(
                f"cross-ruber epoch {epoch}: train loss {row['train_loss']:.4f}, validation loss "
                f"{row['validation_loss']:.4f}, accuracy {row['validation_accuracy']:.4f} "
                f"({epoch_seconds[-1]:.0f} s)"
            )
        if row["validation_loss"] < best_loss:
            best_loss, stale, best_state = row["validation_loss"], 0, net.trained_state()
        else:
            stale += 1
            if stale >= config.patience:
                break
    return curve, best_state, epoch_seconds


@dataclass
class _EpochRun:
    """What every training epoch of :func:`_fit` uses: the net and its optimiser and schedule, the training
    set with its texts' lengths, and the one numpy generator that draws batches and negatives in order."""

    net: Any
    source: Any
    train: ExampleSet
    lengths: NDArray[np.int64]
    context_sizes: NDArray[np.int64]
    optimiser: Any
    scheduler: Any
    generator: np.random.Generator
    config: CrossRuberConfig
    device: Any
    steps: int  # batches per epoch, as the bar and the reports count them

    def train_epoch(
        self, epoch: int, *, progress: bool, on_progress: ProgressCallback | None, tqdm: Any
    ) -> float:
        """One epoch over length-bucketed batches (a batch of one is skipped); the mean training loss."""
        import torch

        from scoring.metrics.cross_ruber.batches import context_layout, reply_layout, reply_logits

        net, source, train, config, lengths = self.net, self.source, self.train, self.config, self.lengths
        generator = self.generator
        candidates_per_context = 1 + len(config.negatives)
        net.train()
        utterances = (
            random_utterances(train, generator) if set(config.negatives) & {UTTERANCE, DIALOG, ECHO} else None
        )
        batches = length_bucketed_batches(self.context_sizes, config.batch_size, generator)
        summed, count = 0.0, 0
        bar = tqdm(total=self.steps, desc=f"cross-ruber epoch {epoch}", disable=not progress, leave=False)
        for step, batch in enumerate(batches, start=1):
            if len(batch) < 2:
                continue
            rows = candidate_rows(train, batch, config.negatives, generator, utterances=utterances)
            contexts = context_layout(
                [train.contexts[i] for i in batch], lengths, max_tokens=config.max_context_tokens
            )
            replies = reply_layout(rows.reshape(-1), lengths)
            owner = np.repeat(np.arange(len(batch)), candidates_per_context)
            with _autocast(self.device):
                logits = reply_logits(net, source, contexts, replies, owner, self.device)
            logits = logits.view(len(batch), candidates_per_context)
            loss = objective_loss(logits, config.objective, margin=config.margin)
            self.optimiser.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for p in net.parameters() if p.requires_grad], 1.0)
            self.optimiser.step()
            self.scheduler.step()
            summed += float(loss.detach()) * len(batch)
            count += len(batch)
            bar.update(1)
            if progress and step % 50 == 0:
                bar.set_postfix(loss=f"{summed / count:.4f}")
            report_progress(
                on_progress,
                TrainingReport(
                    BATCH_STAGE,
                    epoch=epoch,
                    epochs=config.epochs,
                    step=step,
                    steps=self.steps,
                    loss=summed / count,
                ),
            )
        bar.close()
        return summed / max(count, 1)


def length_bucketed_batches(
    sizes: NDArray[np.int64], batch_size: int, rng: np.random.Generator, *, window: int = 50
) -> list[NDArray[np.int64]]:
    """A shuffled epoch cut into batches of examples of similar context length (``sizes``): the shuffled
    order is taken ``window`` batches at a time, sorted by size there and cut, and the batches shuffled,
    so that a batch pads its contexts little and the order stays random (RUBER's trainer does the same)."""
    order = rng.permutation(len(sizes))
    batches: list[NDArray[np.int64]] = []
    span = batch_size * window
    for start in range(0, len(order), span):
        chunk = order[start : start + span]
        chunk = chunk[np.argsort(sizes[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def validation_figures(
    net: Any,
    source: Any,
    valid: ExampleSet,
    candidates: NDArray[np.int64],
    config: CrossRuberConfig,
    device: Any,
    lengths: NDArray[np.int64],
) -> dict[str, float]:
    """The objective's loss, the accuracy (true reply ranked first of all candidates) and, per negative
    kind, the pairwise accuracy (true reply scored above that negative) on the fixed candidates."""
    import torch

    from scoring.metrics.cross_ruber.batches import context_layout, reply_layout, reply_logits

    net.eval()
    width = candidates.shape[1]
    found = []
    with torch.inference_mode(), _autocast(device):
        for start in range(0, len(valid), VALIDATION_BATCH):
            batch = np.arange(start, min(start + VALIDATION_BATCH, len(valid)))
            contexts = context_layout(
                [valid.contexts[i] for i in batch], lengths, max_tokens=config.max_context_tokens
            )
            replies = reply_layout(candidates[batch].reshape(-1), lengths)
            owner = np.repeat(np.arange(len(batch)), width)
            found.append(
                reply_logits(net, source, contexts, replies, owner, device).view(len(batch), width).cpu()
            )
    logits = torch.cat(found)
    figures = {
        "validation_loss": round(float(objective_loss(logits, config.objective, margin=config.margin)), 6),
        "validation_accuracy": round(float((logits.argmax(dim=1) == 0).float().mean()), 6),
    }
    wins = logits[:, :1] > logits[:, 1:]
    for column, kind in enumerate(config.negatives):
        figures[f"validation_accuracy_{kind}"] = round(float(wins[:, column].float().mean()), 6)
    figures["validation_pairwise_accuracy"] = round(float(wins.float().mean()), 6)
    return figures


def objective_loss(logits: Any, objective: str, *, margin: float) -> Any:
    """The loss of [B, M] logits whose column 0 is the true reply (config.OBJECTIVES)."""
    import torch
    import torch.nn.functional as functional

    if objective == LISTWISE:
        return functional.cross_entropy(
            logits, torch.zeros(len(logits), dtype=torch.long, device=logits.device)
        )
    if objective == BINARY:
        positive = functional.binary_cross_entropy_with_logits(logits[:, 0], torch.ones_like(logits[:, 0]))
        negative = functional.binary_cross_entropy_with_logits(logits[:, 1:], torch.zeros_like(logits[:, 1:]))
        return positive + negative
    scores = torch.sigmoid(logits)
    return torch.relu(margin - scores[:, :1] + scores[:, 1:]).mean()


def _optimiser(net: Any, config: CrossRuberConfig, total_steps: int) -> tuple[Any, Any]:
    import torch

    encoder: list[Any] = []
    fresh: list[Any] = []
    for name, parameter in net.named_parameters():
        if not parameter.requires_grad:
            continue
        (fresh if name.startswith(("head.", "turn_embeddings.", "gates")) else encoder).append(parameter)
    optimiser = torch.optim.AdamW(
        [
            {"params": encoder, "lr": config.encoder_learning_rate, "weight_decay": config.weight_decay},
            {"params": fresh, "lr": config.head_learning_rate, "weight_decay": 0.0},
        ]
    )
    warmup = max(1, round(config.warmup_fraction * total_steps))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, factor)


def _autocast(device: Any) -> Any:
    """bfloat16 autocast on CUDA (as the encoder's scoring, ``contextual_encoder.device_settings``);
    nothing on the CPU."""
    from scoring.metrics.contextual_encoder import autocast, device_settings

    settings = device_settings(str(device))
    return autocast(str(device), settings.encoder_autocast_dtype if settings.is_cuda else None)


def _lengths(source: Any) -> NDArray[np.int64]:
    table = getattr(source, "table", None)
    return table.lengths if table is not None else source.tokens.lengths


def _config_json(
    config: CrossRuberConfig,
    dialogs: Sequence[Dialog],
    validation_dialogs: Sequence[Dialog],
    best: dict[str, float],
    epochs_run: int,
) -> dict[str, Any]:
    settings = dataclasses.asdict(config)
    for name in ("device", "torch_threads", "cache"):
        settings.pop(name)
    settings["negatives"] = list(config.negatives)
    settings["syntactic_kinds"] = list(config.syntactic_kinds)
    settings.update(
        {
            "format": ARTIFACT_FORMAT,
            "metric": "cross-ruber",
            "papers": "RUBER (Tao et al., 2018) eqs. 3-4; BERT-RUBER (Ghazarian et al., 2019); "
            "MaUde (Sinha et al., 2020) eqs. 2 and 4",
            "encoder": encoder_identity(),
            "encoder_trained_layers": f"{config.frozen_layers}..5 (0-based), embeddings "
            + ("trained" if config.frozen_layers == 0 else "frozen"),
            "results": {"best_epoch": int(best["epoch"]), "epochs_run": epochs_run, **best},
            **dialogs_provenance(config.corpus_description, dialogs, validation_dialogs),
        }
    )
    return settings
