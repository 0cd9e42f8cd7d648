"""A researcher changes how their study is annotated: which tasks, how much redundancy, quality control.

Saving brings the work items in step (:func:`work_items_sync`): raising k or N opens new slots at once,
lowering them never takes away an item someone already holds, turning a task on creates its items.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from django.db import transaction

from annotation.models import CheckAction, CollectionMode, Study
from annotation.services.joining import joining_settings_problems
from annotation.services.work_items import work_items_sync
from kernel.data_version import study_data_changed

# The settings a correlation report depends on (who counts: annotation/selectors/quality.py); the others
# only change how work is handed out.
REPORT_FIELDS = frozenset({"kappa_threshold"})
PAIRWISE_PROMPT_MAX = 300  # Study.pairwise_prompt's max_length


class SettingsInvalid(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class AnnotationSettings:
    """The annotation fields of :class:`Study`, as one value (the form's initial data and the service's
    input)."""

    rating_enabled: bool
    ratings_per_item: int
    count_imported_ratings: bool
    show_reference: bool
    instructions: str
    references_wanted: int
    collection_mode: str
    diversity_enabled: bool
    pairwise_enabled: bool
    pairwise_prompt: str
    max_items_per_annotator: int | None
    hold_seconds: int
    check_interval: int
    check_action: str
    check_failures_allowed: int
    kappa_threshold: float | None
    min_seconds_per_item: float
    invites_open: bool
    # Joining (annotation/services/joining.py, annotation/services/qualification.py).
    signup_open: bool
    consent_text: str
    crowd_id_parameter: str
    completion_code: str
    qualification_threshold: float

    @classmethod
    def of(cls, study: Study) -> AnnotationSettings:
        return cls(**{field.name: getattr(study, field.name) for field in fields(cls)})


# (field, lowest, highest): the ranges the pages and the API accept; the paper values sit well inside.
RANGES: tuple[tuple[str, float, float], ...] = (
    ("ratings_per_item", 1, 50),
    ("references_wanted", 0, 20),
    ("max_items_per_annotator", 1, 1_000_000),
    ("hold_seconds", 60, 7 * 24 * 3600),
    ("check_interval", 0, 1000),
    ("check_failures_allowed", 0, 1000),
    ("kappa_threshold", -1.0, 1.0),
    ("min_seconds_per_item", 0.0, 3600.0),
    ("qualification_threshold", 0.0, 1.0),
)


def settings_problems(settings: AnnotationSettings) -> list[tuple[str, str]]:
    """(field, message) for every value the study cannot take; empty when all is well."""
    problems = []
    for name, lowest, highest in RANGES:
        value = getattr(settings, name)
        if value is not None and not lowest <= value <= highest:
            problems.append((name, f"must be between {lowest:g} and {highest:g}"))
    if settings.collection_mode not in CollectionMode.values:
        problems.append(("collection_mode", f"unknown mode {settings.collection_mode!r}"))
    if settings.check_action not in CheckAction.values:
        problems.append(("check_action", f"unknown action {settings.check_action!r}"))
    if settings.collection_mode == CollectionMode.TWO_WRITERS and settings.references_wanted == 1:
        problems.append(("collection_mode", "two writers need at least two references per context"))
    problems += joining_settings_problems(
        crowd_id_parameter=settings.crowd_id_parameter,
        completion_code=settings.completion_code,
        consent_text=settings.consent_text,
    )
    if not settings.pairwise_prompt.strip():
        problems.append(("pairwise_prompt", "ask a question, e.g. “Which reply is better?”"))
    elif len(settings.pairwise_prompt) > PAIRWISE_PROMPT_MAX:
        problems.append(("pairwise_prompt", f"at most {PAIRWISE_PROMPT_MAX} characters"))
    if not (
        settings.rating_enabled
        or settings.references_wanted > 0
        or settings.diversity_enabled
        or settings.pairwise_enabled
    ):
        problems.append(
            (
                "rating_enabled",
                "turn on at least one task: rating, reference collection, diversity or pairwise comparison",
            )
        )
    return problems


@transaction.atomic
def annotation_settings_update(*, study: Study, settings: AnnotationSettings) -> list[str]:
    """Save ``settings`` on ``study`` and sync its work items; returns the names of the fields changed.
    Raises :class:`SettingsInvalid` (the first problem) and changes nothing when a value is out of range."""
    problems = settings_problems(settings)
    if problems:
        raise SettingsInvalid(*problems[0])
    changed = [name for name, value in asdict(settings).items() if getattr(study, name) != value]
    if not changed:
        return []
    for name in changed:
        setattr(study, name, getattr(settings, name))
    study.save(update_fields=changed)
    if REPORT_FIELDS.intersection(changed):
        study_data_changed(study_id=study.pk)
    work_items_sync(study=study)
    return changed
