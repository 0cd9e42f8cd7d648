"""What an import is given (files) and how it says no (problems that name file, line and field).

Every importer collects problems instead of stopping at the first one, so that a researcher can fix a
file in one pass; the collection stops at :data:`MAX_PROBLEMS` because past that point the file is
almost certainly in the wrong format and more lines would only repeat the same message.

What a person reads groups them (a file of 80 duplicate lines was shown as 50 identical lines and
no word of the other 30): problems with the same message in the same file and field become one entry with
their lines as ranges ("lines 2, 5, 9–40"), at most :data:`PROBLEMS_SHOWN` entries are shown, and a
sentence says how many problems there are in all and how many are not shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath

# High enough that the count of a file's problems is almost always its real count (a file in the wrong
# format has one problem per line), low enough that such a file is not read to its end.
MAX_PROBLEMS = 10_000
PROBLEMS_SHOWN = 50  # grouped entries a person is shown (page, command); the API lists every problem
MAX_WARNINGS = 200


@dataclass(frozen=True)
class ImportFile:
    """One uploaded or command-line file: its display name (a base name) and its raw bytes."""

    name: str
    data: bytes

    @property
    def basename(self) -> str:
        return PurePath(self.name.replace("\\", "/")).name


@dataclass(frozen=True)
class ImportProblem:
    """Why an import was rejected: ``file``/``line``/``field`` say where ("" / None when not tied to one)."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f'field "{self.field}"')
        return f"{', '.join(where)}: {self.message}" if where else self.message


@dataclass(frozen=True)
class ProblemGroup:
    """Problems with the same ``message`` in the same ``file`` and ``field``: on ``lines`` (ascending, each
    once; empty when none is tied to a line), ``count`` problems in all."""

    file: str
    field: str | None
    message: str
    lines: tuple[int, ...]
    count: int

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.lines:
            where.append(lines_text(self.lines))
        if self.field:
            where.append(f'field "{self.field}"')
        return f"{', '.join(where)}: {self.message}" if where else self.message


def lines_text(lines: tuple[int, ...] | list[int]) -> str:
    """ "line 7", "lines 1–80", "lines 2, 5, 9–40": runs of consecutive lines as ranges (en dash)."""
    ordered = sorted(set(lines))
    runs: list[str] = []
    start = previous = ordered[0]
    for line in [*ordered[1:], None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        runs.append(str(start) if start == previous else f"{start}–{previous}")
        if line is not None:
            start = previous = line
    return f"line {ordered[0]}" if len(ordered) == 1 else f"lines {', '.join(runs)}"


def problem_groups(problems: list[ImportProblem]) -> list[ProblemGroup]:
    """``problems`` grouped by file, field and message, in the order each group first appears."""
    found: dict[tuple[str, str | None, str], list[ImportProblem]] = {}
    for problem in problems:
        found.setdefault((problem.file, problem.field, problem.message), []).append(problem)
    return [
        ProblemGroup(
            file=file,
            field=field_name,
            message=message,
            lines=tuple(sorted({member.line for member in members if member.line is not None})),
            count=len(members),
        )
        for (file, field_name, message), members in found.items()
    ]


@dataclass(frozen=True)
class ProblemsReport:
    """What a person is shown of a rejected import: the grouped ``entries`` (at most the limit), how many
    problems there are in all, how many the entries cover, and whether the check stopped early."""

    entries: list[str]
    total: int
    shown: int
    stopped: bool

    @property
    def hidden(self) -> int:
        return self.total - self.shown

    @property
    def summary(self) -> str:
        """ "80 problems in all." / "120 problems in all; 50 of 120 shown, 70 not shown." """
        if self.stopped:
            head = f"At least {self.total:,} problems (the check stopped after {self.total:,})"
        else:
            head = f"{self.total:,} problem{'' if self.total == 1 else 's'} in all"
        if not self.hidden:
            return f"{head}."
        return f"{head}; {self.shown:,} of {self.total:,} shown, {self.hidden:,} not shown."


def problems_report(
    problems: list[ImportProblem], *, stopped: bool = False, limit: int = PROBLEMS_SHOWN
) -> ProblemsReport:
    groups = problem_groups(problems)[:limit]
    return ProblemsReport(
        entries=[str(group) for group in groups],
        total=len(problems),
        shown=sum(group.count for group in groups),
        stopped=stopped,
    )


class ImportRejected(Exception):
    """The import was refused as a whole; nothing was written. ``problems`` lists every reason found
    (``truncated``: the check stopped at :data:`MAX_PROBLEMS`, so there may be more)."""

    def __init__(self, problems: list[ImportProblem], *, truncated: bool = False) -> None:
        self.problems = list(problems)
        self.truncated = truncated
        super().__init__(self._text())

    def report(self, limit: int = PROBLEMS_SHOWN) -> ProblemsReport:
        return problems_report(self.problems, stopped=self.truncated, limit=limit)

    def _text(self) -> str:
        report = self.report()
        return "\n".join(
            [
                f"import rejected, nothing was changed: {report.summary}",
                *(f"- {entry}" for entry in report.entries),
            ]
        )


@dataclass
class ProblemLog:
    """Collects problems and warnings while an import is parsed and checked against the study."""

    problems: list[ImportProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warnings_dropped: int = 0
    # Told (file, line) as the parsers read rows: the progress of an import that runs in a worker.
    on_line: Callable[[str, int], None] | None = None

    def line_read(self, file: str, line: int) -> None:
        if self.on_line is not None:
            self.on_line(file, line)

    def problem(self, file: str, line: int | None, field_name: str | None, message: str) -> None:
        self.problems.append(ImportProblem(file=file, line=line, field=field_name, message=message))
        if len(self.problems) >= MAX_PROBLEMS:
            raise ImportRejected(self.problems, truncated=True)

    def warn(self, file: str, line: int | None, field_name: str | None, message: str) -> None:
        if len(self.warnings) >= MAX_WARNINGS:
            self.warnings_dropped += 1
            return
        self.warnings.append(str(ImportProblem(file=file, line=line, field=field_name, message=message)))

    def all_warnings(self) -> list[str]:
        if not self.warnings_dropped:
            return list(self.warnings)
        return [*self.warnings, f"... and {self.warnings_dropped} more warnings"]

    def raise_if_any(self) -> None:
        """Raise with the problems in file order, each file's by line (parsing and checking against the
        study find them in two passes)."""
        if self.problems:
            files = list(dict.fromkeys(problem.file for problem in self.problems))
            ordered = sorted(
                self.problems, key=lambda problem: (files.index(problem.file), problem.line or 0)
            )
            raise ImportRejected(ordered)
