"""Registered word vectors on a real database: by server path (service and ``manage.py register_vectors``), by
upload (service, page, API) converted by the Celery task's body and once through a real broker and worker,
the upload limit, the store shared by identical content, deletion refused while scores name the hash, the
built-in GloVe entry, the record a scoring run reads, researcher-only access, and recovery."""

from __future__ import annotations

import hashlib
import shutil
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from gensim.models import KeyedVectors
from rest_framework.test import APIClient

from scoring.metrics.vector_files import load_vector_store
from scoring.metrics.word_vectors import glove_6b_50d_artifact_hash
from scoring.models import MetricScore, MetricSignature, VectorsStatus, WordVectorsFile
from scoring.services.word_vectors import (
    BROKER_DOWN_NOTE,
    STALE_SECONDS,
    WordVectorsError,
    word_vectors_convert,
    word_vectors_delete,
    word_vectors_record,
    word_vectors_recover,
    word_vectors_register_path,
    word_vectors_upload,
)
from scoring.tasks import word_vectors_convert_task
from tests.factories import ResearcherFactory, ResponseFactory, UserFactory
from tests.live_services import CeleryWorkerProcess

pytestmark = pytest.mark.django_db

WORDS = ["hello", "world", "café"]
MATRIX = np.array([[1.0, 0.5, -2.0], [0.25, -1.0, 3.0], [2.0, 2.0, 0.125]], dtype=np.float32)


def write_vectors(path: Path, *, binary: bool = True, words: list[str] = WORDS) -> Path:
    kv = KeyedVectors(vector_size=MATRIX.shape[1])
    kv.add_vectors(words, MATRIX[: len(words)])
    kv.save_word2vec_format(str(path), binary=binary)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hash_folders(root: Path) -> list[str]:
    return sorted(item.name for item in root.iterdir() if len(item.name) == 64) if root.exists() else []


def uploads(root: Path) -> list[Path]:
    folder = root / "uploads"
    return sorted(folder.rglob("*")) if folder.exists() else []


def upload_of(path: Path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


@pytest.fixture
def vectors_dir(tmp_path: Path, settings) -> Path:
    settings.DIALEVAL_VECTORS_DIR = tmp_path / "vectors"
    return settings.DIALEVAL_VECTORS_DIR


@pytest.fixture
def annotator(db):
    return UserFactory.create(username="annie")  # not in the researchers group


def web_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def csrf_token(client: Client, url: str) -> str:
    client.get(url)
    return client.cookies["csrftoken"].value


# --- by server path ----------------------------------------------------------------------------------------


def test_register_by_path_converts_now_and_gives_the_record_a_run_reads(
    vectors_dir: Path, tmp_path: Path
) -> None:
    source = write_vectors(tmp_path / "GoogleNews-small.bin")
    reports: list[tuple[int, int]] = []

    vectors = word_vectors_register_path(
        name="news-3d", path=str(source), progress=lambda done, total: reports.append((done, total))
    )

    assert vectors.status == VectorsStatus.READY
    assert vectors.format == "word2vec-binary"  # told from the first line
    assert vectors.content_hash == sha256(source)
    assert (vectors.dimension, vectors.words, vectors.size_bytes) == (3, 3, source.stat().st_size)
    assert vectors.source == f"path: {source}"
    assert vectors.store_path == str(vectors_dir / sha256(source))
    assert vectors.finished_at is not None
    assert source.is_file()  # a file on the server is read, never moved or removed
    assert reports[-1] == (source.stat().st_size, source.stat().st_size)
    record = word_vectors_record("news-3d")
    assert record == {
        "name": "news-3d",
        "hash": sha256(source),
        "path": str(vectors_dir / sha256(source)),
        "dimension": 3,
        "language": "en",
    }
    loaded = load_vector_store(Path(record["path"]), record["hash"])
    np.testing.assert_array_equal(loaded.lookup(["café"]), MATRIX[[2]])


def test_the_builtin_glove_is_a_record_with_the_package_path() -> None:
    record = word_vectors_record("glove-6b-50d")
    assert record == {
        "name": "glove-6b-50d",
        "hash": glove_6b_50d_artifact_hash(),
        "path": "",
        "dimension": 50,
        "language": "en",
    }


def test_records_of_unknown_or_unready_vectors_are_refused(vectors_dir: Path, researcher) -> None:
    with pytest.raises(WordVectorsError, match="no word vectors named 'nope'; registered: glove-6b-50d"):
        word_vectors_record("nope")
    WordVectorsFile.objects.create(name="busy", format="glove-text", source="upload: x", source_path="/x")
    with pytest.raises(
        WordVectorsError, match=r"the word vectors 'busy' are not ready \(waiting for a worker\)"
    ):
        word_vectors_record("busy")


def test_register_by_path_refuses_bad_input_and_leaves_nothing(vectors_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(WordVectorsError, match="no such file on the server") as missing:
        word_vectors_register_path(name="x", path=str(tmp_path / "missing.bin"))
    assert missing.value.field == "path"
    with pytest.raises(WordVectorsError, match="not a file"):
        word_vectors_register_path(name="x", path=str(tmp_path))
    with pytest.raises(WordVectorsError, match="names the built-in GloVe 6B 50d"):
        word_vectors_register_path(name="glove-6b-50d", path=str(write_vectors(tmp_path / "a.bin")))
    with pytest.raises(WordVectorsError, match="use 1 to 80 letters"):
        word_vectors_register_path(name="has space", path=str(tmp_path / "a.bin"))
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\n", encoding="utf-8")
    with pytest.raises(WordVectorsError, match=r"bad\.txt, line 2: 2 values after the word 'b', expected 3"):
        word_vectors_register_path(name="bad", path=str(bad))
    assert not WordVectorsFile.objects.exists()
    assert hash_folders(vectors_dir) == []


def test_a_second_registration_of_identical_content_reuses_the_store(
    vectors_dir: Path, tmp_path: Path
) -> None:
    first_file = write_vectors(tmp_path / "a.bin")
    second_file = tmp_path / "copy.bin"
    shutil.copyfile(first_file, second_file)

    first = word_vectors_register_path(name="first", path=str(first_file))
    second = word_vectors_register_path(name="second", path=str(second_file))

    assert second.content_hash == first.content_hash
    assert second.store_path == first.store_path
    assert second.progress["reused"] is True
    assert "store is reused" in second.progress["note"]
    assert hash_folders(vectors_dir) == [first.content_hash]
    word_vectors_delete(vectors=first)  # the other name still uses the store: it stays
    assert Path(second.store_path).is_dir()


def test_register_vectors_and_list_vectors_commands(vectors_dir: Path, tmp_path: Path) -> None:
    source = write_vectors(tmp_path / "vectors.txt", binary=False)
    out = StringIO()

    call_command(
        "register_vectors",
        "small-text",
        str(source),
        "--format",
        "word2vec-text",
        stdout=out,
        stderr=StringIO(),
    )

    text = out.getvalue()
    assert "registered small-text: word2vec-text, 3 words x 3 dimensions" in text
    assert f"hash {sha256(source)}" in text
    assert WordVectorsFile.objects.get(name="small-text").status == VectorsStatus.READY
    listed = StringIO()
    call_command("list_vectors", stdout=listed)
    lines = [line.split("\t") for line in listed.getvalue().splitlines()]
    assert lines[0][:4] == ["name", "format", "dimension", "words"]
    by_name = {line[0]: line for line in lines[1:]}
    assert by_name["glove-6b-50d"][1:4] == ["package", "50", "400000"]
    assert by_name["small-text"][1:4] == ["word2vec-text", "3", "3"]
    assert by_name["small-text"][5] == sha256(source)[:12]
    with pytest.raises(CommandError, match="name: word vectors named 'small-text' exist already"):
        call_command("register_vectors", "small-text", str(source), stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match=r"path: .*no such file on the server"):
        call_command(
            "register_vectors", "other", str(tmp_path / "gone.bin"), stdout=StringIO(), stderr=StringIO()
        )


# --- by upload -----------------------------------------------------------------------------------------------


def test_an_upload_is_converted_by_the_task(vectors_dir: Path, tmp_path: Path, researcher) -> None:
    source = write_vectors(tmp_path / "glove-ish.txt", binary=False)

    vectors = word_vectors_upload(name="uploaded", upload=upload_of(source), user=researcher, enqueue=False)

    assert vectors.status == VectorsStatus.PENDING
    assert vectors.format == "word2vec-text"
    assert vectors.source == "upload: glove-ish.txt"
    saved = Path(vectors.source_path)
    assert saved.read_bytes() == source.read_bytes()
    assert saved.is_relative_to(vectors_dir / "uploads")
    assert vectors.created_by == researcher

    word_vectors_convert_task(vectors.pk)  # the Celery task's function, run here

    vectors.refresh_from_db()
    assert vectors.status == VectorsStatus.READY, vectors.error
    assert vectors.content_hash == sha256(source)
    assert (vectors.words, vectors.dimension) == (3, 3)
    assert vectors.progress["done_bytes"] == vectors.progress["total_bytes"] == source.stat().st_size
    assert vectors.progress["attempts"] == 1
    assert not saved.exists()  # the upload is removed once converted
    assert uploads(vectors_dir) == []
    assert word_vectors_convert(vectors_id=vectors.pk) is False  # a second message finds nothing to do
    assert word_vectors_record("uploaded")["hash"] == sha256(source)


def test_an_upload_that_cannot_be_converted_fails_with_the_line(vectors_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1 two\n", encoding="utf-8")
    vectors = word_vectors_upload(
        name="bad", upload=upload_of(bad), vectors_format="glove-text", enqueue=False
    )

    word_vectors_convert_task(vectors.pk)

    vectors.refresh_from_db()
    assert vectors.status == VectorsStatus.FAILED
    assert vectors.error == "bad.txt, line 2: value 2 ('two') is not a number"
    assert uploads(vectors_dir) == []
    assert hash_folders(vectors_dir) == []


def test_an_upload_over_the_limit_is_refused_and_stores_nothing(
    vectors_dir: Path, tmp_path: Path, settings
) -> None:
    settings.DIALEVAL_VECTORS_MAX_UPLOAD_BYTES = 50
    source = write_vectors(tmp_path / "big.bin")
    assert source.stat().st_size > 50

    with pytest.raises(
        WordVectorsError, match=r"big\.bin: \d+ bytes, over the upload limit of 50 bytes"
    ) as refused:
        word_vectors_upload(name="big", upload=upload_of(source), enqueue=False)

    assert refused.value.field == "file"
    assert "DIALEVAL_VECTORS_MAX_UPLOAD_BYTES" in refused.value.message
    assert not WordVectorsFile.objects.exists()
    assert uploads(vectors_dir) == []
    api = api_client(ResearcherFactory.create(username="rita")).post(
        "/api/word-vectors/", {"name": "big", "file": upload_of(source)}, format="multipart"
    )
    assert api.status_code == 400
    assert "over the upload limit of 50 bytes" in api.json()["file"][0]
    assert uploads(vectors_dir) == []


def test_uploads_that_are_not_vectors_or_reuse_a_name_are_refused(vectors_dir: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\nnothing here\n", encoding="utf-8")
    with pytest.raises(WordVectorsError, match=r"notes\.md: not a vectors file") as refused:
        word_vectors_upload(name="notes", upload=upload_of(notes), enqueue=False)
    assert refused.value.field == "file"
    source = write_vectors(tmp_path / "a.bin")
    word_vectors_upload(name="taken", upload=upload_of(source), enqueue=False)
    with pytest.raises(WordVectorsError, match="word vectors named 'taken' exist already"):
        word_vectors_upload(name="taken", upload=upload_of(source), enqueue=False)
    assert WordVectorsFile.objects.count() == 1
    assert len([path for path in uploads(vectors_dir) if path.is_file()]) == 1


def test_an_upload_while_the_broker_is_down_stays_pending_and_says_so(
    vectors_dir: Path, tmp_path: Path, committed
) -> None:
    with committed():
        vectors = word_vectors_upload(name="later", upload=upload_of(write_vectors(tmp_path / "a.bin")))
    vectors.refresh_from_db()
    assert vectors.status == VectorsStatus.PENDING
    assert vectors.progress["note"] == BROKER_DOWN_NOTE


def test_recovery_queues_a_conversion_whose_worker_stopped_then_fails_it(
    vectors_dir: Path, tmp_path: Path
) -> None:
    vectors = word_vectors_upload(
        name="lost", upload=upload_of(write_vectors(tmp_path / "a.bin")), enqueue=False
    )
    long_ago = timezone.now() - timedelta(seconds=STALE_SECONDS + 60)
    WordVectorsFile.objects.filter(pk=vectors.pk).update(
        status=VectorsStatus.CONVERTING,
        attempts=1,
        heartbeat_at=long_ago,
        progress={"attempts": 1, "updated_at": long_ago.isoformat()},
    )

    report = word_vectors_recover()

    assert report.requeued == [vectors.pk]
    vectors.refresh_from_db()
    assert vectors.status == VectorsStatus.PENDING
    assert vectors.progress["note"].startswith("queued again: the conversion stopped")
    word_vectors_convert(vectors_id=vectors.pk)  # a worker takes it: attempt 2 converts it
    vectors.refresh_from_db()
    assert (vectors.status, vectors.attempts, vectors.progress["attempts"]) == (VectorsStatus.READY, 2, 2)
    WordVectorsFile.objects.filter(pk=vectors.pk).update(
        status=VectorsStatus.CONVERTING,
        heartbeat_at=long_ago,
        progress={"attempts": 2, "updated_at": long_ago.isoformat()},
    )
    assert word_vectors_recover().failed == [vectors.pk]
    vectors.refresh_from_db()
    assert vectors.status == VectorsStatus.FAILED
    assert "the conversion stopped 2 time(s)" in vectors.error


# --- deleting ------------------------------------------------------------------------------------------------


def test_delete_is_refused_while_scores_name_the_hash(vectors_dir: Path, tmp_path: Path, committed) -> None:
    vectors = word_vectors_register_path(name="scored", path=str(write_vectors(tmp_path / "a.bin")))
    signature = MetricSignature.objects.create(
        text=f"embedding-average|vectors:scored|version:x-{vectors.pk}",
        name="embedding-average",
        artifact_hash=vectors.content_hash,
        version="x",
    )
    score = MetricScore.objects.create(response=ResponseFactory.create(), signature=signature, value=0.5)

    with pytest.raises(WordVectorsError, match=r"1 stored scores \(embedding-average\) were computed with"):
        word_vectors_delete(vectors=vectors)
    assert WordVectorsFile.objects.filter(name="scored").exists()

    score.delete()
    with committed():
        word_vectors_delete(vectors=vectors)
    assert not WordVectorsFile.objects.filter(name="scored").exists()
    assert hash_folders(vectors_dir) == []  # its store went with it


# --- page and API --------------------------------------------------------------------------------------------


def test_the_page_lists_uploads_and_shows_progress(vectors_dir: Path, tmp_path: Path, researcher) -> None:
    client = web_client(researcher)
    token = csrf_token(client, "/scoring/word-vectors/")
    source = write_vectors(tmp_path / "vec.bin")

    refused = client.post(
        "/scoring/word-vectors/", {"name": "x", "format": "auto", "language": "en", "file": upload_of(source)}
    )
    assert refused.status_code == 403  # CSRF is on
    posted = client.post(
        "/scoring/word-vectors/",
        {
            "name": "from-page",
            "format": "auto",
            "language": "en",
            "file": upload_of(source, "<img src=x onerror=alert(1)>.bin"),
            "csrfmiddlewaretoken": token,
        },
    )
    assert posted.status_code == 302
    vectors = WordVectorsFile.objects.get(name="from-page")
    assert vectors.status == VectorsStatus.PENDING
    assert vectors.source == "upload: <img src=x onerror=alert(1)>.bin"

    page = client.get("/scoring/word-vectors/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="vectors-glove-6b-50d"' in html
    assert glove_6b_50d_artifact_hash()[:12] in html
    assert 'id="vectors-from-page"' in html
    assert '<progress class="job-progress"' in html  # pending: a progress bar the script fills
    assert 'data-job-url="/api/word-vectors/from-page/"' in html
    assert "upload: &lt;img src=x onerror=alert(1)&gt;.bin" in html  # the file name, escaped
    assert "<img src=x" not in html
    assert researcher.username in html

    taken = client.post(
        "/scoring/word-vectors/",
        {
            "name": "from-page",
            "format": "auto",
            "language": "en",
            "file": upload_of(source),
            "csrfmiddlewaretoken": token,
        },
    )
    assert taken.status_code == 400
    assert "word vectors named &#x27;from-page&#x27; exist already" in taken.content.decode()

    other = web_client(ResearcherFactory.create(username="bob"))
    assert (
        'action="/scoring/word-vectors/from-page/delete/"'
        not in other.get("/scoring/word-vectors/").content.decode()
    )
    other_token = csrf_token(other, "/scoring/word-vectors/")
    denied = other.post("/scoring/word-vectors/from-page/delete/", {"csrfmiddlewaretoken": other_token})
    assert denied.status_code == 403  # only who registered them (or staff) may delete them
    assert 'action="/scoring/word-vectors/from-page/delete/"' in html
    deleted = client.post("/scoring/word-vectors/from-page/delete/", {"csrfmiddlewaretoken": token})
    assert deleted.status_code == 302
    assert not WordVectorsFile.objects.filter(name="from-page").exists()


def test_the_trained_models_page_links_the_word_vectors_page(researcher) -> None:
    html = web_client(researcher).get("/scoring/models/").content.decode()
    assert 'href="/scoring/word-vectors/"' in html


def test_annotators_are_refused(annotator, vectors_dir: Path, tmp_path: Path) -> None:
    client = web_client(annotator)
    assert client.get("/scoring/word-vectors/").status_code == 403
    api = api_client(annotator)
    assert api.get("/api/word-vectors/").status_code == 403
    assert api.get("/api/word-vectors/glove-6b-50d/").status_code == 403
    source = write_vectors(tmp_path / "a.bin")
    assert (
        api.post(
            "/api/word-vectors/", {"name": "x", "file": upload_of(source)}, format="multipart"
        ).status_code
        == 403
    )
    assert not WordVectorsFile.objects.exists()
    assert APIClient().get("/api/word-vectors/").status_code in (401, 403)


def test_the_api_uploads_follows_and_deletes(vectors_dir: Path, tmp_path: Path, researcher) -> None:
    api = api_client(researcher)
    source = write_vectors(tmp_path / "vec.txt", binary=False)

    created = api.post(
        "/api/word-vectors/",
        {"name": "api-vec", "format": "auto", "file": upload_of(source)},
        format="multipart",
    )

    assert created.status_code == 202, created.content
    body = created.json()
    assert (body["name"], body["status"], body["format"], body["builtin"]) == (
        "api-vec",
        "pending",
        "word2vec-text",
        False,
    )
    assert body["created_by"] == researcher.username
    word_vectors_convert_task(WordVectorsFile.objects.get(name="api-vec").pk)
    followed = api.get("/api/word-vectors/api-vec/").json()
    assert followed["status"] == "ready"
    assert followed["content_hash"] == sha256(source)
    assert (followed["dimension"], followed["words"]) == (3, 3)
    listed = api.get("/api/word-vectors/").json()
    assert [entry["name"] for entry in listed] == ["glove-6b-50d", "api-vec"]
    assert listed[0]["builtin"] is True
    assert listed[0]["content_hash"] == glove_6b_50d_artifact_hash()
    assert api.get("/api/word-vectors/missing/").status_code == 404
    assert api.delete("/api/word-vectors/glove-6b-50d/").status_code == 403
    other = api_client(ResearcherFactory.create(username="bob"))
    assert other.delete("/api/word-vectors/api-vec/").status_code == 403  # not theirs
    assert api.delete("/api/word-vectors/api-vec/").status_code == 204
    assert not WordVectorsFile.objects.filter(name="api-vec").exists()


def test_vector_uploads_get_their_own_request_size_limit(
    vectors_dir: Path, tmp_path: Path, settings, researcher
) -> None:
    settings.DIALEVAL_MAX_REQUEST_BYTES = 100  # every other endpoint refuses bodies over 100 bytes
    api = api_client(researcher)
    source = write_vectors(tmp_path / "vec.bin")
    assert (
        api.post(
            "/api/word-vectors/", {"name": "fits", "file": upload_of(source)}, format="multipart"
        ).status_code
        == 202
    )
    settings.DIALEVAL_VECTORS_MAX_UPLOAD_BYTES = 10
    too_big = SimpleUploadedFile("huge.bin", b"x" * (1024 * 1024 + 100))
    refused = api.post("/api/word-vectors/", {"name": "huge", "file": too_big}, format="multipart")
    assert refused.status_code == 413
    assert "each uploaded file may have up to 10" in refused.json()["detail"]


def test_the_schema_documents_the_word_vectors_endpoints(researcher) -> None:
    schema = api_client(researcher).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"get", "post"} <= set(schema["paths"]["/api/word-vectors/"])
    assert {"get", "delete"} <= set(schema["paths"]["/api/word-vectors/{name}/"])
    properties = schema["components"]["schemas"]["WordVectors"]["properties"]
    assert {"name", "format", "dimension", "words", "content_hash", "status", "progress"} <= set(properties)
    upload = schema["paths"]["/api/word-vectors/"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload


# --- through a real broker and worker ------------------------------------------------------------------------


@pytest.mark.integration
def test_a_real_worker_converts_an_upload(celery_worker_process: CeleryWorkerProcess, tmp_path: Path) -> None:
    from django.conf import settings

    assert Path(settings.DIALEVAL_VECTORS_DIR).name.startswith("dialeval-test-vectors-")
    source = write_vectors(tmp_path / "worker.bin")
    vectors = word_vectors_upload(name="via-worker", upload=upload_of(source))  # sent once committed
    try:
        deadline = time.monotonic() + 20
        while True:
            vectors.refresh_from_db()
            if vectors.is_finished:
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"still {vectors.status} after 20 s: {vectors.progress}\n{celery_worker_process.log()}"
                )
            time.sleep(0.2)
        assert vectors.status == VectorsStatus.READY, f"{vectors.error}\n{celery_worker_process.log()}"
        assert vectors.content_hash == sha256(source)
        loaded = load_vector_store(Path(vectors.store_path), vectors.content_hash)
        np.testing.assert_array_equal(loaded.lookup(["hello"]), MATRIX[[0]])
    finally:  # the session's folder of the test settings, which the worker shares (not var/)
        shutil.rmtree(settings.DIALEVAL_VECTORS_DIR, ignore_errors=True)
