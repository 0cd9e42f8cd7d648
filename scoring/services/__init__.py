"""Scoring services, by concept: runs (create, cancel), planning (chunks), chunk_claims (claim, fail),
chunk_reads, chunks (compute by the chunk's kind), chunk_storage (store, fenced), run_finish (the run's
end), execution (what the tasks do), recovery (the periodic check), queueing (sending, GPU routing), and the
references policy. Views, the API, commands and tasks import from here."""

from scoring.services.chunk_claims import ChunkLostError
from scoring.services.execution import scoring_run_execute, scoring_run_start, scoring_run_work
from scoring.services.queueing import GPU_QUEUE, chunk_queue
from scoring.services.recovery import RecoveryReport, scoring_runs_recover
from scoring.services.run_finish import scoring_run_advance
from scoring.services.runs import (
    ALL_METRICS,
    JudgeChoiceError,
    ScoringRequestError,
    scoring_run_cancel,
    scoring_run_create,
    scoring_run_send,
)

__all__ = [
    "ALL_METRICS",
    "GPU_QUEUE",
    "ChunkLostError",
    "JudgeChoiceError",
    "RecoveryReport",
    "ScoringRequestError",
    "chunk_queue",
    "scoring_run_advance",
    "scoring_run_cancel",
    "scoring_run_create",
    "scoring_run_execute",
    "scoring_run_send",
    "scoring_run_start",
    "scoring_run_work",
    "scoring_runs_recover",
]
