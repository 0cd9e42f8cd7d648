"""Whether the study's qualification round is so short that a single wrong answer fails a volunteer (issue
34): with 3 training items and the default threshold of 0.8, 2 of 3 right (67%) fails. The researcher is
warned where training items are added and where the threshold is set, with the number of items that
would allow one mistake (annotation/qualification_rule.py holds the rule the round itself applies)."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Study, TrainingItem
from annotation.qualification_rule import items_for_one_mistake, qualification_passes


def _percent(share: float) -> str:
    return f"{round(100 * share, 1):g}%"


@dataclass(frozen=True)
class OneMistakeWarning:
    items: int  # training items of the study now
    threshold: float
    items_needed: int | None  # the fewest items with which one mistake passes; None: no number does

    @property
    def message(self) -> str:
        if self.items_needed is None:
            return (
                f"With a threshold of {_percent(self.threshold)}, one wrong answer fails a volunteer however "
                "many training items there are. Lower the threshold to allow a mistake."
            )
        items = f"{self.items} training item{'' if self.items == 1 else 's'}"
        return (
            f"With {items} and a threshold of {_percent(self.threshold)}, one wrong answer fails a volunteer "
            f"({self.items - 1} of {self.items} right is {_percent((self.items - 1) / self.items)}). "
            f"One mistake is allowed with {self.items_needed} training items or more: add "
            f"{self.items_needed - self.items} more, or lower the threshold."
        )


def one_mistake_warning(*, study: Study) -> OneMistakeWarning | None:
    """The warning for the study's current training items and threshold; None when it has no training
    items or one wrong answer still passes."""
    items = TrainingItem.objects.filter(study=study).count()
    threshold = study.qualification_threshold
    if items == 0 or qualification_passes(correct=items - 1, total=items, threshold=threshold):
        return None
    return OneMistakeWarning(items=items, threshold=threshold, items_needed=items_for_one_mistake(threshold))
