"""Parsing files of metric scores computed elsewhere (scoring/external/file_format.py): what a row may
hold, and every problem named by file, line and field. Pure: no database."""

from __future__ import annotations

import json

import pytest

from kernel.importing.problems import ImportFile, ImportProblem, ProblemLog
from scoring.external.file_format import (
    ExternalScoreRow,
    external_metric_label,
    external_scores_parse,
    external_signature,
)


def parse(name: str, text: str) -> tuple[list[ExternalScoreRow], list[ImportProblem]]:
    log = ProblemLog()
    rows = external_scores_parse(ImportFile(name=name, data=text.encode("utf-8")), log)
    return rows, log.problems


def jsonl(*objects: dict[str, object]) -> str:
    return "\n".join(json.dumps(item) for item in objects) + "\n"


def where(problems: list[ImportProblem]) -> list[tuple[str, int | None, str | None]]:
    return [(problem.file, problem.line, problem.field) for problem in problems]


def test_csv_rows_in_the_three_ways_of_naming_a_reply() -> None:
    rows, problems = parse(
        "usr.csv",
        "reply_id,response_id,context_id,system,metric,value,signature\n"
        "r1,,,,usr,0.5,usr-v1|roberta\n"
        ",42,,,usr,1e-3,usr-v1|roberta\n"
        ",,c7,hred,usr,-2,usr-v1|roberta\n",
    )
    assert problems == []
    assert [(row.reply_id, row.response_id, row.context_id, row.system) for row in rows] == [
        ("r1", None, "", ""),
        ("", 42, "", ""),
        ("", None, "c7", "hred"),
    ]
    assert [row.value for row in rows] == [0.5, 0.001, -2.0]
    assert [row.line for row in rows] == [2, 3, 4]
    assert {row.signature for row in rows} == {"usr-v1|roberta"}


def test_jsonl_rows_accept_numbers_and_numeric_ids() -> None:
    rows, problems = parse(
        "judge.jsonl",
        jsonl(
            {"reply_id": 17, "metric": "gpt judge", "value": 4},
            {"response_id": "9", "metric": "gpt judge", "value": "3.5"},
        ),
    )
    assert problems == []
    assert [(row.reply_id, row.response_id, row.value) for row in rows] == [("17", None, 4.0), ("", 9, 3.5)]
    assert rows[0].signature == ""


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ("r1,usr,abc", "value", '"abc" is not a number'),
        ("r1,usr,nan", "value", "not a finite number"),
        ("r1,usr,inf", "value", "not a finite number"),
        ("r1,usr,", "value", "missing"),
        ("r1,,0.5", "metric", "missing"),
        (",usr,0.5", "reply_id", "missing"),
        ("r1,usr|v2,0.5", "metric", 'holds "|"'),
        ("r1,usr (external),0.5", "metric", 'leave out "(external)"'),
        (f"{'x' * 201},usr,0.5", "reply_id", "at most 200"),
        (f"r1,{'m' * 101},0.5", "metric", "at most 100"),
    ],
)
def test_a_bad_csv_row_names_file_line_and_field(row: str, field: str, message: str) -> None:
    rows, problems = parse("scores.csv", f"reply_id,metric,value\nr0,usr,1\n{row}\n")
    assert [row.line for row in rows] == [2]
    assert where(problems) == [("scores.csv", 3, field)]
    assert message in problems[0].message


def test_bad_json_rows_name_line_and_field() -> None:
    _, problems = parse(
        "judge.jsonl",
        jsonl(
            {"reply_id": "r1", "metric": "judge", "value": True},
            {"reply_id": "r2", "metric": "judge", "value": None},
            {"reply_id": "r3", "metric": ["judge"], "value": 1},
            {"reply_id": "r4", "response_id": 4, "metric": "judge", "value": 1},
            {"context_id": "c1", "metric": "judge", "value": 1},
            {"system": "hred", "metric": "judge", "value": 1},
            {"response_id": -3, "metric": "judge", "value": 1},
            {"reply_id": "r8", "metric": "judge", "value": 1, "signature": "a\nb"},
        )
        + "[1, 2]\n",
    )
    assert where(problems) == [
        ("judge.jsonl", 1, "value"),
        ("judge.jsonl", 2, "value"),
        ("judge.jsonl", 3, "metric"),
        ("judge.jsonl", 4, "response_id"),
        ("judge.jsonl", 5, "system"),
        ("judge.jsonl", 6, "context_id"),
        ("judge.jsonl", 7, "response_id"),
        ("judge.jsonl", 8, "signature"),
        ("judge.jsonl", 9, None),
    ]
    assert "expected a number, found true/false" in problems[0].message
    assert "named twice" in problems[3].message
    assert "expected a JSON object" in problems[8].message


def test_a_csv_without_a_reply_column_or_a_required_column_is_refused_at_the_header() -> None:
    _, problems = parse("scores.csv", "id,metric,value\nr1,usr,0.5\n")
    assert where(problems) == [("scores.csv", 1, "reply_id")]
    assert "the header has: id, metric, value" in problems[0].message
    _, problems = parse("scores.csv", "reply_id,score\nr1,0.5\n")
    assert where(problems) == [("scores.csv", 1, "metric"), ("scores.csv", 1, "value")]


def test_duplicates_and_colliding_names_within_one_file() -> None:
    _, problems = parse(
        "scores.csv",
        "reply_id,metric,value,signature\n"
        "r1,usr,0.1,v1\n"
        "r1,usr,0.2,v1\n"  # the same reply and metric twice
        "r2,USR,0.3,v1\n"  # another spelling of the same name
        "r3,usr,0.4,v2\n",  # another signature for the same metric
    )
    assert where(problems) == [
        ("scores.csv", 3, "reply_id"),
        ("scores.csv", 4, "metric"),
        ("scores.csv", 5, "signature"),
    ]
    assert "the first is on line 2" in problems[0].message
    assert '"USR" collides with "usr" (line 2)' in problems[1].message
    assert 'signature "v1" on line 2 and "v2" here' in problems[2].message


def test_an_unreadable_or_empty_file_says_so() -> None:
    log = ProblemLog()
    assert (
        external_scores_parse(ImportFile(name="x.csv", data=b"reply_id,metric,value\nr\xff,usr,1\n"), log)
        == []
    )
    assert where(log.problems) == [("x.csv", 2, None)]
    assert "not UTF-8" in log.problems[0].message
    _, problems = parse("empty.jsonl", "\n\n")
    assert [problem.message for problem in problems] == ["the file is empty"]


def test_the_format_is_told_by_the_suffix_else_by_the_first_character() -> None:
    rows, problems = parse("scores.txt", jsonl({"reply_id": "r1", "metric": "usr", "value": 1}))
    assert problems == []
    assert rows[0].reply_id == "r1"
    rows, problems = parse("scores.txt", "reply_id,metric,value\nr1,usr,1\n")
    assert problems == []
    assert rows[0].metric == "usr"


def test_the_stored_signature_says_external_and_keeps_the_given_one() -> None:
    assert external_signature("usr", "") == ("usr|origin:external", {"origin": "external"})
    text, parameters = external_signature("bleu-2", "nrefs:1|case:mixed|tok:13a|version:2.4.0")
    assert text == "bleu-2|origin:external|sig:nrefs:1,case:mixed,tok:13a,version:2.4.0"
    assert parameters == {"origin": "external", "sig": "nrefs:1,case:mixed,tok:13a,version:2.4.0"}
    assert external_metric_label("bleu-2") == "bleu-2 (external)"
