"""The researcher's item browser (/studies/<id>/items/) through Django's test client: owner only, the
filters and the sort, a bounded number of queries whatever the size of the study, hostile text escaped,
and adjudication from the list and from a reply's page."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import (
    Adjudication,
    Annotator,
    ItemNote,
    Question,
    Rating,
    Response,
    Study,
)
from annotation.services.adjudication import adjudication_set
from annotation.services.studies import study_create
from scoring.models import MetricScore, MetricSignature
from tests.factories import (
    DialogContextFactory,
    ResearcherFactory,
    ResponseFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'
# Session, user, role, study with its questions, systems, count, page, ratings, notes, metric scores, the
# summary's three counts, and the template's role check: the same for 50 rows as for 5.
MAX_QUERIES = 15


def _study(replies: int = 6) -> tuple[Study, list[Response]]:
    """``replies`` replies alternating between two systems, each rated 0-2 by three raters; reply i has
    disagreement i % 3."""
    owner = ResearcherFactory.create()
    study = study_create(owner=owner, name=f"browser {owner.pk}")
    question = Question.objects.get(study=study)
    bots = [SystemFactory.create(study=study, name=name) for name in ("alpha-bot", "beta-bot")]
    raters = [Annotator.objects.create(study=study, pseudonym=f"rater-{n}") for n in range(3)]
    responses = []
    for index in range(replies):
        context = DialogContextFactory.create(
            study=study, turns=[{"speaker": "A", "text": f"question {index} ?"}]
        )
        response = ResponseFactory.create(
            context=context, system=bots[index % 2], text=f"reply number {index}"
        )
        values = ([1, 1, 1], [1, 1, 2], [0, 1, 2])[index % 3]
        Rating.objects.bulk_create(
            Rating(annotator=rater, response=response, question=question, value=value)
            for rater, value in zip(raters, values, strict=True)
        )
        responses.append(response)
    return study, responses


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _rows(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr id="item-(\d+)"', html)]


def _url(study: Study, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("annotation:study-items", args=[study.pk]) + (f"?{query}" if query else "")


def test_only_the_owner_gets_in() -> None:
    study, responses = _study(2)
    page = _client(study.owner).get(_url(study))
    assert page.status_code == 200
    assert _rows(page.content.decode()) == [response.pk for response in responses]

    other_researcher = ResearcherFactory.create()
    annotator_user = UserFactory.create()
    Annotator.objects.create(study=study, pseudonym="volunteer", user=annotator_user)
    detail = reverse("annotation:study-item", args=[study.pk, responses[0].pk])
    for user in (other_researcher, annotator_user):
        client = _client(user)
        assert client.get(_url(study)).status_code == 404
        assert client.get(detail).status_code == 404
        exclude = reverse("annotation:study-item-exclude", args=[study.pk, responses[0].pk])
        assert client.post(exclude, {"excluded": "1"}).status_code == 404
    assert not Adjudication.objects.exists()
    anonymous = Client().get(_url(study))
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    # A reply of another study, under this study's id, is a 404 too.
    _, other_responses = _study(1)
    assert (
        _client(study.owner)
        .get(reverse("annotation:study-item", args=[study.pk, other_responses[0].pk]))
        .status_code
        == 404
    )


def test_the_study_and_progress_pages_link_to_the_browser() -> None:
    study, _ = _study(1)
    client = _client(study.owner)
    url = reverse("annotation:study-items", args=[study.pk])
    for page in ("annotation:study-detail", "annotation:study-annotation"):
        assert f'href="{url}"' in client.get(reverse(page, args=[study.pk])).content.decode()


def test_filters_and_sort() -> None:
    study, responses = _study(6)
    client = _client(study.owner)
    alpha = study.systems.get(name="alpha-bot")
    annotator = Annotator.objects.get(study=study, pseudonym="rater-0")
    ItemNote.objects.create(
        annotator=annotator, response=responses[1], context=responses[1].context, kind="flag", reason="broken"
    )
    ItemNote.objects.create(
        annotator=annotator, response=responses[2], context=responses[2].context, kind="comment", text="hm"
    )
    # A flag on the conversation (a writing item) counts for its replies.
    ItemNote.objects.create(annotator=annotator, context=responses[4].context, kind="flag", reason="other")
    adjudication_set(response=responses[3], excluded=True, gold={})

    def rows(**params: str) -> list[int]:
        page = client.get(_url(study, **params))
        assert page.status_code == 200
        return _rows(page.content.decode())

    ids = [response.pk for response in responses]
    assert rows(system=str(alpha.pk)) == ids[0::2]
    assert rows(min_disagreement="2") == [ids[2], ids[5]]
    assert rows(min_disagreement="1") == [ids[1], ids[2], ids[4], ids[5]]
    assert rows(flagged="on") == [ids[1], ids[4]]
    assert rows(commented="on") == [ids[2]]
    assert rows(excluded="only") == [ids[3]]
    assert rows(excluded="hide") == [pk for pk in ids if pk != ids[3]]
    assert rows(sort="disagreement") == [ids[2], ids[5], ids[1], ids[4], ids[0], ids[3]]
    assert rows(flagged="on", system=str(alpha.pk)) == [ids[4]]

    page = client.get(_url(study, min_disagreement="-1"))
    assert page.status_code == 400
    assert "Disagreement ≥" in page.content.decode()
    assert _rows(page.content.decode()) == []
    assert client.get(_url(study, system="999999")).status_code == 400


def test_pages_cost_a_bounded_number_of_queries(django_assert_max_num_queries) -> None:
    study, responses = _study(60)
    annotator = Annotator.objects.get(study=study, pseudonym="rater-0")
    signatures = [
        MetricSignature.objects.create(text=f"m{n}|v:1", name=f"m{n}", parameters={}, version="1")
        for n in range(3)
    ]
    for response in responses:
        ItemNote.objects.create(
            annotator=annotator, response=response, context=response.context, kind="flag", reason="offensive"
        )
        ItemNote.objects.create(annotator=annotator, context=response.context, kind="comment", text="ctx")
        MetricScore.objects.bulk_create(
            MetricScore(response=response, signature=signature, value=0.5) for signature in signatures
        )
        adjudication_set(response=response, excluded=response.pk % 2 == 0, gold={"appropriateness": 1})
    client = _client(study.owner)
    client.get(_url(study))  # sessions, content types: warm
    for params in ({}, {"sort": "disagreement", "flagged": "on", "commented": "on"}, {"page": "2"}):
        with django_assert_max_num_queries(MAX_QUERIES):
            page = client.get(_url(study, **params))
        assert page.status_code == 200
        assert len(_rows(page.content.decode())) == (10 if params.get("page") else 50)
    with django_assert_max_num_queries(MAX_QUERIES):
        assert (
            client.get(reverse("annotation:study-item", args=[study.pk, responses[0].pk])).status_code == 200
        )


def test_hostile_text_is_escaped_everywhere() -> None:
    study, responses = _study(1)
    response = responses[0]
    response.text = HOSTILE
    response.save()
    context = response.context
    context.turns = [{"speaker": HOSTILE, "text": HOSTILE}]
    context.external_id = HOSTILE
    context.save()
    system = response.system
    system.name = HOSTILE
    system.save()
    annotator = Annotator.objects.get(study=study, pseudonym="rater-0")
    annotator.pseudonym = HOSTILE
    annotator.save()
    ItemNote.objects.create(
        annotator=annotator, response=response, context=context, kind="comment", text=HOSTILE
    )
    signature = MetricSignature.objects.create(text=HOSTILE, name=HOSTILE, parameters={}, version="1")
    MetricScore.objects.create(response=response, signature=signature, value=0.5)
    adjudication_set(response=response, excluded=True, gold={}, note=HOSTILE)
    client = _client(study.owner)
    for url in (_url(study), reverse("annotation:study-item", args=[study.pk, response.pk])):
        html = client.get(url).content.decode()
        assert "<script>alert" not in html
        assert "&lt;script&gt;alert" in html


def test_exclude_from_the_list_keeps_the_filters_and_undo_brings_it_back() -> None:
    study, responses = _study(3)
    client = _client(study.owner)
    target = responses[1]
    exclude = reverse("annotation:study-item-exclude", args=[study.pk, target.pk])

    answer = client.post(exclude, {"excluded": "1", "back": "min_disagreement=1&page=1"})

    assert answer.status_code == 302
    assert answer["Location"] == _url(study, min_disagreement="1", page="1") + f"#item-{target.pk}"
    assert Adjudication.objects.get(response=target).excluded
    page = client.get(_url(study, excluded="only")).content.decode()
    assert _rows(page) == [target.pk]
    assert 'data-excluded="1"' in page
    assert "Include again" in page

    # Only a query string goes back: nothing can send the researcher elsewhere.
    answer = client.post(exclude, {"excluded": "0", "back": "https://evil.example/?x=1"})
    assert answer["Location"].startswith(reverse("annotation:study-items", args=[study.pk]) + "?")
    assert not Adjudication.objects.get(response=target).excluded

    undo = reverse("annotation:study-item-undo", args=[study.pk, target.pk])
    assert client.post(undo, {"return_to": "item"}).status_code == 302
    decision = Adjudication.objects.get(response=target)  # kept, cleared: nothing deleted
    assert (decision.excluded, decision.gold, decision.note) == (False, {}, "")


def test_the_adjudication_form_names_the_bad_field_and_changes_nothing() -> None:
    study, responses = _study(1)
    client = _client(study.owner)
    url = reverse("annotation:study-item-adjudicate", args=[study.pk, responses[0].pk])

    page = client.post(url, {"excluded": "1", "gold-appropriateness": "7", "note": "typo"})

    assert page.status_code == 400
    html = page.content.decode()
    assert "gold.appropriateness" in html
    assert "outside the scale 0-2" in html
    assert 'value="7"' in html  # what was typed comes back
    assert not Adjudication.objects.exists()

    answer = client.post(
        url, {"excluded": "1", "gold-appropriateness": "0", "note": "off topic", "back": "a=b"}
    )
    assert answer.status_code == 302
    decision = Adjudication.objects.get(response=responses[0])
    assert (decision.excluded, decision.gold, decision.note) == (True, {"appropriateness": 0}, "off topic")
    assert decision.decided_by == study.owner
    detail = client.get(answer["Location"]).content.decode()
    assert 'id="excluded-tag"' in detail
    assert "saved" in detail
    summary = client.get(_url(study)).content.decode()
    assert "1 excluded from reports · 1 with a gold value" in summary


def test_changes_need_the_csrf_token() -> None:
    study, responses = _study(1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(study.owner)
    exclude = reverse("annotation:study-item-exclude", args=[study.pk, responses[0].pk])
    assert client.post(exclude, {"excluded": "1"}).status_code == 403
    assert not Adjudication.objects.exists()


def test_a_replys_metric_scores_read_as_their_display_names() -> None:
    """three scores of BLEU-4 (nltk, nlg-eval; and one with several references) read as three
    different names, each with its signature on hover."""
    study, responses = _study(1)
    texts = {
        "bleu-4|impl:nltk|refs:single|version:1": "bleu-4 (nltk, single)",
        "bleu-4|impl:nlg-eval|refs:single|version:1": "bleu-4 (nlg-eval)",
        "bleu-4|impl:nltk|refs:multi|version:1": "bleu-4 (nltk, multi)",
    }
    for text in texts:
        signature = MetricSignature.objects.create(text=text, name="bleu-4", parameters={}, version="1")
        MetricScore.objects.create(response=responses[0], signature=signature, value=0.5)
    page = _client(study.owner).get(reverse("annotation:study-item", args=[study.pk, responses[0].pk]))
    html = page.content.decode()
    for text, name in texts.items():
        assert f'<li title="{text}"><span class="metric-name">{name}</span>' in html
