"""The conversation pages: who may see them, the numbers they show, the per-turn chart, escaped text."""

from __future__ import annotations

import json

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from annotation.models import Annotator
from tests.correlation.builders import signature
from tests.correlation.conversations.conversation_builders import add_conversation, chat
from tests.correlation.report_helpers import report_page
from tests.factories import ResearcherFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert('pwned')</script> & <b>bold</b>"
SIX_TURNS = chat("hi", "hello!", "how are you?", "fine.", "what now?", "let us talk.")


@pytest.fixture
def chat_study(researcher):
    study = StudyFactory.create(owner=researcher, name="chat eval")
    maude, bleu = signature("maude"), signature("bleu-2")
    add_conversation(
        study=study,
        conversation="a1",
        system="bot-a",
        turns=SIX_TURNS,
        scores={maude: [0.2, 0.4, 0.6], bleu: [0.1, 0.1, 0.1]},
    )
    add_conversation(
        study=study, conversation="a2", system="bot-a", turns=SIX_TURNS, scores={maude: [0.7, 0.9, 0.8]}
    )
    add_conversation(
        study=study, conversation="b1", system="bot-b", turns=chat("hey", "yo"), scores={maude: [0.125]}
    )
    return study


def _list_url(study, **query: str) -> str:
    url = reverse("correlation:study-conversations", args=[study.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def _detail_url(study, conversation: str, query: str = "") -> str:
    url = reverse("correlation:study-conversation", args=[study.pk, conversation])
    return url + (f"?{query}" if query else "")


def _section(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</table>", start)]


def test_the_owner_sees_the_per_system_table_and_every_conversation(client, chat_study) -> None:
    client.force_login(chat_study.owner)
    page = client.get(_list_url(chat_study))

    assert page.status_code == 200
    html = page.content.decode()
    assert '<option value="maude" selected>' in html  # the default metric
    systems = _section(html, "system-dialog-table")
    bot_a = systems[systems.index("bot-a") :]
    assert ">2<" in bot_a[: bot_a.index("</tr>")]
    assert "0.6000" in bot_a  # mean of the dialog-level means 0.4 and 0.8
    assert "0.2828" in bot_a  # their sample sd
    bot_b = systems[systems.index("bot-b") :]
    assert "0.1250" in bot_b
    assert "—" in bot_b
    conversations = _section(html, "conversation-table")
    assert conversations.index(">a1<") < conversations.index(">a2<") < conversations.index(">b1<")
    assert _detail_url(chat_study, "a1", "metric=maude").replace("&", "&amp;") in conversations
    assert "0.4000" in conversations
    assert "0.8000" in conversations


def test_the_metric_picker_switches_the_numbers(client, chat_study) -> None:
    client.force_login(chat_study.owner)
    html = client.get(_list_url(chat_study, metric="bleu-2")).content.decode()

    assert '<option value="bleu-2" selected>' in html
    conversations = _section(html, "conversation-table")
    a1 = conversations[conversations.index(">a1<") :]
    assert "0.1000" in a1[: a1.index("</tr>")]
    a2 = conversations[conversations.index(">a2<") :]
    assert "—" in a2[: a2.index("</tr>")]  # a2 has no bleu-2 score
    assert client.get(_list_url(chat_study, metric="nope")).status_code == 404


def test_a_conversation_page_draws_the_per_turn_curve_above_its_turns(client, chat_study) -> None:
    client.force_login(chat_study.owner)
    page = client.get(_detail_url(chat_study, "a1", "metric=maude&metric=bleu-2"))

    assert page.status_code == 200
    html = page.content.decode()
    assert html.index('id="turn-plot"') < html.index('class="report-table turn-table"')
    figure = page.context["figure"]
    assert [trace["name"] for trace in figure["data"]] == ["maude", "bleu-2"]
    assert figure["data"][0]["x"] == [1, 3, 5]
    assert figure["data"][0]["y"] == pytest.approx([0.2, 0.4, 0.6])
    embedded = html[html.index('id="turn-figure"') :]
    embedded = embedded[embedded.index(">") + 1 : embedded.index("</script>")]
    assert json.loads(embedded) == json.loads(json.dumps(figure))
    assert '<script src="/static/vendor/plotly/plotly.min.js"></script>' in html
    assert '<script src="/static/correlation/conversation.js"></script>' in html
    assert finders.find("correlation/conversation.js")
    turns = html[html.index("turn-table") :]
    assert turns.index("how are you?") < turns.index("let us talk.")
    assert "0.6000" in turns
    assert "0.1000" in turns
    means = html[html.index('class="dialog-means"') :]
    assert "0.4000" in means[: means.index("</p>")]  # maude's dialog-level score of a1
    assert "3 of 3 replies scored" in means


def test_a_conversation_page_without_a_chosen_metric_uses_the_default(client, chat_study) -> None:
    client.force_login(chat_study.owner)
    page = client.get(_detail_url(chat_study, "b1"))
    assert page.status_code == 200
    assert page.context["chosen"] == ["maude"]
    assert 'value="maude" checked' in page.content.decode()
    assert client.get(_detail_url(chat_study, "zz")).status_code == 404
    assert client.get(_detail_url(chat_study, "a1", "metric=nope")).status_code == 404


def test_user_text_stays_escaped(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    add_conversation(
        study=study,
        conversation="<i>c</i>",
        system="<b>evil</b>",
        turns=[("user", HOSTILE), ("<u>bot</u>", HOSTILE)],
        bot="<u>bot</u>",
        scores={signature("maude"): [0.5]},
    )
    client.force_login(researcher)
    listing = client.get(_list_url(study)).content.decode()
    detail_page = client.get(_detail_url(study, "<i>c</i>"))
    detail = detail_page.content.decode()

    assert detail_page.status_code == 200
    for html in (listing, detail):
        assert "<b>evil</b>" not in html
        assert "&lt;b&gt;evil&lt;/b&gt;" in html
        assert "<i>c</i>" not in html
    assert "<script>alert" not in detail
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in detail
    assert "<u>bot</u>" not in detail
    trace = detail_page.context["figure"]["data"][0]
    assert trace["text"] == ["&lt;script&gt;alert('pwned')&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"]


def test_a_study_without_conversations_says_so_and_its_report_does_not_link_here(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    client.force_login(researcher)
    page = client.get(_list_url(study))
    assert page.status_code == 200
    assert 'id="no-conversations"' in page.content.decode()
    report = report_page(client, reverse("correlation:study-report", args=[study.pk])).content.decode()
    assert 'id="conversations-link"' not in report


def test_conversations_without_scores_are_listed_with_a_message(client, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    add_conversation(study=study, conversation="c1", system="s", turns=chat("hey", "yo"))
    client.force_login(researcher)
    html = client.get(_list_url(study)).content.decode()
    assert 'id="no-scores"' in html
    assert ">c1<" in _section(html, "conversation-table")
    detail = client.get(_detail_url(study, "c1"))
    assert detail.status_code == 200
    assert detail.context["figure"] is None
    assert "yo" in detail.content.decode()


def test_the_report_links_to_the_conversations(client, chat_study) -> None:
    client.force_login(chat_study.owner)
    html = report_page(client, reverse("correlation:study-report", args=[chat_study.pk])).content.decode()
    link = html[html.index('id="conversations-link"') :]
    assert reverse("correlation:study-conversations", args=[chat_study.pk]) in link[: link.index("</p>")]


@pytest.mark.parametrize("who", ["other researcher", "annotator of the study", "plain user"])
def test_everyone_but_the_owner_gets_404(client, chat_study, who: str) -> None:
    if who == "other researcher":
        user = ResearcherFactory.create(username="bob")
    else:
        user = UserFactory.create(username="carol")
        if who == "annotator of the study":
            Annotator.objects.create(study=chat_study, user=user, pseudonym="carol")
    client.force_login(user)
    assert client.get(_list_url(chat_study)).status_code == 404
    assert client.get(_detail_url(chat_study, "a1")).status_code == 404


def test_anonymous_users_are_sent_to_log_in_and_superusers_may_read(client, chat_study) -> None:
    for url in (_list_url(chat_study), _detail_url(chat_study, "a1")):
        response = client.get(url)
        assert response.status_code == 302
        assert reverse("login") in response["Location"]
    admin = UserFactory.create(username="root", is_superuser=True, is_staff=True)
    client.force_login(admin)
    assert client.get(_list_url(chat_study)).status_code == 200
    assert client.get(_detail_url(chat_study, "a1")).status_code == 200
