"""Grouping a rejected import's problems (kernel/importing/problems.py): the same message in the
same file and field is one entry whose lines read as ranges, consecutive or not, and the count says how
many problems there are and how many the shown entries leave out."""

from __future__ import annotations

import pytest

from kernel.importing.problems import ImportProblem, ImportRejected, ProblemLog

DUPLICATE = 'duplicate item: system "bot" already answers this context on line 1'


def test_lines_that_are_not_consecutive_read_as_a_list_of_ranges() -> None:
    lines = [2, 5, *range(9, 41)]
    problems = [ImportProblem("a.jsonl", line, None, DUPLICATE) for line in lines]
    problems.insert(1, ImportProblem("a.jsonl", 3, "response", "empty response"))
    problems.append(ImportProblem("b.jsonl", 7, None, DUPLICATE))  # another file: an entry of its own
    report = ImportRejected(problems).report()
    assert report.entries == [
        f"a.jsonl, lines 2, 5, 9–40: {DUPLICATE}",
        'a.jsonl, line 3, field "response": empty response',
        f"b.jsonl, line 7: {DUPLICATE}",
    ]
    assert report.summary == f"{len(problems)} problems in all."


def test_past_the_cap_the_count_says_how_many_are_not_shown() -> None:
    problems = [
        ImportProblem("a.csv", line, "score", f"{line + 2} is outside the scale 0-2") for line in range(1, 81)
    ]
    problems += [ImportProblem("a.csv", line, "system", "empty system name") for line in range(1, 81)]
    report = ImportRejected(problems).report(limit=60)
    assert len(report.entries) == 60
    assert report.total == 160
    assert report.shown == 60  # the 80 "empty system name" lines come after the 80 scale entries
    assert report.summary == "160 problems in all; 60 of 160 shown, 100 not shown."


def test_the_log_keeps_counting_past_the_fifty_it_stopped_at() -> None:
    def check(lines: int) -> None:  # as an importer does: a problem per line, then raise if any
        log = ProblemLog()
        for line in range(1, lines + 1):
            log.problem("dup.jsonl", line, None, DUPLICATE)
        log.raise_if_any()

    with pytest.raises(ImportRejected) as rejected:
        check(80)
    assert len(rejected.value.problems) == 80
    assert not rejected.value.truncated
    assert str(rejected.value).splitlines() == [
        "import rejected, nothing was changed: 80 problems in all.",
        f"- dup.jsonl, lines 1–80: {DUPLICATE}",
    ]
