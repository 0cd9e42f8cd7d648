"""The benchmark across studies through the API, the page and ``metric_benchmark``: every cell equals the
statistic computed directly from the study's ratings and scores (scipy, loops), a metric missing on a study
reads "—" with the reason, and only the requester's own studies are reachable."""

from __future__ import annotations

import csv
import io
import itertools
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient
from scipy import stats as scipy_stats

from annotation.models import Rating, Response
from scoring.models import MetricScore
from tests.correlation.benchmark.builders import BLEU, FLAT, METEOR, benchmark_study, bleu_like, two_studies
from tests.correlation.report_helpers import report_document
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def studies(researcher):
    return two_studies(researcher)


def _direct(study, text):
    """Per reply of ``study`` with a rating: mean rating, context id, system name, value of ``text``."""
    rows = []
    for response in Response.objects.filter(context__study=study).select_related("system").order_by("pk"):
        ratings = list(Rating.objects.filter(response=response).values_list("value", flat=True))
        score = MetricScore.objects.filter(response=response, signature__text=text).first()
        rows.append(
            (np.mean(ratings), response.context_id, response.system.name, score.value if score else np.nan)
        )
    human, contexts, systems, metric = zip(*rows, strict=True)
    return np.array(human), list(contexts), list(systems), np.array(metric)


def _grouped_spearman(human, labels, metric) -> float:
    per_group = []
    for label in set(labels):
        rows = [i for i, name in enumerate(labels) if name == label]
        if np.ptp(human[rows]) > 0 and np.ptp(metric[rows]) > 0:
            per_group.append(scipy_stats.spearmanr(human[rows], metric[rows]).statistic)
    return float(np.mean(per_group))


def _system_accuracy(human, systems, metric) -> float:
    names = sorted(set(systems))
    means = {
        name: [np.mean([v[i] for i in range(len(systems)) if systems[i] == name]) for v in (human, metric)]
        for name in names
    }
    agree = [
        np.sign(means[a][0] - means[b][0]) == np.sign(means[a][1] - means[b][1])
        for a, b in itertools.combinations(names, 2)
    ]
    return float(np.mean(agree))


def _get(user, **params):
    client = APIClient()
    client.force_login(user)
    return client.get(reverse("api-benchmarks"), params)


def _cells(body):
    return {(row["signature"], cell["study"]): cell for row in body["rows"] for cell in row["cells"]}


def test_flat_pearson_cells_are_the_studies_own_numbers_and_missing_metrics_say_why(studies) -> None:
    first, second = studies
    response = _get(first.owner, studies=f"{first.pk},{second.pk}", resamples="0")

    assert response.status_code == 200
    body = json.loads(response.content)
    assert body["studies"] == ["GRADE convai2", "own pilot"]
    assert [row["signature"] for row in body["rows"]] == [BLEU, FLAT, METEOR]
    cells = _cells(body)
    for study in studies:
        human, _, _, metric = _direct(study, BLEU)
        expected = scipy_stats.pearsonr(human, metric)
        cell = cells[(BLEU, study.name)]
        assert cell["value"] == pytest.approx(expected.statistic, abs=1e-12)
        assert cell["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert cell["significant"] == (expected.pvalue < 0.05)
        # the same number as the study's own report
        row = next(r for r in report_document(study, resamples=0)["rows"] if r["signature"] == BLEU)
        assert cell["value"] == pytest.approx(row["pearson"], abs=1e-12)
    assert cells[(METEOR, "own pilot")]["value"] is None
    assert cells[(METEOR, "own pilot")]["note"] == "not scored on this study"
    assert cells[(FLAT, "own pilot")]["value"] is None
    assert cells[(FLAT, "own pilot")]["note"] == "metric is constant"
    bleu = next(row for row in body["rows"] if row["signature"] == BLEU)
    assert bleu["mean"] == pytest.approx(np.mean([c["value"] for c in bleu["cells"]]))
    assert bleu["studies"] == 2


def test_grouped_and_accuracy_cells_equal_the_statistics_computed_directly(studies) -> None:
    first, second = studies
    ids = f"{first.pk},{second.pk}"
    by_context = _cells(
        json.loads(_get(first.owner, studies=ids, statistic="spearman", grouping="context").content)
    )
    by_system = _cells(
        json.loads(_get(first.owner, studies=ids, statistic="spearman", grouping="system").content)
    )
    accuracy = _cells(json.loads(_get(first.owner, studies=ids, statistic="system_accuracy").content))
    for study in studies:
        human, contexts, systems, metric = _direct(study, BLEU)
        assert by_context[(BLEU, study.name)]["value"] == pytest.approx(
            _grouped_spearman(human, contexts, metric), abs=1e-12
        )
        assert by_system[(BLEU, study.name)]["value"] == pytest.approx(
            _grouped_spearman(human, systems, metric), abs=1e-12
        )
        assert accuracy[(BLEU, study.name)]["value"] == pytest.approx(
            _system_accuracy(human, systems, metric)
        )
        assert by_context[(BLEU, study.name)]["ci"] is not None


def test_only_the_requesters_own_studies_are_reachable(studies) -> None:
    first, _ = studies
    stranger = ResearcherFactory.create(username="mallory")
    theirs = benchmark_study(stranger, "theirs", {BLEU: bleu_like}, seed=3, contexts=3)

    assert _get(stranger, studies=str(first.pk)).status_code == 404
    assert _get(first.owner, studies=f"{first.pk},{theirs.pk}").status_code == 404
    assert APIClient().get(reverse("api-benchmarks"), {"studies": str(first.pk)}).status_code in (401, 403)
    client = APIClient()
    client.force_login(stranger)
    page = client.get(reverse("correlation:benchmark"), {"studies": str(first.pk)})
    assert page.status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"studies": ""}, "studies"),
        ({"studies": "x"}, "studies"),
        ({"statistic": "bleu"}, "statistic"),
        ({"statistic": "reply_accuracy", "grouping": "system"}, "grouping"),
        ({"metrics": "nonsense"}, "metrics"),
        ({"question": "fluency"}, "question"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(studies, params, field) -> None:
    first, _ = studies
    response = _get(first.owner, **{"studies": str(first.pk), **params})
    assert response.status_code == 400
    assert field in json.loads(response.content)


def test_a_list_may_be_comma_separated_or_repeated(studies) -> None:
    """The page's check boxes send ``studies=1&studies=2``; the API documents ``studies=1,2``: both read
    the same studies, and so do metrics."""
    first, second = studies
    joined = _get(first.owner, studies=f"{first.pk},{second.pk}", metrics="bleu-2,meteor")
    repeated = _get(first.owner, studies=[first.pk, second.pk], metrics=["bleu-2", "meteor"])
    assert joined.status_code == repeated.status_code == 200
    assert json.loads(joined.content) == json.loads(repeated.content)
    assert len(json.loads(joined.content)["studies"]) == 2


def test_the_schema_documents_the_endpoint() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/benchmarks/"]["get"]
    assert operation["operationId"] == "metric_benchmark"
    assert {p["name"] for p in operation["parameters"]} >= {"studies", "metrics", "statistic", "grouping"}


def test_the_page_shows_the_table_heat_map_and_downloads(studies) -> None:
    first, second = studies
    client = APIClient()
    client.force_login(first.owner)
    url = reverse("correlation:benchmark")
    empty = client.get(url)
    assert empty.status_code == 200
    assert "GRADE convai2" in empty.content.decode()
    assert 'id="nav-benchmark"' in empty.content.decode()

    query = {"studies": [first.pk, second.pk], "statistic": "kendall", "grouping": "context"}
    page = client.get(url, query)
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="benchmark-table"' in html
    assert 'id="benchmark-figure-data"' in html
    assert "meteor on own pilot: not scored on this study" in html

    latex = client.get(url, {**query, "download": "latex"})
    assert latex["Content-Disposition"] == 'attachment; filename="metric-benchmark.tex"'
    assert r"\toprule" in latex.content.decode()
    lines = list(csv.DictReader(io.StringIO(client.get(url, {**query, "download": "csv"}).content.decode())))
    assert len(lines) == 3 * 2
    assert {line["statistic"] for line in lines} == {"kendall"}
    bad = client.get(url, {**query, "grouping": "turn"})
    assert bad.status_code == 400
    assert "grouping: " in bad.content.decode()


def test_the_command_prints_every_format(studies) -> None:
    first, second = studies

    def run(*extra: str) -> str:
        out = io.StringIO()
        call_command("metric_benchmark", first.name, str(second.pk), "--resamples", "0", *extra, stdout=out)
        return out.getvalue()

    table = run("--metrics", "bleu-2,meteor")
    assert table.splitlines()[1].split() == [
        "metric",
        "GRADE",
        "convai2",
        "own",
        "pilot",
        "mean",
        "mean",
        "rank",
        "studies",
    ]
    assert "meteor on own pilot: not scored on this study" in table
    document = json.loads(run("--format", "json", "--statistic", "spearman", "--grouping", "system"))
    assert document["statistic"] == "spearman"
    assert document["grouping"] == "system"
    human, _, systems, metric = _direct(first, BLEU)
    assert _cells(document)[(BLEU, first.name)]["value"] == pytest.approx(
        _grouped_spearman(human, systems, metric), abs=1e-12
    )
    assert r"\begin{tabular}" in run("--format", "latex")
    assert run("--format", "csv").startswith("metric,signature,study,")
    with pytest.raises(CommandError, match=r"^grouping: "):
        run("--statistic", "system_accuracy", "--grouping", "context")
    with pytest.raises(CommandError, match="metrics: no study here has 'rouge'"):
        run("--metrics", "rouge")


def test_a_long_study_name_heads_its_column_shortened_with_the_full_name_on_hover(researcher) -> None:
    """study names of 40 and more characters made every study column wide; a long one is shortened
    in the header (whole words from both ends), its full name the header's title, the table in a frame that
    scrolls sideways inside the card."""
    long_name = "GRADE ConvAI2 transformer generator with persona and six raters"
    first = benchmark_study(researcher, long_name, {BLEU: bleu_like}, seed=1)
    second = benchmark_study(researcher, "own pilot", {BLEU: bleu_like}, seed=2)
    client = APIClient()
    client.force_login(researcher)
    html = client.get(reverse("correlation:benchmark"), {"studies": [first.pk, second.pk]}).content.decode()
    assert f'<th class="num study" title="{long_name}">GRADE ConvAI2 transformer … six raters</th>' in html
    assert '<th class="num study" title="own pilot">own pilot</th>' in html
    assert html.index('class="table-frame"') < html.index('id="benchmark-table"')
    assert "correlation/benchmark.css" in html
