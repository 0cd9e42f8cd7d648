"""Scoring files without a study: ``manage.py score_files`` and ``POST /api/score/``.

Values are checked against the named tool computed here (pycocoevalcap as nlg-eval calls it, sacrebleu, nltk's
corpus_bleu), signatures against what a scoring run writes, and bad input against messages that name the
file and line.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from scoring.metrics.registry import compute_metrics, signature_parameters, system_metric_spec
from scoring.metrics.signature import metric_signature
from scoring.metrics.tokenize import tokenize
from scoring.services.file_scoring import context_turns
from tests.factories import ResearcherFactory, UserFactory
from tests.scoring.metric_batches import MetricBatch, dailydialog_batch
from tests.scoring.metric_tester import assert_values_close
from tests.scoring.reference_metrics import (
    coco_bleu,
    coco_cider,
    coco_cider_reference,
    coco_rouge,
    nltk_corpus_bleu,
    sacrebleu_bleu_reference,
    sacrebleu_chrf_reference,
    sacrebleu_corpus_bleu_reference,
    sacrebleu_corpus_chrf_reference,
)

TOLERANCE = 1e-9
REPLIES = ["i am fine , thank you .", "The weather is nice today!", "no", "see you at the station at 5 ."]
FIRST = [
    "i am fine , thanks .",
    "the weather is lovely today",
    "yes , of course",
    "see you at the station at five .",
]
SECOND = ["fine , and you ?", "", "no way", "bye"]  # line 2 has one reference only


def _write(folder: Path, name: str, lines: list[str]) -> str:
    path = folder / name
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return {
        "hyp": _write(tmp_path, "hyp.txt", REPLIES),
        "ref1": _write(tmp_path, "ref1.txt", FIRST),
        "ref2": _write(tmp_path, "ref2.txt", SECOND),
    }


def _references() -> list[list[str]]:
    return [[text for text in (first, second) if text] for first, second in zip(FIRST, SECOND, strict=True)]


def _score_files(*arguments: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("score_files", *arguments, stdout=out, stderr=err)
    return out.getvalue()


# --- the command ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_json_gives_nlg_evals_values_the_corpus_statistic_and_the_signatures(files: dict[str, str]) -> None:
    output = _score_files(
        "--hyp", files["hyp"], "--ref", files["ref1"], "--ref", files["ref2"],
        "--metrics", "bleu-4,rouge-l,cider-d", "--implementation", "nlg-eval", "--format", "json",
    )  # fmt: skip
    scores = json.loads(output)
    assert scores["lines"] == len(REPLIES)
    assert [row["line"] for row in scores["sentences"]] == [1, 2, 3, 4]
    corpus, per_item = coco_bleu(REPLIES, _references())
    rouge = [f for _, _, f in coco_rouge(REPLIES, _references())]
    sentences = scores["sentences"]
    assert_values_close([row["bleu-4"] for row in sentences], [row[3] for row in per_item], TOLERANCE)
    assert_values_close([row["rouge-l"] for row in sentences], rouge, TOLERANCE)
    assert_values_close([row["cider-d"] for row in sentences], coco_cider(REPLIES, _references()), TOLERANCE)
    # BLEU-4's corpus value is coco's corpus BLEU-4, not a mean of sentence values; the others are means
    assert scores["corpus"]["bleu-4"]["value"] == pytest.approx(corpus[3], abs=TOLERANCE)
    assert scores["corpus"]["bleu-4"]["statistic"] == "corpus-bleu"
    assert scores["corpus"]["rouge-l"]["value"] == pytest.approx(sum(rouge) / len(rouge), abs=TOLERANCE)
    assert scores["corpus"]["rouge-l"]["statistic"] == "mean of the sentence values"
    # the signatures a scoring run writes: several references on some line, so refs:multi
    for name in ("bleu-4", "rouge-l", "cider-d"):
        # without --context every line is its own CIDEr-D document (df:lines), as in pycocoevalcap
        params = {"df": "lines"} if name == "cider-d" else None
        expected = signature_parameters(
            name, language="en", references="multi", implementation="nlg-eval", params=params
        )
        assert scores["signatures"][name] == metric_signature(name, expected)
        assert scores["implementations"][name] == "nlg-eval"
    corpus_parameters = system_metric_spec("corpus-bleu").signature_parameters(
        language="en", references="multi", implementation="nlg-eval"
    )
    assert scores["corpus"]["bleu-4"]["signature"] == metric_signature("corpus-bleu", corpus_parameters)


@pytest.mark.django_db
def test_csv_gives_sacrebleus_values_with_its_option(files: dict[str, str]) -> None:
    output = _score_files(
        "--hyp", files["hyp"], "--ref", files["ref1"], "--ref", files["ref2"],
        "--metrics", "bleu-4,chrf", "--implementation", "bleu=sacrebleu", "--option", "tok=intl", "--format", "csv",
    )  # fmt: skip
    lines = list(csv.DictReader(io.StringIO(output)))
    assert list(lines[0]) == ["level", "line", "metric", "value", "signature"]
    sentence = {(line["metric"], int(line["line"])): line for line in lines if line["level"] == "sentence"}
    batch = MetricBatch.of(REPLIES, _references())
    bleu = sacrebleu_bleu_reference(4, {"tok": "intl"})(batch)
    chrf = sacrebleu_chrf_reference(0)(batch)
    numbers = range(1, len(REPLIES) + 1)
    assert_values_close([float(sentence[("bleu-4", n)]["value"]) for n in numbers], bleu, TOLERANCE)
    assert_values_close([float(sentence[("chrf", n)]["value"]) for n in numbers], chrf, TOLERANCE)
    for index in range(len(REPLIES)):
        assert "|impl:sacrebleu|" in sentence[("bleu-4", index + 1)]["signature"]
        assert "|tok:intl|" in sentence[("bleu-4", index + 1)]["signature"]
    corpus = {line["metric"]: line for line in lines if line["level"] == "corpus"}
    contexts = batch.contexts_of("system")  # sacrebleu's reference streams padded with None, line 2 has one
    expected = sacrebleu_corpus_bleu_reference({"tok": "intl"})(contexts)
    assert_values_close([float(corpus["bleu-4"]["value"])], [expected], TOLERANCE)
    assert corpus["bleu-4"]["signature"].startswith("corpus-bleu|")
    assert "|tok:intl|" in corpus["bleu-4"]["signature"]
    assert_values_close(
        [float(corpus["chrf"]["value"])], [sacrebleu_corpus_chrf_reference(0)(contexts)], TOLERANCE
    )


@pytest.mark.django_db
def test_the_table_gives_the_default_implementation_and_nltks_corpus_bleu(files: dict[str, str]) -> None:
    output = _score_files("--hyp", files["hyp"], "--ref", files["ref1"], "--metrics", "bleu-4,bleu-2")
    lines = output.splitlines()
    assert lines[0].split() == ["metric", "corpus", "n", "statistic", "/", "signature"]
    # one reference per line: refs:single, and BLEU-4's corpus value is nltk's corpus_bleu on the same tokens
    corpus_line = next(line for line in lines if line.startswith("bleu-4 "))
    expected = nltk_corpus_bleu([tokenize(reply) for reply in REPLIES], [[tokenize(ref)] for ref in FIRST])
    assert float(corpus_line.split()[1]) == pytest.approx(expected, abs=5e-5)  # printed to 4 decimals
    assert corpus_line.split()[2] == "4"
    assert any(line.strip().startswith("corpus-bleu|") and "|refs:single|" in line for line in lines)
    assert any(line.strip().startswith("sentences: bleu-4|") and "|impl:nltk|" in line for line in lines)
    header = lines.index("line\tbleu-4\tbleu-2")
    rows = [line.split("\t") for line in lines[header + 1 :]]
    computed = compute_metrics(["bleu-4", "bleu-2"], REPLIES, [[ref] for ref in FIRST], [""] * 4, "en")
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    for index, row in enumerate(rows):
        assert float(row[1]) == pytest.approx(computed["bleu-4"][index], abs=5e-7)
        assert float(row[2]) == pytest.approx(computed["bleu-2"][index], abs=5e-7)


@pytest.mark.django_db
def test_a_line_without_a_reference_has_no_value_and_a_note(files: dict[str, str], tmp_path: Path) -> None:
    references = _write(tmp_path, "partial.txt", ["i am fine , thanks .", "", "yes", "bye"])
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "score_files", "--hyp", files["hyp"], "--ref", references, "--metrics", "rouge-l", "--format", "json",
        stdout=out, stderr=err,
    )  # fmt: skip
    scores = json.loads(out.getvalue())
    assert scores["sentences"][1]["rouge-l"] is None
    assert all(row["rouge-l"] is not None for index, row in enumerate(scores["sentences"]) if index != 1)
    assert scores["corpus"]["rouge-l"]["n"] == 3
    assert "rouge-l: 1 line(s) have no reference" in err.getvalue()


@pytest.mark.django_db
def test_line_counts_that_differ_name_both_files(files: dict[str, str], tmp_path: Path) -> None:
    short = _write(tmp_path, "short.txt", FIRST[:3])
    with pytest.raises(CommandError) as raised:
        _score_files("--hyp", files["hyp"], "--ref", short, "--metrics", "bleu-4")
    assert str(raised.value).startswith(f"{short} has 3 lines but {files['hyp']} has 4")
    contexts = _write(tmp_path, "contexts.txt", ["a", "b"])
    with pytest.raises(CommandError) as raised:
        _score_files(
            "--hyp", files["hyp"], "--ref", files["ref1"], "--context", contexts, "--metrics", "bleu-4"
        )
    assert str(raised.value).startswith(f"{contexts} has 2 lines but {files['hyp']} has 4")


@pytest.mark.django_db
@pytest.mark.parametrize("content", [b"", b"\n\n", b"   \n", b"\xef\xbb\xbf\n"])
def test_an_empty_file_is_named(files: dict[str, str], tmp_path: Path, content: bytes) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(content)
    with pytest.raises(CommandError, match=f"^{empty}: the file is empty$"):
        _score_files("--hyp", str(empty), "--ref", files["ref1"], "--metrics", "bleu-4")
    with pytest.raises(CommandError, match=f"^{empty}: the file is empty$"):
        _score_files("--hyp", files["hyp"], "--ref", str(empty), "--metrics", "bleu-4")


@pytest.mark.django_db
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["plain", "with-bom"])
def test_bytes_that_are_not_utf8_are_named_with_their_line(
    files: dict[str, str], tmp_path: Path, bom: bytes
) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(bom + "i am fine\nthe caf\u00e9 is nice\nno\nbye\n".encode("latin-1"))
    with pytest.raises(CommandError) as raised:
        _score_files("--hyp", files["hyp"], "--ref", str(bad), "--metrics", "bleu-4")
    message = str(raised.value)
    assert message.startswith(f"{bad}, line 2: not UTF-8 (byte 0xe9 at offset ")
    offset = int(message.split("at offset ")[1].split(")")[0])
    assert bad.read_bytes()[offset] == 0xE9  # the offset points at the byte in the file
    assert "save the file as UTF-8" in message


@pytest.mark.django_db
def test_a_utf8_file_with_a_bom_and_crlf_lines_reads_as_its_text(
    files: dict[str, str], tmp_path: Path
) -> None:
    windows = tmp_path / "windows.txt"
    windows.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(FIRST).encode() + b"\r\n")
    plain = json.loads(
        _score_files("--hyp", files["hyp"], "--ref", files["ref1"], "--metrics", "chrf", "--format", "json")
    )
    crlf = json.loads(
        _score_files("--hyp", files["hyp"], "--ref", str(windows), "--metrics", "chrf", "--format", "json")
    )
    assert crlf["sentences"] == plain["sentences"]


@pytest.mark.django_db
def test_unknown_metrics_implementations_and_options_are_refused(files: dict[str, str]) -> None:
    base = ["--hyp", files["hyp"], "--ref", files["ref1"]]
    with pytest.raises(CommandError, match="unknown metric 'bleu-5'; known metrics: bleu-1"):
        _score_files(*base, "--metrics", "bleu-4,bleu-5")
    with pytest.raises(CommandError, match="implementation: unknown implementation 'coco'"):
        _score_files(*base, "--metrics", "bleu-4", "--implementation", "coco")
    with pytest.raises(CommandError, match="option 'stem' applies to none"):
        _score_files(*base, "--metrics", "bleu-4", "--option", "stem=yes")
    with pytest.raises(CommandError, match="--option 'tok': write KEY=VALUE"):
        _score_files(*base, "--metrics", "bleu-4", "--option", "tok")
    with pytest.raises(CommandError, match="no such file"):
        _score_files("--hyp", files["hyp"] + ".missing", "--metrics", "bleu-4")


def test_context_turns_split_on_tabs_or_eou() -> None:
    assert context_turns("hello , how are you ?\tfine , and you ?") == [
        "hello , how are you ?",
        "fine , and you ?",
    ]
    assert context_turns("hello __eou__ fine , and you ? __eou__ ") == ["hello", "fine , and you ?"]
    assert context_turns("one turn only") == ["one turn only"]
    assert context_turns("") == []


@pytest.mark.django_db
def test_contexts_reach_the_metrics_as_their_last_turn(tmp_path: Path) -> None:
    """CIDEr-D counts each context once in its document frequencies (one group per last turn and references):
    two lines whose contexts end with the same turn are one context, whatever separator wrote them."""
    replies = ["i am fine", "fine thanks", "the weather is nice", "see you"]
    references = ["i am fine , thanks", "i am fine , thanks", "the weather is fine", "see you tomorrow"]
    hyp = _write(tmp_path, "hyp.txt", replies)
    ref = _write(tmp_path, "ref.txt", references)

    def cider(contexts: list[str]) -> list[float]:
        path = _write(tmp_path, "ctx.txt", contexts)
        output = _score_files(
            "--hyp", hyp, "--ref", ref, "--context", path, "--metrics", "cider-d", "--format", "json"
        )
        return [row["cider-d"] for row in json.loads(output)["sentences"]]

    separators = cider(["hi\thow are you ?", "hello __eou__ how are you ?", "and the weather ?", "bye ?"])
    one_turn = cider(["how are you ?", "how are you ?", "and the weather ?", "bye ?"])
    different = cider(["how are you ?", "how is it going ?", "and the weather ?", "bye ?"])
    assert separators == pytest.approx(one_turn, abs=TOLERANCE)
    assert separators != pytest.approx(different, abs=1e-6)
    # the shared context is one "image" of pycocoevalcap, answered by the first and by the second line
    contexts = ["how are you ?", "how are you ?", "and the weather ?", "bye ?"]
    shared = MetricBatch.of(replies, [[text] for text in references], queries=contexts)
    assert_values_close(one_turn, coco_cider_reference()(shared), TOLERANCE)
    # and contexts that differ are two images, as pycocoevalcap counts them
    assert_values_close(different, coco_cider(replies, [[text] for text in references]), TOLERANCE)


@pytest.mark.django_db
def test_without_contexts_each_line_is_its_own_cider_document(tmp_path: Path) -> None:
    """pycocoevalcap counts every line of a file as a document, also lines whose references are the same text:
    without --context, so does score_files (df:lines); grouping them (the earlier df:contexts) made the first
    two lines one document and gave 2.5357 and 0.1084 where pycocoevalcap gives 1.5566 and 0.0687."""
    replies = [
        "thank you very much .",
        "you are welcome .",
        "i like the red one best",
        "see you tomorrow then",
    ]
    references = ["thank you .", "thank you .", "i prefer the red one", "see you tomorrow"]
    files = ["--hyp", _write(tmp_path, "hyp.txt", replies), "--ref", _write(tmp_path, "ref.txt", references)]
    scores = json.loads(_score_files(*files, "--metrics", "cider-d", "--format", "json"))
    expected = coco_cider(replies, [[text] for text in references])
    assert_values_close([row["cider-d"] for row in scores["sentences"]], expected, TOLERANCE)
    assert "|df:lines|" in scores["signatures"]["cider-d"]
    # the convention can still be asked for, and the signature says which was used
    grouped = json.loads(
        _score_files(*files, "--metrics", "cider-d", "--option", "df=contexts", "--format", "json")
    )
    assert "|df:contexts|" in grouped["signatures"]["cider-d"]
    assert grouped["sentences"][0]["cider-d"] != pytest.approx(expected[0], abs=1e-3)


@pytest.mark.django_db
@pytest.mark.shared_data
def test_cider_of_2000_dailydialog_pairs_is_pycocoevalcaps(tmp_path: Path) -> None:
    """2,000 turn pairs of DailyDialog's test set, where many references recur ("thank you ."): every line
    equals pycocoevalcap's Cider to 1e-9 (1,351 lines differed when recurring references were one document)."""
    batch = dailydialog_batch(limit=2000)
    hypotheses, first = list(batch.hypotheses), [refs[0] for refs in batch.references]
    assert len(set(first)) < len(first)  # references recur, so the convention matters
    output = _score_files(
        "--hyp", _write(tmp_path, "hyp.txt", hypotheses), "--ref", _write(tmp_path, "ref.txt", first),
        "--metrics", "cider-d", "--format", "json",
    )  # fmt: skip
    ours = [row["cider-d"] for row in json.loads(output)["sentences"]]
    assert_values_close(ours, coco_cider(hypotheses, [[text] for text in first]), TOLERANCE)


# --- POST /api/score/ ----------------------------------------------------------------------------------------

BATCH = {
    "replies": REPLIES,
    "references": _references(),
    "metrics": ["bleu-4", "chrf"],
    "implementation": "sacrebleu",
}


def _researcher_client() -> APIClient:
    client = APIClient()
    token = Token.objects.create(user=ResearcherFactory.create())
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.mark.django_db
def test_the_api_scores_a_batch_with_sentences_corpus_and_signatures() -> None:
    response = _researcher_client().post("/api/score/", BATCH, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["lines"] == len(REPLIES)
    batch = MetricBatch.of(REPLIES, _references())
    assert [row["line"] for row in body["sentences"]] == [1, 2, 3, 4]
    bleu = sacrebleu_bleu_reference(4)(batch)
    assert_values_close([row["bleu-4"] for row in body["sentences"]], bleu, TOLERANCE)
    assert_values_close(
        [row["chrf"] for row in body["sentences"]], sacrebleu_chrf_reference(0)(batch), TOLERANCE
    )
    expected = sacrebleu_corpus_bleu_reference()(batch.contexts_of("system"))
    assert_values_close([body["corpus"]["bleu-4"]["value"]], [expected], TOLERANCE)
    assert body["signatures"]["bleu-4"] == metric_signature(
        "bleu-4",
        signature_parameters("bleu-4", language="en", references="multi", implementation="sacrebleu"),
    )
    assert body["implementations"] == {"bleu-4": "sacrebleu", "chrf": "sacrebleu"}


@pytest.mark.django_db
def test_a_session_counts_as_well() -> None:
    client = APIClient()
    client.force_login(ResearcherFactory.create())
    assert client.post("/api/score/", BATCH, format="json").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"metrics": ["bleu-4", "bleu-9"]}, "detail", "unknown metric 'bleu-9'"),
        (
            {"implementation": "nlg-eval", "metrics": ["chrf"]},
            "detail",
            "chrf has no nlg-eval implementation",
        ),
        ({"options": {"tok": "moses"}}, "detail", "option tok='moses' is not accepted by sacrebleu's bleu"),
        ({"references": [["a"]]}, "references", "1 lists for 4 replies: give one per reply"),
        ({"replies": []}, "replies", ""),
        ({"tokenizer": "13a"}, "tokenizer", ""),
    ],
)
def test_bad_input_is_a_400_saying_what_is_wrong(change: dict, field: str, expected: str) -> None:
    response = _researcher_client().post("/api/score/", {**BATCH, **change}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert field in body, body
    text = body[field] if isinstance(body[field], str) else " ".join(body[field])
    assert expected in text


@pytest.mark.django_db
def test_the_batch_is_bounded(settings) -> None:
    settings.DIALEVAL_SCORE_API_MAX_LINES = 3
    response = _researcher_client().post("/api/score/", BATCH, format="json")
    assert response.status_code == 400
    assert response.json() == {"replies": ["4 replies; at most 3 per request (score a study for more)"]}
    settings.DIALEVAL_SCORE_API_MAX_LINES = 4
    assert _researcher_client().post("/api/score/", BATCH, format="json").status_code == 200


@pytest.mark.django_db
def test_annotators_and_anonymous_users_are_refused() -> None:
    annotator = APIClient()
    annotator.force_authenticate(UserFactory.create())
    assert annotator.post("/api/score/", BATCH, format="json").status_code == 403
    assert APIClient().post("/api/score/", BATCH, format="json").status_code in (401, 403)
