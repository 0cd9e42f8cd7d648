"""Study importers: parse corpus and rating files into records, check them against a study.

Parsing is pure (bytes in, records out, no database); annotation.services.imports.study_import loads
the study, plans and writes everything in one transaction. Formats: docs/import-formats.md.
"""

from __future__ import annotations

from annotation.importers.formats import FORMATS
from kernel.importing.problems import ImportFile, ImportProblem, ImportRejected

IMPORT_FORMATS: dict[str, str] = {name: spec.description for name, spec in FORMATS.items()}
DEFAULT_SCALE_FOR_FORMAT: dict[str, str] = {name: spec.default_scale for name, spec in FORMATS.items()}

__all__ = [
    "DEFAULT_SCALE_FOR_FORMAT",
    "IMPORT_FORMATS",
    "ImportFile",
    "ImportProblem",
    "ImportRejected",
]
