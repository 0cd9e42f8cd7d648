"""Register a word vectors file on this server for the embedding metrics, and convert it now.

    manage.py register_vectors glove-840b-300d /data/glove.840B.300d.txt
    manage.py register_vectors googlenews-300 /data/GoogleNews-vectors-negative300.bin --format word2vec-binary

--format: auto (default: told from the first line), word2vec-binary, word2vec-text or glove-text (no header
line; text formats must be UTF-8). The file is read once (a progress bar over its bytes) into a store under
DIALEVAL_VECTORS_DIR named by the file's sha256, which every score computed with the vectors records in its
signature; registering the same bytes again under another name reuses that store. Scoring runs then name
the vectors by NAME. Nothing is downloaded. See docs/word-vectors.md.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Language
from scoring.services.word_vectors import FORMAT_CHOICES, WordVectorsError, word_vectors_register_path


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="how runs will name them: letters, digits, - and _")
        parser.add_argument("path", help="the vectors file on this server")
        parser.add_argument("--format", choices=FORMAT_CHOICES, default="auto", dest="vectors_format")
        parser.add_argument(
            "--language", choices=Language.values, default="en", help="the vocabulary's language"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from tqdm import tqdm

        bar = tqdm(total=0, unit="B", unit_scale=True, desc="converting", disable=options["verbosity"] < 1)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            vectors = word_vectors_register_path(
                name=options["name"],
                path=options["path"],
                vectors_format=options["vectors_format"],
                language=options["language"],
                progress=progress,
            )
        except WordVectorsError as error:
            raise CommandError(f"{error.field}: {error.message}") from None
        finally:
            bar.close()
        self.stdout.write(
            f"registered {vectors.name}: {vectors.format}, {vectors.words:,} words x {vectors.dimension} "
            f"dimensions, hash {vectors.content_hash}"
        )
        self.stdout.write(f"store: {vectors.store_path}")
        note = str(vectors.progress.get("note") or "")
        if note and note != "converted":
            self.stdout.write(note)
