"""Which implementation of each metric a run uses: one tool for every metric, or one per family.

A researcher who puts the project's numbers beside a paper's must compute them as the paper's tool did
: the dialog literature used nlg-eval (pycocoevalcap), MT papers sacrebleu, summarization papers
Google's rouge-score. A run's choice is written

- ``""``: every metric's default implementation (nltk's formulas where the metric has them);
- one name, ``nlg-eval``: that implementation for every metric that has implementations; a metric asked
  for by name that lacks it is an error naming the ones it has;
- per family, ``bleu=sacrebleu,meteor=nlg-eval``: the named families (a metric's family, e.g. ``bleu`` for
  BLEU-1..4 and corpus BLEU, ``rouge`` for the ROUGE-L variants, ``embedding`` for the three embedding
  metrics, or a standalone metric's own name such as ``meteor``) use the named implementation, the others
  their default. ``*=nlg-eval,bleu=sacrebleu`` gives every other family nlg-eval.

:meth:`ImplementationChoice.text` is the canonical spelling stored on a run and hashed into its request
key, so that two spellings of one choice are the same request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from scoring.metrics.spec import DEFAULT_IMPLEMENTATION


class _Offers(Protocol):
    """What a run may set on one implementation: its parameters' values."""

    @property
    def choices(self) -> Mapping[str, tuple[str, ...]]: ...


class HasImplementations(Protocol):
    """A per-response or system-level metric spec, as far as the choice reads it."""

    @property
    def name(self) -> str: ...

    @property
    def implementations(self) -> Mapping[str, _Offers]: ...

    @property
    def group_name(self) -> str: ...


EVERY_FAMILY = "*"


class ImplementationChoiceError(ValueError):
    """A choice that names an unknown implementation or family, or one a requested metric lacks."""


@dataclass(frozen=True)
class ImplementationChoice:
    everywhere: str = ""  # "" : each metric's default; else one implementation for every family
    by_group: Mapping[str, str] = field(default_factory=dict)  # family (or metric) -> implementation

    @classmethod
    def parse(
        cls, text: str | None, *, implementations: Iterable[str], groups: Iterable[str]
    ) -> ImplementationChoice:
        """The choice ``text`` spells; ``implementations`` and ``groups`` are the known names."""
        known = list(implementations)
        known_groups = set(groups)
        raw = (text or "").strip()
        if not raw or raw == "default":
            return cls()
        everywhere = ""
        by_group: dict[str, str] = {}
        for part in (piece.strip() for piece in raw.split(",")):
            if not part:
                continue
            group, equals, name = (piece.strip() for piece in part.partition("="))
            if not equals:
                group, name = EVERY_FAMILY, group
            if name not in known:
                raise ImplementationChoiceError(
                    f"implementation: unknown implementation {name!r}; choose one of {', '.join(known)}"
                )
            if group == EVERY_FAMILY:
                if everywhere and everywhere != name:
                    raise ImplementationChoiceError(
                        f"implementation: {everywhere!r} and {name!r} are both given for every family"
                    )
                everywhere = name
                continue
            if group not in known_groups:
                raise ImplementationChoiceError(
                    f"implementation: {group!r} is not a metric family with implementations; "
                    f"families: {', '.join(sorted(known_groups))}"
                )
            if by_group.get(group, name) != name:
                raise ImplementationChoiceError(
                    f"implementation: family {group!r} is given two implementations "
                    f"({by_group[group]!r} and {name!r})"
                )
            by_group[group] = name
        # a family given the implementation every family gets says nothing more: one choice, one text
        kept = {group: name for group, name in by_group.items() if name != everywhere}
        return cls(everywhere=everywhere, by_group=dict(sorted(kept.items())))

    @property
    def text(self) -> str:
        """The canonical spelling: ``""``, ``nlg-eval``, or ``*=nlg-eval,bleu=sacrebleu`` (sorted)."""
        if not self.by_group:
            return self.everywhere
        parts = [f"{group}={name}" for group, name in self.by_group.items()]
        if self.everywhere:
            parts.insert(0, f"{EVERY_FAMILY}={self.everywhere}")
        return ",".join(parts)

    def wanted(self, spec: HasImplementations) -> str:
        """The implementation this choice asks of ``spec`` ("" : its default, or it has none)."""
        if not spec.implementations:
            return ""
        return self.by_group.get(spec.group_name, self.everywhere)

    def for_spec(self, spec: HasImplementations) -> str:
        """The implementation ``spec`` is computed with ("" for a metric computed one way only).

        Raises :class:`ImplementationChoiceError` when the choice names one the metric lacks.
        """
        if not spec.implementations:
            return ""
        wanted = self.wanted(spec)
        if not wanted:
            return default_implementation(spec)
        if wanted not in spec.implementations:
            raise ImplementationChoiceError(
                f"implementation: {spec.name} has no {wanted} implementation "
                f"(it has: {', '.join(spec.implementations)}); choose per family, e.g. "
                f"{spec.group_name}={default_implementation(spec)}"
            )
        return wanted

    def includes(self, spec: HasImplementations) -> bool:
        """Whether "all metrics" under this choice takes ``spec``: metrics computed one way only, and
        those that have the implementation chosen for them (by default: nltk's)."""
        if not spec.implementations:
            return True
        wanted = self.wanted(spec)
        if not wanted:
            return DEFAULT_IMPLEMENTATION in spec.implementations
        return wanted in spec.implementations


def default_implementation(spec: HasImplementations) -> str:
    """The implementation ``spec`` uses unless a run chooses another: nltk's where it has one, else its
    first (a metric only one tool defines, such as nlg-eval's CIDEr-D)."""
    if DEFAULT_IMPLEMENTATION in spec.implementations:
        return DEFAULT_IMPLEMENTATION
    return next(iter(spec.implementations), "")


def checked_options(
    options: Mapping[str, str], chosen: Mapping[str, tuple[HasImplementations, str]]
) -> dict[str, str]:
    """``options`` (parameter overrides a run gives, e.g. ``{"tok": "intl", "smooth": "floor"}``) checked
    against the implementations chosen for the run's metrics (``{name: (spec, implementation)}``).

    Every option must be a parameter a chosen implementation lets the researcher set, with one of its
    values; the message names the option, the value and what would be accepted.
    """
    takers: dict[str, dict[str, tuple[str, ...]]] = {}  # option -> {"nlg-eval's rouge": its values}
    for spec, implementation in chosen.values():
        if not implementation:
            continue
        for key, values in spec.implementations[implementation].choices.items():
            takers.setdefault(key, {})[f"{implementation}'s {spec.group_name}"] = values
    checked: dict[str, str] = {}
    for key, value in sorted(options.items()):
        if key not in takers:
            settable = ", ".join(sorted(takers)) or "none"
            raise ImplementationChoiceError(
                f"option {key!r} applies to none of the chosen metrics' implementations "
                f"(options they take: {settable})"
            )
        for owner, values in sorted(takers[key].items()):
            if str(value) not in values:
                raise ImplementationChoiceError(
                    f"option {key}={value!r} is not accepted by {owner}; choose one of {', '.join(values)}"
                )
        checked[key] = str(value)
    return checked
