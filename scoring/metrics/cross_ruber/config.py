"""Cross-RUBER's names and hyper-parameters: one frozen dataclass, recorded in ``config.json``.

Every default says what it follows or which measurement chose it (docs/metrics.md, "Cross-RUBER", has the
ablation table; "DD validation" = DailyDialog's validation split, "shared sets" = GRADE DailyDialog and the
multi-reference study in ../shared/data).
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.metrics.maude.negatives import DEFAULT_DROP_FRACTION, SYNTACTIC_KINDS

CROSS_RUBER = "cross-ruber"
CROSS_RUBER_UNREFERENCED = "cross-ruber-unreferenced"
CROSS_RUBER_REFERENCED = "cross-ruber-referenced"
BLEND_METRICS = tuple(f"{CROSS_RUBER}-{method}" for method in ("min", "max", "gmean", "amean"))
METRIC_NAMES = (CROSS_RUBER_UNREFERENCED, CROSS_RUBER_REFERENCED, *BLEND_METRICS)

# Negative kinds (the candidates a context's true reply is ranked against).
BATCH = "batch"  # the true reply of another context of the same mini-batch (in-batch negative)
UTTERANCE = "utterance"  # a random reply of another dialog, drawn anew every epoch (Sinha et al., 2020; Tao et al., 2018)
SYNTACTIC = (
    "syntactic"  # one fixed corruption of the true reply: word order, drop or repeat (Sinha et al., 2020)
)
DIALOG = "dialog"  # another turn of the same dialog: on topic, but not the reply (a hard negative)
ECHO = "echo"  # a turn of the context itself, repeated as the reply (retrieval systems do this)
NEGATIVE_KINDS = (BATCH, UTTERANCE, SYNTACTIC, DIALOG, ECHO)

# Objectives over each context's candidates.
LISTWISE = "listwise"  # softmax cross-entropy over [true; negatives] (InfoNCE, listwise NCE)
BINARY = "binary"  # Sinha et al. (2020) eq. 2: -log s(c, r) - mean_k log(1 - s(c, r_k))
MARGIN = "margin"  # Tao et al. (2018) eq. 3: mean_k max(0, margin - s(c, r) + s(c, r_k)), s = sigmoid(logit)
OBJECTIVES = (LISTWISE, BINARY, MARGIN)

# How the reply meets the context in the trained top layers.
GATED = "gated-cross-attention"  # reply tokens attend to the reply, plus a gated attention to the context
REPLY_READS_CONTEXT = "reply-reads-context"  # reply tokens attend to [context; reply], context to itself
JOINT = "joint"  # full self-attention over [context; reply] (a plain cross-encoder)
SEPARATE = "separate"  # no token-level interaction: reply and context read apart, met in the head only
INTERACTIONS = (GATED, REPLY_READS_CONTEXT, JOINT, SEPARATE)

# The referenced score.
FROZEN_COSINE = "frozen-cosine"  # cosine of the encoder's own mean-pooled sentence vectors (untrained)
TUNED_COSINE = "tuned-cosine"  # cosine of mean-pooled states of the fine-tuned top layers (no context)
REFERENCED_KINDS = (FROZEN_COSINE, TUNED_COSINE)


@dataclass(frozen=True)
class CrossRuberConfig:
    """Hyper-parameters of one training run. ``device``, ``torch_threads`` and ``cache`` change how fast
    it runs, not what it learns, and are left out of the artifact's config."""

    # k: MiniLM's lower layers, frozen and cached; 0 fine-tunes all (CUDA). 5 (the top layer trains): the
    # 45-minute CPU budget; k = 4 doubles the trained part's cost per step
    frozen_layers: int = 5
    context_turns: int = (
        3  # last turns of the context read (Sinha et al. (2020) reads all; cost grows with it)
    )
    max_utterance_tokens: int = 64  # word pieces per utterance with [CLS]/[SEP] (0.5% of DD turns longer)
    max_context_tokens: int = 128  # the newest turns that fit (the newest always, cut if it must be)
    # gated: best s_U at the full budget (GRADE 0.284 vs 0.281 separate), and starts as `separate` (gate 0)
    interaction: str = GATED
    # the hard `dialog` negative carries the correlation with people (ablation: nosyn vs dialog)
    negatives: tuple[str, ...] = (BATCH, UTTERANCE, SYNTACTIC, DIALOG)
    syntactic_kinds: tuple[str, ...] = SYNTACTIC_KINDS
    drop_fraction: float = DEFAULT_DROP_FRACTION
    objective: str = BINARY  # MaUde's NCE: better s_U than listwise on both shared sets (ablation)
    margin: float = 0.5  # for MARGIN (Tao et al. (2018)'s Delta; the paper does not give it)
    head_hidden: int = 256
    dropout: float = 0.1  # head dropout; the encoder layers keep MiniLM's own (0.1)
    encoder_learning_rate: float = 1e-4
    head_learning_rate: float = 1e-3  # the head and the turn embeddings start from scratch
    weight_decay: float = 0.01
    warmup_fraction: float = 0.05
    batch_size: int = 32  # contexts per step, each with 1 + len(negatives) candidates
    epochs: int = 2  # with 5,000 dialogs: 34 min on one thread, encoding included (docs/benchmarks.md)
    patience: int = 1  # epochs without a lower validation loss before stopping
    max_train_dialogs: int | None = 5000  # a seeded sample of the train split; None: every dialog
    validation_examples: int = 2000  # fixed validation candidates of this many examples (seeded)
    referenced: str = FROZEN_COSINE
    seed: int = 0
    language: str = "en"
    device: str | None = None
    torch_threads: int | None = None
    cache: bool = True  # memory-map the frozen layers' token states (frozen_layers > 0 only)
    corpus_description: str = ""

    def checked(self) -> CrossRuberConfig:
        """Itself, or a ValueError naming the first setting out of range."""
        if not 0 <= self.frozen_layers <= 5:
            raise ValueError(f"frozen_layers must be 0..5 (MiniLM has 6 layers), got {self.frozen_layers}")
        if self.context_turns < 1:
            raise ValueError(f"context_turns must be at least 1, got {self.context_turns}")
        if self.max_utterance_tokens < 3 or self.max_context_tokens < 3:
            raise ValueError("max_utterance_tokens and max_context_tokens must be at least 3")
        for value, known, what in (
            (self.interaction, INTERACTIONS, "interaction"),
            (self.objective, OBJECTIVES, "objective"),
            (self.referenced, REFERENCED_KINDS, "referenced"),
        ):
            if value not in known:
                raise ValueError(f"unknown {what} {value!r}; known: {', '.join(known)}")
        unknown = [kind for kind in self.negatives if kind not in NEGATIVE_KINDS]
        if unknown or not self.negatives or len(set(self.negatives)) != len(self.negatives):
            raise ValueError(
                f"negatives {', '.join(self.negatives) or '(none)'}: choose distinct kinds among "
                f"{', '.join(NEGATIVE_KINDS)}"
            )
        if SYNTACTIC in self.negatives and not self.syntactic_kinds:
            raise ValueError("the syntactic negative needs at least one of its kinds")
        if any(kind not in SYNTACTIC_KINDS for kind in self.syntactic_kinds):
            raise ValueError(f"syntactic kinds are among {', '.join(SYNTACTIC_KINDS)}")
        if self.batch_size < 2 or self.epochs < 1 or self.patience < 1 or self.validation_examples < 2:
            raise ValueError("batch_size and validation_examples must be >= 2, epochs and patience >= 1")
        if self.max_train_dialogs is not None and self.max_train_dialogs < 2:
            raise ValueError(f"max_train_dialogs must be at least 2, got {self.max_train_dialogs}")
        return self
