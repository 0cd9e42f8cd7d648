"""correlation/conversations/selectors.py: replies grouped into conversations, scored turn by turn, the
dialog-level mean of each conversation and the per-system table (Sinha et al., 2020, section 4.2)."""

from __future__ import annotations

import math
import statistics

import pytest

from correlation.conversations.selectors import (
    conversation_details,
    conversation_metric_names,
    default_conversation_metric,
    metric_choice,
    parse_turn_id,
    study_conversations,
    study_has_conversations,
    system_dialog_table,
)
from scoring.models import MetricScore
from tests.correlation.builders import signature
from tests.correlation.conversations.conversation_builders import add_conversation, chat
from tests.factories import DialogContextFactory, ResponseFactory, StudyFactory

pytestmark = pytest.mark.django_db

SIX_TURNS = chat("hi", "hello!", "how are you?", "fine.", "what now?", "let us talk.")


@pytest.fixture
def study(researcher):
    return StudyFactory.create(owner=researcher, name="chats")


def test_turns_come_in_turn_order_with_the_scores_of_the_bot_replies(study) -> None:
    maude = signature("maude")
    add_conversation(
        study=study,
        conversation="c1",
        system="bot-a",
        turns=SIX_TURNS,
        scores={maude: [0.2, 0.5, 0.8]},
        order=[2, 0, 1],  # created out of order: turn order comes from the ids, not the rows
    )

    [entry] = study_conversations(study=study, metric=metric_choice(study=study, name="maude"))

    assert (entry.conversation, entry.system) == ("c1", "bot-a")
    assert [(t.index, t.speaker, t.text, t.score) for t in entry.turns] == [
        (0, "user", "hi", None),
        (1, "bot", "hello!", 0.2),
        (2, "user", "how are you?", None),
        (3, "bot", "fine.", 0.5),
        (4, "user", "what now?", None),
        (5, "bot", "let us talk.", 0.8),
    ]
    assert [turn.index for turn in entry.replies] == [1, 3, 5]
    assert entry.scored == 3
    assert entry.mean == pytest.approx(0.5)


def test_the_dialog_level_mean_counts_only_scored_replies(study) -> None:
    maude = signature("maude")
    add_conversation(
        study=study,
        conversation="c1",
        system="bot-a",
        turns=SIX_TURNS,
        scores={maude: [0.3, None, math.inf]},  # one reply not scored, one scored inf (not finite)
    )
    add_conversation(study=study, conversation="c2", system="bot-a", turns=chat("hey", "yo"))

    first, second = study_conversations(study=study, metric=metric_choice(study=study, name="maude"))

    assert [turn.score for turn in first.replies] == [0.3, None, None]
    assert (first.scored, first.mean) == (1, pytest.approx(0.3))
    assert (second.conversation, second.scored, second.mean) == ("c2", 0, None)


def test_the_per_system_table_gives_mean_and_sample_sd_of_the_dialog_level_means(study) -> None:
    maude = signature("maude")
    add_conversation(
        study=study, conversation="a1", system="bot-a", turns=SIX_TURNS, scores={maude: [0.2, 0.4, 0.6]}
    )
    add_conversation(
        study=study, conversation="a2", system="bot-a", turns=SIX_TURNS, scores={maude: [0.7, 0.9, 0.8]}
    )
    add_conversation(study=study, conversation="a3", system="bot-a", turns=chat("hey", "yo"))  # no score
    add_conversation(
        study=study, conversation="b1", system="bot-b", turns=chat("hey", "yo"), scores={maude: [0.1]}
    )

    conversations = study_conversations(study=study, metric=metric_choice(study=study, name="maude"))
    rows = {row.system: row for row in system_dialog_table(conversations)}

    assert list(rows) == ["bot-a", "bot-b"]
    assert (rows["bot-a"].conversations, rows["bot-a"].scored) == (3, 2)
    assert rows["bot-a"].mean == pytest.approx(0.6)  # the mean of 0.4 and 0.8
    assert rows["bot-a"].sd == pytest.approx(statistics.stdev([0.4, 0.8]))
    assert rows["bot-a"].sd == pytest.approx(0.2828427, abs=1e-6)
    assert (rows["bot-b"].conversations, rows["bot-b"].scored) == (1, 1)
    assert rows["bot-b"].mean == pytest.approx(0.1)
    assert rows["bot-b"].sd is None  # one dialog-level score has no spread


def test_only_conversation_shaped_contexts_count(study) -> None:
    maude = signature("maude")
    plain = ResponseFactory.create(context=DialogContextFactory.create(study=study, external_id="73_4"))
    MetricScore.objects.create(response=plain, signature=maude, value=0.9)
    assert not study_has_conversations(study=study)
    assert study_conversations(study=study, metric=metric_choice(study=study, name="maude")) == []
    assert conversation_metric_names(study=study) == []

    add_conversation(
        study=study, conversation="c1", system="bot-a", turns=chat("hey", "yo"), scores={maude: [0.4]}
    )
    assert study_has_conversations(study=study)
    [entry] = study_conversations(study=study, metric=metric_choice(study=study, name="maude"))
    assert entry.mean == pytest.approx(0.4)


def test_conversation_ids_may_hold_the_separator_and_one_id_does_not_match_a_longer_one(study) -> None:
    add_conversation(study=study, conversation="c1", system="s", turns=chat("a", "b"))
    add_conversation(study=study, conversation="c1#x", system="s", turns=chat("c", "d", "e", "f"))
    add_conversation(study=study, conversation="c10", system="s", turns=chat("g", "h"))

    assert parse_turn_id("c1#x#3") == ("c1#x", 3)
    assert parse_turn_id("73_4") is None
    assert [entry.conversation for entry in study_conversations(study=study, metric=None)] == [
        "c1",
        "c1#x",
        "c10",
    ]
    [only] = conversation_details(study=study, conversation="c1", metrics=[])
    assert [row.text for row in only.rows] == ["a", "b"]
    assert conversation_details(study=study, conversation="c", metrics=[]) == []


def test_the_default_metric_is_maude_when_scored_else_the_first_by_name(study) -> None:
    bleu, maude, ruber = signature("bleu-2"), signature("maude"), signature("ruber")
    add_conversation(
        study=study, conversation="c1", system="s", turns=chat("a", "b"), scores={bleu: [0.1], ruber: [0.2]}
    )
    names = conversation_metric_names(study=study)
    assert names == ["bleu-2", "ruber"]
    assert default_conversation_metric(names) == "bleu-2"

    add_conversation(study=study, conversation="c2", system="s", turns=chat("a", "b"), scores={maude: [0.3]})
    names = conversation_metric_names(study=study)
    assert names == ["bleu-2", "maude", "ruber"]
    assert default_conversation_metric(names) == "maude"
    assert default_conversation_metric([]) is None


def test_of_several_signatures_of_one_name_the_most_used_is_read(study) -> None:
    old = signature("maude", extra="|model:old")
    new = signature("maude", extra="|model:new")
    add_conversation(
        study=study,
        conversation="c1",
        system="s",
        turns=SIX_TURNS,
        scores={old: [0.1, 0.1, 0.1], new: [0.9, None, 0.7]},
    )

    choice = metric_choice(study=study, name="maude")
    assert choice.signature == old
    [entry] = study_conversations(study=study, metric=choice)
    assert entry.mean == pytest.approx(0.1)
    assert metric_choice(study=study, name="nothing").signature is None


def test_details_give_one_score_per_metric_and_one_entry_per_system(study) -> None:
    maude, bleu = signature("maude"), signature("bleu-2")
    add_conversation(
        study=study,
        conversation="c1",
        system="bot-a",
        turns=SIX_TURNS,
        scores={maude: [0.2, 0.4, 0.9], bleu: [0.0, 0.5, None]},
    )
    add_conversation(
        study=study, conversation="c1", system="bot-b", turns=SIX_TURNS, scores={maude: [0.1, 0.1, 0.4]}
    )
    metrics = [metric_choice(study=study, name="maude"), metric_choice(study=study, name="bleu-2")]

    first, second = conversation_details(study=study, conversation="c1", metrics=metrics)

    assert (first.system, second.system) == ("bot-a", "bot-b")
    assert [(row.index, row.is_reply, row.scores) for row in first.rows] == [
        (0, False, [None, None]),
        (1, True, [0.2, 0.0]),
        (2, False, [None, None]),
        (3, True, [0.4, 0.5]),
        (4, False, [None, None]),
        (5, True, [0.9, None]),
    ]
    assert first.means == [pytest.approx(0.5), pytest.approx(0.25)]
    assert first.scored == [3, 2]
    assert second.means == [pytest.approx(0.2), None]
    assert [summary[0] for summary in first.summaries] == ["maude", "bleu-2"]
    assert first.replies == 3


def test_the_speaker_of_the_last_reply_comes_from_the_other_replies(study) -> None:
    add_conversation(
        study=study, conversation="c1", system="s", turns=chat("hi", "yo", "so?", "ok"), bot="bot"
    )
    [entry] = study_conversations(study=study, metric=None)
    assert [turn.speaker for turn in entry.turns] == ["user", "bot", "user", "bot"]
