"""The conversation pages (docs/conversations.md): dialog-level scores per system and conversation, and
one conversation's per-turn score curve. Owner researchers only (404 for everyone else), like the
report. The work is in correlation/conversations/selectors.py; the figure in stats/figures/conversations.py.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from correlation.conversations.selectors import (
    conversation_details,
    conversation_metric_names,
    default_conversation_metric,
    metric_choice,
    study_conversations,
    system_dialog_table,
)
from correlation.selectors import studies_reportable_by
from stats.figures.conversations import turn_score_figure, turn_score_filename


@login_required
def study_conversations_page(request: HttpRequest, study_id: int) -> HttpResponse:
    """Per system: conversations and the mean and sd of their dialog-level scores; then every
    conversation with its dialog-level score, under the metric of ``?metric=``."""
    study = _reportable_study(request, study_id)
    names = conversation_metric_names(study=study)
    chosen = _chosen_metric_names(request, names)[:1]
    metric = metric_choice(study=study, name=chosen[0]) if chosen else None
    conversations = study_conversations(study=study, metric=metric)
    context = {
        "study": study,
        "metric_names": names,
        "metric": metric,
        "conversations": conversations,
        "systems": system_dialog_table(conversations),
    }
    return render(request, "correlation/conversations.html", context)


@login_required
def study_conversation_page(request: HttpRequest, study_id: int, conversation: str) -> HttpResponse:
    """One conversation: the per-turn scores of the metrics of ``?metric=`` (repeatable) as a line
    chart, and the turns with their scores under it."""
    study = _reportable_study(request, study_id)
    names = conversation_metric_names(study=study)
    metrics = [metric_choice(study=study, name=name) for name in _chosen_metric_names(request, names)]
    details = conversation_details(study=study, conversation=conversation, metrics=metrics)
    if not details:
        raise Http404("no such conversation in this study")
    context = {
        "study": study,
        "conversation": conversation,
        "metric_names": names,
        "metrics": metrics,
        "chosen": [metric.name for metric in metrics],
        "details": details,
        "figure": turn_score_figure(details) if metrics else None,
        "figure_filename": turn_score_filename(study.name, conversation),
    }
    return render(request, "correlation/conversation.html", context)


def _reportable_study(request: HttpRequest, study_id: int) -> Study:
    return get_object_or_404(studies_reportable_by(user=request.user), pk=study_id)


def _chosen_metric_names(request: HttpRequest, names: list[str]) -> list[str]:
    """The metrics of ``?metric=`` (in their order, each once); without one, the default metric ("maude"
    when the study has its scores, else the first); 404 for a name that scored no conversation reply."""
    chosen = list(dict.fromkeys(name for name in request.GET.getlist("metric") if name))
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise Http404("no conversation of this study has scores of this metric")
    if chosen:
        return chosen
    default = default_conversation_metric(names)
    return [default] if default else []
