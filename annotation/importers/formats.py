"""The import formats by name: what each reads, its default rating scale and its parser."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from annotation.importers.conversations import parse_conversations
from annotation.importers.dailydialog import parse_dailydialog
from annotation.importers.grade import parse_grade
from annotation.importers.multiref import parse_multiref
from annotation.importers.multiref_ratings import parse_multiref_ratings
from annotation.importers.records import ParsedImport
from annotation.importers.replies_csv import parse_csv
from annotation.importers.replies_jsonl import parse_jsonl
from kernel.importing.problems import ImportFile, ProblemLog

Parser = Callable[[Sequence[ImportFile], ProblemLog], ParsedImport]


@dataclass(frozen=True)
class ImportFormat:
    description: str
    default_scale: str  # a key of annotation.scales.SCALE_PRESETS
    parse: Parser


FORMATS: dict[str, ImportFormat] = {
    "dailydialog": ImportFormat(
        "DailyDialog dialogues_*.txt (+ optional _act/_emotion files): every context with its original reply",
        "0-2",
        parse_dailydialog,
    ),
    "multiref": ImportFormat(
        "multirefeval multireftest.json: DailyDialog test contexts with 5 references each",
        "1-5",  # Gupta et al. (2019) rates these contexts' replies on 1-5 (multiref-ratings goes into the same study)
        parse_multiref,
    ),
    "multiref-ratings": ImportFormat(
        "multirefeval mturk_rating_processed_output.csv: system replies with mean 1-5 human ratings",
        "1-5",
        parse_multiref_ratings,
    ),
    "grade": ImportFormat(
        "GRADE human_judgement_dailydialog.jsonl: replies with per-annotator 1-5 coherence scores",
        "1-5",
        parse_grade,
    ),
    "jsonl": ImportFormat(
        "generic JSON Lines: one reply per line with context, references and ratings",
        "0-2",
        parse_jsonl,
    ),
    "csv": ImportFormat(
        "generic CSV: one reply per row with context, references and ratings",
        "0-2",
        parse_csv,
    ),
    "conversations-jsonl": ImportFormat(
        "whole conversations, one per line: every bot turn becomes a reply to the turns before it "
        "(per-turn and dialog-level scores, Sinha et al. (2020))",
        "0-2",
        parse_conversations,
    ),
}
