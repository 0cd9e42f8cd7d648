"""The word vectors a scoring run's embedding metrics read: the run's choice resolved to a store."""

from __future__ import annotations

from scoring.metrics.spec import VectorsChoice
from scoring.models import ScoringRun
from scoring.services.word_vectors import WordVectorsError, word_vectors_record


class RunVectorsError(ValueError):
    """The vectors a run chose are gone or not ready (deleted, or still converting)."""


def run_vectors(run: ScoringRun) -> VectorsChoice | None:
    """The registered vectors ``run.vectors`` names (None: the metrics' default, GloVe 6B 50d)."""
    if not run.vectors:
        return None
    try:
        record = word_vectors_record(run.vectors)
    except WordVectorsError as error:
        raise RunVectorsError(f"the run's word vectors: {error}") from None
    return VectorsChoice(
        name=str(record["name"]), folder=str(record.get("path", "")), content_hash=str(record.get("hash", ""))
    )
