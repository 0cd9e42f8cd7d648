"""METEOR (Lavie and Agarwal, 2007) through nltk, with WordNet found, checked and loaded once per process.

One of the word-overlap metrics of the multi-reference study (seed 003, section 3.3, Table 2: "the
harmonic mean of precision and recall between the candidate and reference based on a set of alignments
between the two"), the one that correlates best with human judgments in its Table 4. nltk's
``single_meteor_score`` aligns words in three stages (exact, Porter stem, WordNet synonym), then weighs
an F-mean (alpha 0.9, recall-heavy) by a fragmentation penalty (beta 3, gamma 0.5); its defaults are
kept. Because the values depend on nltk's implementation, nltk's version goes into the metric's
version string (see :mod:`scoring.metrics.overlap_specs`).

WordNet is data, not code: nltk's own download is a hub fetch this project never makes, so
``scripts/setup.sh`` builds the corpus from Debian's wordnet-base/wordnet-sense-index into
``var/nltk_data`` (and the Django settings point ``NLTK_DATA`` there). Without it METEOR's synonym stage
would silently match nothing, so a missing or broken corpus raises :class:`MetricDataMissingError` at
first use instead of giving lower scores. A successful load is cached per process (the reader's lemma
index takes about a second to read); a failure is not, so fixing the data fixes the next call.

Several references are combined as in the multi-reference study (seed 003, section 3.2.1, eq. 1):
score(y, R) = max over r in R of METEOR(y, r). nltk's multi-reference ``meteor_score`` is the same
maximum, so there is only one aggregation ("max").

The synonym stage knows English words only; other languages get exact and stem matches. As in nltk, it
looks synonyms up for the Porter *stems* of the words the exact stage left unmatched, so it pairs "auto"
with "car" but not "movie" (stem "movi") with "film"; this is kept, since the point is nltk's numbers.
"""

from __future__ import annotations

import functools
import gc
import os
import threading
import warnings
from collections.abc import Sequence
from typing import Any

Tokens = Sequence[str]

WORDNET_RESOURCE = "corpora/wordnet"
WORDNET_HINT = (
    "run `bash scripts/setup.sh` (it builds var/nltk_data/corpora/wordnet from Debian's wordnet-base and "
    "wordnet-sense-index packages) and set the NLTK_DATA environment variable to that var/nltk_data folder "
    "(the Django settings do this)"
)

_load_lock = threading.Lock()
# corpus folder (real path) -> its WordNetCorpusReader; the lemma index takes seconds to read
_READERS: dict[str, Any] = {}


class MetricDataMissingError(RuntimeError):
    """Data a metric needs (here: NLTK's WordNet corpus) is missing or unreadable; the message says how to get it."""


def wordnet_search_paths() -> tuple[str, ...]:
    """Where WordNet is looked for: ``NLTK_DATA`` as set now, then nltk's own search path.

    ``NLTK_DATA`` is read at call time as well because nltk reads it only once, when first imported.
    """
    import nltk.data

    from_environment = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    paths: list[str] = []
    for path in [*from_environment, *(str(p) for p in nltk.data.path)]:
        if path not in paths:
            paths.append(path)
    return tuple(paths)


def load_wordnet(search_paths: Sequence[str] | None = None) -> Any:
    """nltk's ``WordNetCorpusReader`` for the first WordNet corpus under ``search_paths``, loaded once.

    ``search_paths`` defaults to :func:`wordnet_search_paths`. Raises :class:`MetricDataMissingError`
    naming the folders searched when no corpus is there or it cannot be read.
    """
    paths = tuple(search_paths) if search_paths is not None else wordnet_search_paths()
    with _load_lock:  # one load per process even when worker threads start together
        return _load_wordnet(paths)


def meteor(hypothesis: Tokens, reference: Tokens, *, search_paths: Sequence[str] | None = None) -> float:
    """METEOR of one tokenized hypothesis against one tokenized reference (nltk's single_meteor_score)."""
    from nltk.translate.meteor_score import single_meteor_score

    wordnet = load_wordnet(search_paths)
    return float(single_meteor_score(reference, hypothesis, wordnet=wordnet))


def meteor_batch(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    *,
    search_paths: Sequence[str] | None = None,
) -> list[float]:
    """METEOR of each hypothesis ``i`` against its closest reference in ``references[i]`` (seed 003, eq. 1).

    An item without references scores 0.0. WordNet is loaded (or the error raised) before anything is
    scored, even when no item has a reference, so a missing corpus never passes as a batch of zeros.
    """
    from nltk.translate.meteor_score import single_meteor_score

    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "references[i] must hold every reference of hypothesis i"
        )
    wordnet = load_wordnet(search_paths)
    return [
        max(
            (float(single_meteor_score(reference, hypothesis, wordnet=wordnet)) for reference in refs),
            default=0.0,
        )
        for hypothesis, refs in zip(hypotheses, references, strict=True)
    ]


@functools.cache
def _load_wordnet(paths: tuple[str, ...]) -> Any:
    # nltk is imported here, not at module level, so that importing the registry stays cheap and the
    # NLTK_DATA variable can still be set before nltk reads it.
    import nltk.data

    searched = ", ".join(paths) or "(no folders)"
    try:
        # also finds corpora/wordnet.zip, as nltk's own loader does
        root = nltk.data.find(WORDNET_RESOURCE, paths=list(paths))
    except LookupError:
        raise MetricDataMissingError(
            f"METEOR needs NLTK's WordNet corpus ({WORDNET_RESOURCE}), which is not in any of the folders "
            f"searched: {searched}. To get it, {WORDNET_HINT}."
        ) from None
    # Search paths that lead to one corpus (NLTK_DATA and nltk's list, a symlink) share one reader.
    key = os.path.realpath(root.path) if hasattr(root, "path") else repr(root)
    reader = _READERS.get(key)
    if reader is None:
        reader = _READERS[key] = _read_wordnet(root)
        _exempt_from_garbage_collection()
    return reader


def _exempt_from_garbage_collection() -> None:
    """Move everything alive now (the corpus: about half a million objects) out of the collector's reach.

    Python's cyclic collector walks every tracked object on each full collection; with WordNet loaded
    that made allocation-heavy metrics such as BLEU about 35% slower in the same process (measured: 21.5k
    vs 14.1k pairs/s). The corpus lives as long as the process, so freezing it loses nothing.
    """
    gc.collect()
    gc.freeze()


def _read_wordnet(root: Any) -> Any:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        # Reading the corpus here (the lemma index and exception lists load in the constructor) warms it
        # once, and a corpus with missing or malformed files fails now rather than in the middle of a run.
        with warnings.catch_warnings():
            # without Open Multilingual Wordnet data nltk warns on every load; METEOR needs English only
            warnings.filterwarnings("ignore", message="The multilingual functions are not available")
            reader = WordNetCorpusReader(root, None)
        reader.synsets("dog")
    except (OSError, LookupError, AssertionError, ValueError) as error:
        raise MetricDataMissingError(
            f"METEOR needs NLTK's WordNet corpus; the one found at {root} cannot be read ({error!r}). "
            f"To rebuild it, {WORDNET_HINT}."
        ) from error
    return reader
