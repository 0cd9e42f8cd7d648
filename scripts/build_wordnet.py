"""Build NLTK's WordNet corpus from Debian's WordNet 3.0 files, for METEOR's synonym stage.

METEOR (Lavie & Agarwal 2007), one of the word-overlap metrics of the multi-reference study (Gupta et al.
2019, Gupta et al. (2019), section 3.3), aligns words in three stages: exact, stem, then WordNet synonym; nltk's
`meteor_score` reads the synonyms through `nltk.corpus.wordnet`. nltk's own data download is a hub
fetch, which this project never does, so the corpus is assembled from the Debian packages `wordnet-base`
and `wordnet-sense-index` (the same WordNet 3.0 database nltk ships):

- the database files are *copied* (not linked), so the result survives the packages being removed, e.g.
  in a slim Docker layer;
- nltk also opens a `lexnames` file (`NN<TAB>lexname<TAB>pos-number`, line i numbered i; nltk's
  `WordNetCorpusReader.__init__` asserts the numbering), which Debian ships only inside the lexnames(5WN)
  man page: its table rows are parsed here.

Standard library only: setup.sh runs it from the virtualenv, the Dockerfile with the image's Python before
the project's requirements are installed. Usage: `python scripts/build_wordnet.py DEST` where DEST is the
NLTK_DATA folder (the corpus lands in DEST/corpora/wordnet).
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import sys
from pathlib import Path

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
DEBIAN_LEXNAMES_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")

# The files nltk's WordNetCorpusReader opens (its _FILES), less `lexnames`, which is built below.
# cntlist.rev gives Lemma.count(); everything else is needed to load the corpus at all.
WORDNET_FILES = (
    [f"{kind}.{pos}" for kind in ("data", "index") for pos in ("adj", "adv", "noun", "verb")]
    + [f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")]
    + ["index.sense", "cntlist.rev"]
)

# Syntactic category numbers from lexnames(5WN): noun 1, verb 2, adjective 3, adverb 4.
POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
# A table row of the man page: two-digit file number, then the lexicographer file name (e.g. noun.act).
LEXNAMES_ROW = re.compile(r"^(\d\d)\t\s*((?:noun|verb|adj|adv)\.\w+)\s")


def lexnames_from_man_page(man_page_text: str) -> str:
    """The `lexnames` file nltk reads, built from the table in the lexnames(5WN) man page."""
    rows: list[tuple[int, str]] = []
    for line in man_page_text.splitlines():
        match = LEXNAMES_ROW.match(line + "\n")
        if match:
            rows.append((int(match.group(1)), match.group(2)))
    numbers = [number for number, _ in rows]
    if not rows or numbers != list(range(len(rows))):
        raise ValueError(f"lexnames table in the man page is not numbered 00..NN in order: {numbers}")
    return "".join(f"{number:02d}\t{name}\t{POS_NUMBER[name.split('.')[0]]}\n" for number, name in rows)


def _copy_if_changed(source: Path, target: Path) -> bool:
    if target.exists() and target.stat().st_size == source.stat().st_size:
        return False
    shutil.copyfile(source, target)  # a real copy: never a link into the Debian package
    return True


def build_wordnet_data(
    nltk_data_dir: Path,
    *,
    wordnet_dir: Path = DEBIAN_WORDNET_DIR,
    lexnames_man_page: Path = DEBIAN_LEXNAMES_MAN_PAGE,
) -> Path:
    """Write the WordNet corpus under `nltk_data_dir`/corpora/wordnet and return that folder.

    Idempotent: files already present with the source's size are left alone, so a re-run is quick.
    """
    missing = [name for name in WORDNET_FILES if not (wordnet_dir / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{wordnet_dir} lacks {', '.join(missing)}: install the Debian packages wordnet-base and "
            "wordnet-sense-index"
        )
    if not lexnames_man_page.is_file():
        raise FileNotFoundError(
            f"{lexnames_man_page} is missing (wordnet-base ships it; slim images drop man pages unless "
            "dpkg is told to keep it)"
        )
    corpus_dir = nltk_data_dir / "corpora" / "wordnet"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        _copy_if_changed(wordnet_dir / name, corpus_dir / name)
    lexnames = lexnames_from_man_page(gzip.decompress(lexnames_man_page.read_bytes()).decode("utf-8"))
    lexnames_path = corpus_dir / "lexnames"
    if not lexnames_path.exists() or lexnames_path.read_text(encoding="utf-8") != lexnames:
        lexnames_path.write_text(lexnames, encoding="utf-8")
    return corpus_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("nltk_data_dir", type=Path, help="the NLTK_DATA folder to build into")
    args = parser.parse_args(argv)
    try:
        corpus_dir = build_wordnet_data(args.nltk_data_dir)
    except (FileNotFoundError, ValueError) as exc:
        print(f"build_wordnet: {exc}", file=sys.stderr)
        return 1
    print(f"WordNet corpus for nltk ready in {corpus_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
