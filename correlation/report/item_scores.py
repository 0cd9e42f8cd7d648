"""Every response of a study with its human score per question and every metric score: the numbers
behind the report's scatter plots, as one CSV for researchers' own analyses (four queries in all).
Text cells, header included, are formula-safe (``kernel.csv_cells``); scores are written as numbers."""

from __future__ import annotations

import io

from annotation.models import Study
from correlation.report.loading import study_human_scores
from correlation.selectors import (
    study_metric_signatures,
    study_metric_values,
    study_questions,
    study_response_labels,
)
from kernel.csv_cells import FormulaSafeWriter


def study_item_scores_csv(*, study: Study) -> str:
    """Columns: response_id, context_id, system, response, ``human:<question>`` per question (the mean
    rating, or the imported mean), then one column per metric signature (its full text, so each number
    can be reproduced). Cells without a value are empty."""
    questions = study_questions(study=study)
    human = study_human_scores(study=study, questions=questions)
    signatures = study_metric_signatures(study=study)
    values = study_metric_values(study=study)
    labels = study_response_labels(study=study)

    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(
        ["response_id", "context_id", "system", "response"]
        + [f"human:{question.name}" for question in questions]
        + [signature.text for signature in signatures]
    )
    for response_id in sorted(labels):
        label = labels[response_id]
        cells: list[object] = [response_id, label.context, label.system, label.text]
        cells += [human[question.pk].get(response_id, "") for question in questions]
        cells += [values.get(signature.pk, {}).get(response_id, "") for signature in signatures]
        writer.writerow(cells)
    return buffer.getvalue()
