from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Question, Study
from annotation.scales import DEFAULT_QUESTION_NAME, DEFAULT_QUESTION_PROMPT, QuestionSpec, scale_preset
from kernel.data_version import study_data_changed

__all__ = ["QuestionSpec", "study_create"]


@transaction.atomic
def study_create(
    *,
    owner: User,
    name: str,
    language: str = "en",
    scale: str = "0-2",
    instructions: str = "",
    description: str = "",
    ratings_per_item: int = 3,
    questions: Sequence[QuestionSpec] | None = None,
) -> Study:
    """Create a study with its questions; one question on the ``scale`` preset unless ``questions`` is given."""
    study = Study.objects.create(
        owner=owner,
        name=name.strip(),
        language=language,
        instructions=instructions,
        description=description,
        ratings_per_item=ratings_per_item,
    )
    if not questions:
        preset = scale_preset(scale)
        questions = [
            QuestionSpec(
                name=DEFAULT_QUESTION_NAME,
                scale_min=preset.minimum,
                scale_max=preset.maximum,
                labels=preset.labels,
                prompt=DEFAULT_QUESTION_PROMPT,
            )
        ]
    Question.objects.bulk_create(
        Question(
            study=study,
            name=spec.name,
            prompt=spec.prompt,
            scale_min=spec.scale_min,
            scale_max=spec.scale_max,
            labels=list(spec.labels),
            kind=spec.kind,
            position=index,
        )
        for index, spec in enumerate(questions)
    )
    study_data_changed(study_id=study.pk)  # the questions are the report's rows
    return study
