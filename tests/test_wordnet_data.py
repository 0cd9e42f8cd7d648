"""The WordNet corpus built from Debian's files (scripts/build_wordnet.py): nltk reads it, METEOR uses it.

METEOR's third alignment stage matches WordNet synonyms (Lavie & Agarwal 2007); if the corpus were missing or
malformed nltk would raise a LookupError at scoring time, or a wrong `lexnames` would mislabel synsets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from scripts.build_wordnet import DEBIAN_LEXNAMES_MAN_PAGE, DEBIAN_WORDNET_DIR, build_wordnet_data

pytestmark = [
    pytest.mark.skipif(
        not DEBIAN_WORDNET_DIR.is_dir() or not DEBIAN_LEXNAMES_MAN_PAGE.is_file(),
        reason=f"{DEBIAN_WORDNET_DIR} or {DEBIAN_LEXNAMES_MAN_PAGE} is missing: "
        "install the Debian packages wordnet-base and wordnet-sense-index (scripts/setup.sh does)",
    ),
    # Expected: Debian ships the English WordNet only, not the Open Multilingual Wordnet.
    pytest.mark.filterwarnings("ignore:The multilingual functions are not available:UserWarning"),
]


@pytest.fixture(scope="module")
def nltk_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nltk_data")


@pytest.fixture(scope="module")
def wordnet(nltk_data_dir: Path) -> Iterator[WordNetCorpusReader]:
    """A reader over a freshly built corpus, not the process-wide (maybe already loaded) nltk wordnet."""
    import nltk.data

    corpus_dir = build_wordnet_data(nltk_data_dir)
    # nltk (3.9.3+) refuses to read corpora outside its data path (nltk.pathsec): register the folder there,
    # as NLTK_DATA does for the app.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nltk.data, "path", [str(nltk_data_dir), *nltk.data.path])
        yield WordNetCorpusReader(str(corpus_dir), None)


def test_lexnames_follow_the_man_page_table(nltk_data_dir: Path, wordnet: WordNetCorpusReader) -> None:
    lines = (nltk_data_dir / "corpora" / "wordnet" / "lexnames").read_text().splitlines()
    assert len(lines) == 45  # WordNet 3.0 has 45 lexicographer files, 00..44
    assert lines[0] == "00\tadj.all\t3"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[18] == "18\tnoun.person\t1"  # the man page pads this name with spaces
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"
    # End to end: the lexname a synset reports comes from its data line's file number and this table.
    assert wordnet.synset("dog.n.01").lexname() == "noun.animal"
    assert wordnet.synset("run.v.01").lexname() == "verb.motion"
    assert wordnet.synset("quickly.r.01").lexname() == "adv.all"


def test_synsets_and_exceptions_load(wordnet: WordNetCorpusReader) -> None:
    assert "dog.n.01" in [synset.name() for synset in wordnet.synsets("dog")]
    assert wordnet.morphy("geese", "n") == "goose"  # noun.exc was copied
    assert wordnet.synset("dog.n.01").lemmas()[0].count() > 0  # cntlist.rev was copied


def test_the_corpus_is_copied_not_linked(nltk_data_dir: Path, wordnet: WordNetCorpusReader) -> None:
    corpus_dir = nltk_data_dir / "corpora" / "wordnet"
    assert not any(path.is_symlink() for path in corpus_dir.iterdir())
    assert (corpus_dir / "data.noun").stat().st_size == (DEBIAN_WORDNET_DIR / "data.noun").stat().st_size


def test_meteor_matches_a_synonym_through_wordnet(wordnet: WordNetCorpusReader) -> None:
    from nltk.translate.meteor_score import meteor_score

    # "car"/"auto" share synset car.n.01 and are their own Porter stems, so only the WordNet stage can align
    # them: precision = recall = 1, one chunk per match, penalty 0.5 * 1**3, score 0.5 (hand-computed).
    assert meteor_score([["car"]], ["auto"], wordnet=wordnet) == pytest.approx(0.5)
    assert (
        meteor_score([["i", "bought", "a", "new", "car"]], ["i", "got", "a", "new", "auto"], wordnet=wordnet)
        > 0
    )


def test_nltk_finds_the_corpus_through_nltk_data(nltk_data_dir: Path, wordnet: WordNetCorpusReader) -> None:
    # The way the app finds it: NLTK_DATA set before nltk is imported (the run/test scripts export it).
    code = (
        "from nltk.corpus import wordnet\n"
        "from nltk.translate.meteor_score import meteor_score\n"
        "print(len(wordnet.synsets('dog')), meteor_score([['car']], ['auto']))\n"
    )
    env = {**os.environ, "NLTK_DATA": str(nltk_data_dir)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    synset_count, score = result.stdout.split()
    assert int(synset_count) == len(wordnet.synsets("dog"))
    assert float(score) == pytest.approx(0.5)


def test_rebuilding_is_idempotent(nltk_data_dir: Path, wordnet: WordNetCorpusReader) -> None:
    lexnames = nltk_data_dir / "corpora" / "wordnet" / "lexnames"
    before = lexnames.stat().st_mtime_ns
    build_wordnet_data(nltk_data_dir)
    assert lexnames.stat().st_mtime_ns == before  # unchanged content is not rewritten


def test_a_missing_debian_package_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="wordnet-sense-index"):
        build_wordnet_data(tmp_path / "out", wordnet_dir=tmp_path / "no-wordnet")
