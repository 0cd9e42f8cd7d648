"""What an import is given (files) and how it says no (problems that name file, line and field).

Every importer collects problems instead of stopping at the first one, so that a researcher can fix a
file in one pass; the collection stops at :data:`MAX_PROBLEMS` because past that point the file is
almost certainly in the wrong format and more lines would only repeat the same message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath

MAX_PROBLEMS = 50
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


class ImportRejected(Exception):
    """The import was refused as a whole; nothing was written. ``problems`` lists every reason found."""

    def __init__(self, problems: list[ImportProblem], *, truncated: bool = False) -> None:
        self.problems = list(problems)
        self.truncated = truncated
        super().__init__(self._text())

    def _text(self) -> str:
        count = len(self.problems)
        head = f"import rejected, nothing was changed ({count}{'+' if self.truncated else ''} problem"
        head += "s):" if count != 1 else "):"
        lines = [head, *(f"- {problem}" for problem in self.problems)]
        if self.truncated:
            lines.append(f"(stopped looking after {count} problems)")
        return "\n".join(lines)


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
