"""The benchmark page: pick studies, metrics and a statistic; see the metric x study table and its heat map,
with downloads in CSV, JSON and LaTeX. Views translate HTTP; the table is correlation/benchmark/selectors.py's.
A study that is not the requester's is a 404, as on its report page."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from correlation.benchmark.exports import benchmark_csv
from correlation.benchmark.forms import BenchmarkForm
from correlation.benchmark.query import benchmark_query_from
from correlation.benchmark.selectors import BenchmarkInputError, benchmark_for_user
from kernel.permissions import authenticated_user, researcher_required
from stats.benchmark.figure import benchmark_heatmap
from stats.benchmark.formats import (
    benchmark_json,
    benchmark_latex,
    low_mass_notes,
    missing_reasons,
    shortened,
    significance_rule,
)

DOWNLOADS = {
    "csv": ("text/csv; charset=utf-8", "metric-benchmark.csv", benchmark_csv),
    "json": ("application/json", "metric-benchmark.json", benchmark_json),
    "latex": ("application/x-tex; charset=utf-8", "metric-benchmark.tex", benchmark_latex),
}
# A study's column header wraps in about three lines of its width; a longer name is shortened in the middle
# (the end often tells two studies of a series apart) and named in full on hover.
HEADER_LIMIT = 40


@researcher_required
def benchmark_page(request: HttpRequest) -> HttpResponse:
    user = authenticated_user(request)
    form = BenchmarkForm(request.GET or None, user=user)
    context: dict[str, object] = {"form": form, "table": None, "error": ""}
    if request.GET.get("studies"):
        try:
            asked = benchmark_query_from(request.GET)
            table = benchmark_for_user(
                user=user,
                study_ids=asked.study_ids,
                options=asked.options,
                metrics=asked.metrics,
                question=asked.question,
            )
        except BenchmarkInputError as error:
            context["error"] = str(error)
            return render(request, "correlation/benchmark.html", context, status=400)
        if table is None:
            raise Http404("No such study.")
        download = request.GET.get("download", "")
        if download in DOWNLOADS:
            content_type, filename, write = DOWNLOADS[download]
            response = HttpResponse(write(table), content_type=content_type)
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        query = request.GET.copy()
        query.pop("download", None)
        context.update(
            table=table,
            headers=[(study, shortened(study, HEADER_LIMIT)) for study in table.studies],
            rule=significance_rule(table),
            reasons=missing_reasons(table),
            masses=low_mass_notes(table),
            figure=benchmark_heatmap(table),
            query=query.urlencode(),
        )
    return render(request, "correlation/benchmark.html", context)
