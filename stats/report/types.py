"""What a correlation report is computed from and with which choices: plain data, no Django.

``correlation/report/loading.py`` fills :class:`ReportInputs` from the database in a fixed number of
queries; ``stats/report/builder.py`` turns it into the report document. Keeping the two apart lets
the benchmark and the tests time and check the statistics without a database, and makes the document a
pure function of its inputs and :class:`ReportOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.judge_pairwise import JudgedPair
from stats.pairwise import PairwiseRecord
from stats.report.document_types import ReportOptionsFields

FILTER_STUDY = "study"  # the study's agreement threshold and the researcher's per-annotator choices
FILTER_NONE = "none"  # every rating counts
NORMALISE_NONE = "none"
NORMALISE_Z = "z"  # per-annotator z-scores before averaging
# Grouping of every correlation table's grouped column (stats/meta/grouped.py): none (the flat
# correlation only), by context ("item-grouped"), by system.
GROUPING_NONE, GROUPING_CONTEXT, GROUPING_SYSTEM = "none", "context", "system"
GROUPINGS = (GROUPING_NONE, GROUPING_CONTEXT, GROUPING_SYSTEM)
MAX_RESAMPLES = 10_000
OPTION_KEYS = ("filter", "normalise", "resamples", "seed", "grouping")  # query parameters and flags


class OptionError(ValueError):
    """A report option with a bad value; the message names the option."""


@dataclass(frozen=True)
class ReportOptions:
    """The researcher's choices; ``key`` names them in the report cache.

    ``filter``: "study" (the study's agreement threshold and per-annotator overrides), "none", or a
    threshold written as a number ("0.3": the study's overrides, with this threshold instead).
    ``grouping``: none, context or system (:data:`GROUPINGS`); the key names it only when it is not none, so
    the keys of reports cached before it existed still name the same report.
    """

    filter: str = FILTER_STUDY
    normalise: str = NORMALISE_NONE
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    grouping: str = GROUPING_NONE

    @classmethod
    def parse(cls, values: Mapping[str, str | None]) -> ReportOptions:
        """Options from query parameters or command-line flags; absent or empty values take defaults."""
        chosen = cls()
        raw_filter = (values.get("filter") or FILTER_STUDY).strip()
        if raw_filter not in (FILTER_STUDY, FILTER_NONE):
            try:
                threshold = float(raw_filter)
            except ValueError:
                raise OptionError(
                    f'filter: "{raw_filter}" is not "study", "none" or an agreement threshold such as 0.2'
                ) from None
            if not -1.0 <= threshold <= 1.0:
                raise OptionError(f"filter: the threshold {threshold} is outside [-1, 1]")
            raw_filter = repr(threshold)
        normalise = (values.get("normalise") or NORMALISE_NONE).strip()
        if normalise not in (NORMALISE_NONE, NORMALISE_Z):
            raise OptionError(f'normalise: "{normalise}" is not "none" or "z"')
        resamples = integer_option(values.get("resamples"), "resamples", chosen.resamples, 0, MAX_RESAMPLES)
        seed = integer_option(values.get("seed"), "seed", chosen.seed, 0, 2**32 - 1)
        grouping = (values.get("grouping") or GROUPING_NONE).strip()
        if grouping not in GROUPINGS:
            raise OptionError(f'grouping: "{grouping}" is not "none", "context" or "system"')
        return cls(filter=raw_filter, normalise=normalise, resamples=resamples, seed=seed, grouping=grouping)

    @classmethod
    def from_key(cls, key: str) -> ReportOptions:
        """The options a cache key names (the inverse of :attr:`key`)."""
        values = dict(part.split("=", 1) for part in key.split(";") if "=" in part)
        return cls.parse(values)

    @property
    def key(self) -> str:
        key = f"filter={self.filter};normalise={self.normalise};resamples={self.resamples};seed={self.seed}"
        return key if self.grouping == GROUPING_NONE else f"{key};grouping={self.grouping}"

    def threshold(self, study_threshold: float | None) -> float | None:
        """The agreement threshold this filter applies (``None``: nobody is excluded by agreement)."""
        if self.filter == FILTER_STUDY:
            return study_threshold
        if self.filter == FILTER_NONE:
            return None
        return float(self.filter)

    def as_dict(self) -> ReportOptionsFields:
        return {
            "filter": self.filter,
            "normalise": self.normalise,
            "resamples": self.resamples,
            "seed": self.seed,
            "grouping": self.grouping,
        }


def integer_option(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    if raw is None or str(raw).strip() == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise OptionError(f'{name}: "{raw}" is not a whole number') from None
    if not low <= value <= high:
        raise OptionError(f"{name}: {value} is outside {low}..{high}")
    return value


@dataclass(frozen=True)
class AnnotatorInfo:
    """A rater of the study as the report needs them."""

    key: int
    pseudonym: str
    identity_known: bool  # False: an anonymous imported score, never treated as one person's
    inclusion: str  # "auto" / "include" / "exclude": the researcher's choice
    agreement: float | None  # mean weighted kappa with the others over the study's questions


@dataclass(frozen=True)
class QuestionInputs:
    name: str
    scale_min: int
    scale_max: int
    ratings: tuple[tuple[int, int, int], ...]  # (annotator key, response id, value)
    imported_means: Mapping[int, float]  # response id -> mean imported without per-rater scores
    # response id -> the researcher's adjudicated value, which replaces the reply's human score
    gold: Mapping[int, float] = field(default_factory=dict)

    @property
    def points(self) -> list[int]:
        return list(range(self.scale_min, self.scale_max + 1))


@dataclass(frozen=True)
class SignatureInputs:
    id: int
    name: str  # as the report shows it: an external metric's is "<name> (external)"
    text: str
    references: str  # "single", "multi", or "none" for a metric that reads no reference
    group: str  # the row block of the paper-style table: Referenced, Unreferenced, Hybrid, LLM judge, Other, External
    parameters: Mapping[str, str] = field(default_factory=dict)
    origin: str = "builtin"  # "builtin", "plugin", or "external": scores computed elsewhere and imported
    # the tool that computed the scores: nltk, nlg-eval, sacrebleu, rouge-score; dialeval for
    # the project's own metrics; external; plugin:<distribution>@<version>
    implementation: str = ""
    # an LLM judge's: the signature id of its mass on labels (llm-judge-mass, stats/judge_names.py), whose
    # values are in ``metric_values`` beside the metrics' but which is no signature of the report
    label_mass_id: int | None = None


EXTERNAL_ORIGIN = "external"
EXTERNAL_GROUP = "External"
JUDGE_GROUP = "LLM judge"  # LLM judges' scores (stats/judge_names.py)
# The row blocks of the paper-style tables in their order (Tao et al., 2018, Table 2: Referenced, Unreferenced,
# the blends), then the LLM judges; any other group after these, by name.
GROUP_ORDER = ("Referenced", "Unreferenced", "Hybrid", JUDGE_GROUP, "Other")


@dataclass(frozen=True)
class UnvaluedMetric:
    """A metric a scoring run asked for that has no value for any reply of the study (a referenced metric
    on a study without references, a metric undefined on every reply...): the report lists it with
    ``reason`` instead of leaving it out."""

    name: str
    text: str  # its signature
    references: str
    group: str
    reason: str
    origin: str = "builtin"
    implementation: str = ""
    label_mass_id: int | None = None  # an LLM judge's, as SignatureInputs


@dataclass(frozen=True)
class ReferenceScores:
    """One multi-reference signature's metric against each reference separately, for the curve of
    Gupta et al. (2019) Figure 2: response id -> score per reference of its context (at most ``width``)."""

    signature_id: int
    scores: Mapping[int, tuple[float, ...]]
    width: int


@dataclass(frozen=True)
class DiversityInputs:
    """Gupta et al. (2019) section 5.2: per (system, context), the raters' diversity scores and each diversity
    metric computed on that system's replies to that context."""

    human: Mapping[tuple[str, str], tuple[float, ...]]  # (system, context) -> each rater's meanings
    metrics: Mapping[str, Mapping[tuple[str, str], float]]  # metric name -> (system, context) -> value
    inverted: tuple[str, ...] = ()  # metrics correlated as 1 - value (Self-BLEU: lower is more diverse)


@dataclass(frozen=True)
class ResponseInfo:
    text: str
    system: str
    context: str  # the context's external id ("" when it has none)
    context_id: int | None = None  # the context's database id: what groups replies by context

    @property
    def context_key(self) -> int | str:
        """What identifies the reply's context (its id; the external id where the id is not known)."""
        return self.context_id if self.context_id is not None else self.context


@dataclass(frozen=True)
class PairwiseJudgeInputs:
    """A pairwise judge's stored verdicts on the study's pairs of replies (scoring.models.JudgePairVerdict,
    Zheng et al., 2023): its name (``llm-pairwise:<key>``, stats/judge_names.py), its signature, and its
    verdicts in pair order; the pairwise section sets them beside the people's (stats/report/pairwise_judges.py)."""

    name: str
    text: str
    pairs: tuple[JudgedPair, ...]


@dataclass(frozen=True)
class ReportInputs:
    study_id: int
    study_name: str
    data_version: int
    study_threshold: float | None
    responses: Mapping[int, ResponseInfo]
    annotators: Mapping[int, AnnotatorInfo]
    questions: tuple[QuestionInputs, ...]
    signatures: tuple[SignatureInputs, ...]
    metric_values: Mapping[int, Mapping[int, float]]  # signature id -> response id -> value
    reference_scores: tuple[ReferenceScores, ...] = ()
    reference_notes: tuple[str, ...] = ()  # why a signature has no curve
    diversity: DiversityInputs | None = None
    code_version: str = ""
    pairwise: tuple[PairwiseRecord, ...] = ()  # pairwise judgments (stats/report/pairwise.py)
    # replies the researcher excluded from reports (stats/report/adjudication.py): already
    # removed from the replies, ratings, imported means, metric values and reference scores above; the
    # pairwise section leaves them out itself
    excluded_responses: frozenset[int] = frozenset()
    unvalued: tuple[UnvaluedMetric, ...] = ()  # metrics a run asked for that have no value
    # pairwise judges' verdicts, every pair of the study's (the section leaves out excluded replies itself)
    pairwise_judges: tuple[PairwiseJudgeInputs, ...] = ()
