"""METEOR (Lavie and Agarwal, 2007) as nltk computes it, with WordNet found, checked and loaded once per process.

One of the word-overlap metrics of the multi-reference study (Gupta et al., 2019, section 3.3, Table 2: "the
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

Several references are combined as in the multi-reference study (Gupta et al., 2019, section 3.2.1, eq. 1):
score(y, R) = max over r in R of METEOR(y, r). nltk's multi-reference ``meteor_score`` is the same
maximum, so there is only one aggregation ("max").

The synonym stage knows English words only; other languages get exact and stem matches. As in nltk, it
looks synonyms up for the Porter *stems* of the words the exact stage left unmatched, so it pairs "auto"
with "car" but not "movie" (stem "movi") with "film"; this is kept, since the point is nltk's numbers.

The alignment is nltk's ``single_meteor_score`` (3.10.x) re-implemented step for step, so the scores are
the same floats: the three stages match each hypothesis word, last to first, to the last still-free
reference word (exact form, then Porter stem, then a WordNet synonym of the stem), the matches are
sorted by hypothesis position, and the F-mean and fragmentation penalty use nltk's expressions. Every
stage looks words (or synonyms) up in a dict of free reference positions, as nltk 3.10 does, so the
alignment takes time linear in the lengths, not their product, even on text with nothing in common. What
nltk recomputes for every pair is looked up once per word instead: the Porter stem of a word and the
synonyms of a stem (the lemma names of ``wordnet.synsets(stem)`` without "_"), in per-process caches
bounded at :data:`CACHE_LIMIT` entries each (cleared when full; :func:`meteor_caches_clear` empties them,
e.g. to time a run that fills them). nltk spends about nine tenths of its time on exactly those
lookups. Tests compare the scores with nltk's on thousands of DailyDialog pairs.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import re
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

# nltk's single_meteor_score defaults: recall-weighted F-mean, fragmentation penalty shape and weight
ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5
CACHE_LIMIT = 200_000  # entries per cache (stems; synonyms per corpus): a few tens of MB at most

_load_lock = threading.Lock()
# corpus folder (real path) -> its WordNetCorpusReader; the lemma index takes seconds to read
_READERS: dict[str, Any] = {}
# word -> its Porter stem (nltk's PorterStemmer in its default NLTK_EXTENSIONS mode)
_STEMS: dict[str, str] = {}
# id(WordNet reader) -> {stem -> the stem and its WordNet synonyms}; readers live as long as the process
_SYNONYMS: dict[int, dict[str, frozenset[str]]] = {}
# id(WordNet reader) -> the reader of its synsets' lemma names (see _LemmaNames)
_LEMMA_NAMES: dict[int, _LemmaNames] = {}
# nltk's split of a lemma token into its name and a trailing syntactic marker such as "(a)"
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")


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
    aligner = _Aligner(load_wordnet(search_paths))
    return aligner.score([word.lower() for word in hypothesis], [word.lower() for word in reference])


def meteor_batch(
    hypotheses: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    *,
    search_paths: Sequence[str] | None = None,
) -> list[float]:
    """METEOR of each hypothesis ``i`` against its closest reference in ``references[i]`` (Gupta et al., 2019, eq. 1).

    An item without references scores 0.0. WordNet is loaded (or the error raised) before anything is
    scored, even when no item has a reference, so a missing corpus never passes as a batch of zeros.
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "references[i] must hold every reference of hypothesis i"
        )
    aligner = _Aligner(load_wordnet(search_paths))
    # nltk lowercases every token (its ``preprocess``); consecutive items with the same reference token
    # lists (the systems answering one context) lowercase them once
    current: tuple[int, ...] | None = None  # the ids of the token lists, alive in ``references``
    lowered_refs: list[list[str]] = []
    scores = []
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        key = tuple(map(id, refs))
        if key != current:
            current = key
            lowered_refs = [[word.lower() for word in ref] for ref in refs]
        words = [word.lower() for word in hypothesis]
        scores.append(max((aligner.score(words, ref) for ref in lowered_refs), default=0.0))
    return scores


def meteor_caches_clear() -> None:
    """Forget every cached stem, synonym set and synset's lemma names (the next scores are the same, only
    slower). nltk's own caches inside the WordNet reader are not touched."""
    _STEMS.clear()
    _SYNONYMS.clear()
    for lemma_names in _LEMMA_NAMES.values():
        lemma_names.names.clear()


class _Aligner:
    """nltk's METEOR alignment and score on lowercased words, with the stems and synonyms cached."""

    def __init__(self, wordnet: Any) -> None:
        from nltk.stem.porter import PorterStemmer

        self.wordnet = wordnet
        self.stemmer = PorterStemmer()
        self.synonyms = _SYNONYMS.setdefault(id(wordnet), {})
        lemma_names = _LEMMA_NAMES.get(id(wordnet))
        if lemma_names is None:
            lemma_names = _LEMMA_NAMES[id(wordnet)] = _LemmaNames(wordnet)
        self.lemma_names = lemma_names

    def score(self, hypothesis: list[str], reference: list[str]) -> float:
        """nltk's ``single_meteor_score(reference, hypothesis)`` with its default parameters."""
        translation_length = len(hypothesis)
        reference_length = len(reference)
        matches = self._align(hypothesis, reference)
        matches_count = len(matches)
        # nltk's expressions, in nltk's order: the same floats, and 0.0 wherever nltk divides by zero
        if not translation_length or not reference_length:
            return 0.0
        precision = float(matches_count) / translation_length
        recall = float(matches_count) / reference_length
        denominator = ALPHA * precision + (1 - ALPHA) * recall
        if not denominator or not matches_count:
            return 0.0
        fmean = (precision * recall) / denominator
        frag_frac = float(_count_chunks(matches)) / matches_count
        penalty = GAMMA * frag_frac**BETA
        return (1 - penalty) * fmean

    def _align(self, hypothesis: list[str], reference: list[str]) -> list[tuple[int, int]]:
        """(hypothesis position, reference position) of every match, sorted by hypothesis position.

        nltk's three stages on positions into the original lists: nltk keeps the unmatched words of each
        stage in their original order, so "the last free reference word" is the same word here.
        """
        matches: list[tuple[int, int]] = []
        # stage 1, exact forms
        free = _positions(reference, range(len(reference)))
        left = _match_stage(hypothesis, range(len(hypothesis) - 1, -1, -1), free, matches)
        if not left or len(matches) == len(reference):
            return sorted(matches)
        matched = {j for _, j in matches}
        free_refs = [j for j in range(len(reference)) if j not in matched]
        # stage 2, Porter stems (nltk goes on with the stems, not the words, into stage 3)
        stems = self._stems
        hyp_stems = {i: stems(hypothesis[i]) for i in left}
        ref_stems = {j: stems(reference[j]) for j in free_refs}
        free = _positions(ref_stems, free_refs)
        left = _match_stage(hyp_stems, left, free, matches)
        if not left or not any(free.values()):
            return sorted(matches)
        # stage 3, WordNet synonyms of the hypothesis stem: the last free reference stem among them
        for i in left:
            best_j, best_word = _last_free_synonym(self._synonyms(hyp_stems[i]), free)
            if best_j >= 0:
                free[best_word].pop()
                matches.append((i, best_j))
        return sorted(matches)

    def _stems(self, word: str) -> str:
        stem = _STEMS.get(word)
        if stem is None:
            if len(_STEMS) >= CACHE_LIMIT:
                _STEMS.clear()
            stem = _STEMS[word] = self.stemmer.stem(word)
        return stem

    def _synonyms(self, stem: str) -> frozenset[str]:
        synonyms = self.synonyms.get(stem)
        if synonyms is None:
            if len(self.synonyms) >= CACHE_LIMIT:
                self.synonyms.clear()
            # nltk's _enum_wordnetsyn_match: lemma names without "_" of every synset of the word, and the
            # word itself
            names = {name for name in self.lemma_names.of_word(stem) if name.find("_") < 0}
            names.add(stem)
            synonyms = self.synonyms[stem] = frozenset(names)
        return synonyms


class _LemmaNames:
    """The lemma names of the synsets of a word, as ``wordnet.synsets(word)`` and ``lemma.name()`` give them.

    nltk builds a whole Synset (definition, examples, pointers, verb frames, through a regex wrapper with
    time-outs) for each synset it meets: over half of a first METEOR run's time on 10,000 DailyDialog
    pairs. METEOR needs the names only, so they are read here from the line of the corpus's data file at
    the synset's offset, parsed as nltk parses it (the lemma count in hex, then name and lex_id pairs, a
    trailing syntactic marker such as "(a)" cut off), and cached per synset. Which synsets a word has
    comes from nltk's own morphology and lemma index (``_morphy`` and ``_lemma_pos_offset_map``, as
    ``synsets`` uses them). Any line that does not look as expected (and a corpus in a zip file, or an
    nltk without those internals) goes through nltk's reader instead, with nltk's behaviour.
    """

    def __init__(self, wordnet: Any) -> None:
        from nltk.corpus.reader.wordnet import POS_LIST

        self.wordnet = wordnet
        self.parts_of_speech = tuple(POS_LIST)
        folder = getattr(getattr(wordnet, "root", None), "path", None)
        files = getattr(wordnet, "_FILEMAP", None)
        self.direct = (
            isinstance(folder, str)
            and os.path.isdir(folder)
            and isinstance(files, dict)
            and hasattr(wordnet, "_morphy")
            and hasattr(wordnet, "_lemma_pos_offset_map")
        )
        self.paths: dict[str, str] = {}
        if self.direct and isinstance(files, dict):
            self.paths = {pos: os.path.join(str(folder), f"data.{name}") for pos, name in files.items()}
        self.files: dict[str, Any] = {}
        self.names: dict[tuple[str, int], tuple[str, ...]] = {}
        self.lock = threading.Lock()  # one seek-and-read at a time per file handle

    def of_word(self, word: str) -> list[str]:
        """Every lemma name of every synset of ``word`` (duplicates included), in nltk's order."""
        if not self.direct:
            return [lemma.name() for synset in self.wordnet.synsets(word) for lemma in synset.lemmas()]
        word = word.lower()  # as synsets() does
        index = self.wordnet._lemma_pos_offset_map
        names: list[str] = []
        for pos in self.parts_of_speech:
            for form in self.wordnet._morphy(word, pos, True):
                for offset in index[form].get(pos, []):
                    names += self._synset_names(pos, offset)
        return names

    def _synset_names(self, pos: str, offset: int) -> tuple[str, ...]:
        names = self.names.get((pos, offset))
        if names is None:
            names = self.names[(pos, offset)] = self._read(pos, offset)
        return names

    def _read(self, pos: str, offset: int) -> tuple[str, ...]:
        with self.lock:
            data = self.files.get(pos)
            if data is None:
                data = self.files[pos] = open(self.paths[pos], "rb")  # noqa: SIM115 (kept open, like nltk's)
            data.seek(offset)
            line = data.readline().decode("utf-8")
        columns = line.split("|")[0].split() if line.count("|") == 1 else []
        if line[:8] != f"{offset:08d}" or len(columns) < 4:
            # not what nltk's checks accept: let nltk read it (it warns, raises or copes, as it does)
            synset = self.wordnet.synset_from_pos_and_offset(pos, offset)
            return tuple(lemma.name() for lemma in synset.lemmas())
        count = int(columns[3], 16)
        tokens = columns[4 : 4 + 2 * count : 2]
        return tuple(_lemma_name(token) for token in tokens)


def _lemma_name(token: str) -> str:
    match = _SYNTACTIC_MARKER.match(token)
    return match.group(1) if match else token


def _positions(words: Sequence[str] | dict[int, str], indices: Sequence[int]) -> dict[str, list[int]]:
    """word -> its positions among ``indices``, ascending (nltk pops the last, i.e. highest, first)."""
    free: dict[str, list[int]] = {}
    for j in indices:
        word = words[j]
        positions = free.get(word)
        if positions is None:
            free[word] = [j]
        else:
            positions.append(j)
    return free


def _match_stage(
    words: Sequence[str] | dict[int, str],
    order: Sequence[int],
    free: dict[str, list[int]],
    matches: list[tuple[int, int]],
) -> list[int]:
    """Match the hypothesis positions ``order`` (descending) to the last free reference position of the
    same word; appends to ``matches`` and returns the positions left unmatched, still descending."""
    left = []
    for i in order:
        positions = free.get(words[i])
        if positions:
            matches.append((i, positions.pop()))
        else:
            left.append(i)
    return left


def _last_free_synonym(synonyms: frozenset[str], free: dict[str, list[int]]) -> tuple[int, str]:
    """The highest free reference position whose stem is in ``synonyms``, and that stem; (-1, "") if none.

    Each free position belongs to one stem, so the highest is the same whichever side is walked: the
    smaller one is. Walking the free stems for every hypothesis word made the stage O(n * m) on text with
    little overlap (32,000 disjoint tokens a side: over a minute); looking the synonyms up, as nltk 3.10
    does since its fix for that (CVE-2026-12929), bounds it by the synonym count instead.
    """
    best_j, best_word = -1, ""
    if len(synonyms) < len(free):
        for word in synonyms:
            positions = free.get(word)
            if positions and positions[-1] > best_j:
                best_j, best_word = positions[-1], word
    else:
        for word, positions in free.items():
            if positions and positions[-1] > best_j and word in synonyms:
                best_j, best_word = positions[-1], word
    return best_j, best_word


def _count_chunks(matches: list[tuple[int, int]]) -> int:
    """nltk's _count_chunks: runs of matches adjacent in both the hypothesis and the reference."""
    chunks = 1
    for (i, j), (next_i, next_j) in itertools.pairwise(matches):
        if not (next_i == i + 1 and next_j == j + 1):
            chunks += 1
    return chunks


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

    class EnglishWordNetReader(WordNetCorpusReader):
        """nltk's reader without the mapping of WordNet 3.0 synsets to this corpus's, which nltk builds in
        the constructor (reading index.sense twice: about 60% of the load, 4 of 6.5 s CPU measured) and
        uses only to load Open Multilingual Wordnet tab files. English lookups never read it."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    try:
        # Reading the corpus here (the lemma index and exception lists load in the constructor) warms it
        # once, and a corpus with missing or malformed files fails now rather than in the middle of a run.
        with warnings.catch_warnings():
            # without Open Multilingual Wordnet data nltk warns on every load; METEOR needs English only
            warnings.filterwarnings("ignore", message="The multilingual functions are not available")
            reader = EnglishWordNetReader(root, None)
        reader.synsets("dog")
    except (OSError, LookupError, AssertionError, ValueError) as error:
        raise MetricDataMissingError(
            f"METEOR needs NLTK's WordNet corpus; the one found at {root} cannot be read ({error!r}). "
            f"To rebuild it, {WORDNET_HINT}."
        ) from error
    return reader
