"""Computing the chunks of a report's scoring run (scoring/services/report_scores.py): a 'per-reference' chunk
recomputes a multi-reference signature against each reference of its replies (scoring/reference_scores.py), a
'diversity' chunk the diversity metrics of its (system, context) pairs (scoring/diversity_scores.py).

Both return unsaved rows; :mod:`scoring.services.chunks` claims the chunk, calls ``beat`` through its fence
(heartbeat, and ``ChunkLostError`` when the attempt lost the chunk) and stores the rows with the chunk's DONE
mark, as it does for every other kind.
"""

from __future__ import annotations

from collections.abc import Callable

from scoring.diversity_scores import diversity_compute, diversity_signatures
from scoring.models import ContextSystemScore, MetricSignature, PerReferenceScore, ScoringChunk, ScoringRun
from scoring.reference_scores import per_reference_compute

Beat = Callable[[int], None]  # items of the chunk done (replies, or (system, context) pairs)


def per_reference_chunk_rows(chunk: ScoringChunk, run: ScoringRun, beat: Beat) -> list[PerReferenceScore]:
    """The per-reference values of the chunk's replies for its signature; raises ``NotRecomputable`` (the
    chunk and its run fail saying why) when the signature no longer allows it."""
    if chunk.signature_id is None:
        raise ValueError(f"per-reference chunk {chunk.index} of run {run.pk} names no signature")
    signature = MetricSignature.objects.get(pk=chunk.signature_id)
    replies = len(chunk.response_ids)

    def pairs_done(done: int, total: int) -> None:
        beat(done * replies // max(1, total))

    return per_reference_compute(
        study=run.study, signature=signature, response_ids=chunk.response_ids, progress=pairs_done
    )


def diversity_chunk_rows(chunk: ScoringChunk, run: ScoringRun, beat: Beat) -> list[ContextSystemScore]:
    """The diversity metrics of the chunk's (system, context) pairs."""
    signatures = diversity_signatures(language=run.study.language)
    missing = sorted(set(chunk.metrics) - set(signatures))
    if missing:
        raise ValueError(
            f"diversity chunk {chunk.index} of run {run.pk}: no signature of {', '.join(missing)}"
        )
    return diversity_compute(
        language=run.study.language,
        signatures={name: signatures[name] for name in chunk.metrics},
        pairs=[(int(system_id), int(context_id)) for system_id, context_id in chunk.pairs],
        progress=beat,
    )
