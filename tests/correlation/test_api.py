"""GET /api/studies/<id>/correlations/: the owner's report rows, 404 for others, documented in the schema."""

from __future__ import annotations

import json
from typing import get_type_hints

import pytest
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.serializers import ListSerializer, Serializer
from rest_framework.test import APIClient

from correlation import api_urls
from correlation.report.api import StudyReportOutputSerializer
from stats.report.document_types import MetricRow, QuestionDocument
from tests.correlation.builders import Item, add_items, signature
from tests.correlation.report_helpers import assert_same_numbers, report_document, report_get
from tests.factories import QuestionFactory, ResearcherFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(researcher):
    study = StudyFactory.create(owner=researcher)
    appropriateness = QuestionFactory.create(study=study, name="appropriateness")
    QuestionFactory.create(study=study, name="fluency", position=1)
    bleu, rouge = signature("bleu-2", refs="multi"), signature("rouge-l")
    add_items(
        study=study,
        question=appropriateness,
        items=[
            Item(
                f"sys{i % 3}",
                ratings=[i % 3, (i // 2) % 3],
                scores={bleu.text: (i * 7 % 10) / 10, rouge.text: 0.5},
            )
            for i in range(9)
        ],
    )
    return study


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _url(study) -> str:
    return reverse("api-study-correlations", args=[study.pk])


def test_the_owner_gets_the_whole_report_document(study) -> None:
    response = report_get(_client(study.owner), _url(study))

    assert response.status_code == 200
    body = json.loads(response.content)  # real JSON: a NaN would not parse as null
    document = report_document(study, resamples=1000)
    assert body["study"] == study.pk
    assert body["question"] is None
    assert_same_numbers(body["rows"], document["rows"])
    assert_same_numbers(body["system_level"], document["system_level"])
    for section in ("human", "agreement", "metric_comparisons", "filter", "per_system", "questions"):
        assert_same_numbers(body[section], document[section])
    assert [entry["label"] for entry in body["human"]] == ["Human (Avg)", "Human (Max)"] * 2
    assert {"krippendorff_alpha_ordinal", "fleiss_kappa", "icc", "cohen_kappa_mean", "annotators"} <= set(
        body["agreement"][0]
    )
    assert {"williams_p", "bootstrap_p"} <= set(body["metric_comparisons"][0])
    assert {"kendall", "kendall_p", "pearson_ci_bootstrap", "spearman_ci_bootstrap"} <= set(body["rows"][0])
    assert [(r["question"], r["metric"]) for r in body["rows"]] == [
        ("appropriateness", "bleu-2"),
        ("appropriateness", "rouge-l"),
        ("fluency", "bleu-2"),
        ("fluency", "rouge-l"),
    ]
    bleu = body["rows"][0]
    assert bleu["references"] == "multi"
    assert bleu["n"] == 9
    assert isinstance(bleu["pearson"], float)
    assert len(bleu["spearman_ci"]) == 2
    rouge = body["rows"][1]
    assert (rouge["pearson"], rouge["pearson_ci"], rouge["note"]) == (
        None,
        [None, None],
        "metric is constant",
    )
    assert [s["system"] for s in body["system_level"][0]["systems"]] == ["sys0", "sys1", "sys2"]


def test_one_question_by_name(study) -> None:
    body = report_get(_client(study.owner), _url(study), {"question": "fluency"}).json()
    assert body["question"] == "fluency"
    assert {row["question"] for row in body["rows"]} == {"fluency"}
    assert all(row["n"] == 0 for row in body["rows"])

    unknown = report_get(_client(study.owner), _url(study), {"question": "nope"})
    assert unknown.status_code == 400
    assert "question" in unknown.json()
    bad_filter = report_get(_client(study.owner), _url(study), {"filter": "strict"})
    assert bad_filter.status_code == 400
    assert "is not" in bad_filter.json()["filter"][0]


def test_options_change_the_document(study) -> None:
    client = _client(study.owner)
    unfiltered = report_get(client, _url(study), {"filter": "none", "resamples": "0"}).json()
    assert unfiltered["options"]["filter"] == "none"
    assert unfiltered["rows"][0]["pearson_ci_bootstrap"] == [None, None]
    assert unfiltered["filter"][0]["kind"] == "none"
    normalised = report_get(client, _url(study), {"normalise": "z"}).json()
    assert normalised["filter"][0]["normalisation"] == "z"


def test_nobody_else_sees_it(study) -> None:
    assert _client(ResearcherFactory.create(username="bob")).get(_url(study)).status_code == 404
    assert _client(UserFactory.create(username="carol")).get(_url(study)).status_code == 404
    assert APIClient().get(_url(study)).status_code in {401, 403}
    superuser = UserFactory.create(username="root", is_superuser=True)
    assert report_get(_client(superuser), _url(study)).status_code == 200


def test_the_schema_documents_the_response_fields() -> None:
    schema = SchemaGenerator(patterns=api_urls.urlpatterns).get_schema(request=None, public=True)
    operation = schema["paths"]["/studies/{study_id}/correlations/"]["get"]
    assert sorted(p["name"] for p in operation["parameters"] if p["in"] == "query") == [
        "filter",
        "grouping",
        "normalise",
        "question",
        "resamples",
        "seed",
        "stale",
    ]
    reference = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    output = schema["components"]["schemas"][reference.rsplit("/", 1)[-1]]
    assert {
        "study",
        "question",
        "rows",
        "system_level",
        "human",
        "agreement",
        "metric_comparisons",
        "filter",
    } <= set(output["properties"])
    row_name = output["properties"]["rows"]["items"]["$ref"].rsplit("/", 1)[-1]
    row = schema["components"]["schemas"][row_name]["properties"]
    assert {
        "metric",
        "references",
        "n",
        "pearson",
        "pearson_p",
        "spearman",
        "spearman_p",
        "pearson_ci",
        "kendall",
        "kendall_p",
        "pearson_ci_bootstrap",
        "spearman_ci_bootstrap",
    } <= set(row)
    assert row["pearson"]["nullable"] is True


def test_the_schema_names_only_keys_of_the_typed_document() -> None:
    """The serializer documents the payload (stats/report/document_types.py types it for mypy): a field it
    names that the document does not have would be a schema promising what never comes."""
    serializer = StudyReportOutputSerializer()
    assert set(serializer.fields) <= set(get_type_hints(QuestionDocument))
    rows = serializer.fields["rows"]
    assert isinstance(rows, ListSerializer)
    assert isinstance(rows.child, Serializer)
    assert set(rows.child.fields) <= set(get_type_hints(MetricRow))
