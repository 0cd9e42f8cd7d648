"""Learned metrics in the app: train_metric registers a model, scoring runs resolve and record it, scores
carry its hash, blends are computed over the whole study from the stored raw components (Tao et al., 2018, eq. 4)."""

from __future__ import annotations

import json
import random
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.models import Study
from scoring.metrics.ruber.artifact import load_ruber
from scoring.metrics.ruber.blends import ruber_blends
from scoring.metrics.ruber.corpus import read_corpus, split_validation
from scoring.metrics.ruber.training import RuberArtifact, RuberConfig, train_ruber
from scoring.metrics.ruber.word2vec import Word2VecConfig
from scoring.models import MetricScore, RunStatus, ScoringRun, TrainedModel
from scoring.services import ScoringRequestError, scoring_run_cancel, scoring_run_create, scoring_run_execute
from scoring.trained_model_services import study_model_choose, trained_model_register
from tests.factories import (
    DialogContextFactory,
    ReferenceFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
)
from tests.waiting import TRAINING_FIXTURE_TIMEOUT, watched_training

# The module's model trains in a fixture, which may take past 300 s on a loaded machine: the training is watched
# for progress (tests/waiting.py), and pytest-timeout's limit counts each test's body only.
pytestmark = [pytest.mark.django_db, TRAINING_FIXTURE_TIMEOUT]

TOPICS = 5
FILLER = ["the", "a", "is", "it", "so", "and", "very", "then"]


def topic_text(generator: random.Random, prefix: str, topic: int) -> str:
    words = [f"{prefix}{topic}x{generator.randrange(4)}" for _ in range(4)] + generator.sample(FILLER, 2)
    generator.shuffle(words)
    return " ".join(words)


def write_corpus(path: Path, count: int = 300, seed: int = 3) -> Path:
    generator = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(count):
            topic = generator.randrange(TOPICS)
            pair = {"query": topic_text(generator, "q", topic), "reply": topic_text(generator, "r", topic)}
            handle.write(json.dumps(pair) + "\n")
    return path


def run_command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def model_dir(tmp_path: Path, settings) -> Path:
    settings.DIALEVAL_MODEL_DIR = tmp_path / "models"
    return settings.DIALEVAL_MODEL_DIR


TRAIN_ARGS = ("--format", "pairs-jsonl", "--epochs", "2", "--device", "cpu")


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> RuberArtifact:
    """One model for the module (training is the slow part), trained like train_metric does; each test
    registers its own copy of the folder. test_train_metric_* run the command itself."""
    root = tmp_path_factory.mktemp("trained-once")
    pairs = read_corpus(write_corpus(root / "pairs.jsonl"), corpus_format="pairs-jsonl")
    training, validation = split_validation(pairs, seed=0)
    config = RuberConfig(
        word2vec=Word2VecConfig(dimension=16, min_count=1), hidden_size=32, mlp_hidden=16, batch_size=16,
        learning_rate=3e-3, epochs=6, patience=3, seed=7, device="cpu", corpus_description="topic pairs",
    )  # fmt: skip
    with watched_training("RUBER") as on_progress:
        return train_ruber(
            training,
            validation,
            config=config,
            output_dir=root / "model",
            progress=False,
            on_progress=on_progress,
        )


@pytest.fixture
def trained(artifact: RuberArtifact, tmp_path: Path) -> TrainedModel:
    copy = tmp_path / "tiny-ruber"
    shutil.copytree(artifact.path, copy)
    return trained_model_register(
        name="tiny-ruber",
        kind="ruber",
        path=copy,
        content_hash=artifact.content_hash,
        language="en",
        corpus="topic pairs",
        config=artifact.config,
        curve=artifact.curve,
    )


def topic_study(*, with_unknown_reply: bool = False) -> Study:
    """Contexts whose query is of one topic; system "on" replies on topic, "off" on another topic."""
    generator = random.Random(11)
    study = StudyFactory.create(name="learned study")
    on, off = SystemFactory.create(study=study, name="on"), SystemFactory.create(study=study, name="off")
    for index in range(6):
        topic = index % TOPICS
        context = DialogContextFactory.create(
            study=study, position=index, turns=[{"speaker": "A", "text": topic_text(generator, "q", topic)}]
        )
        ReferenceFactory.create(context=context, text=topic_text(generator, "r", topic), origin="original")
        ResponseFactory.create(context=context, system=on, text=topic_text(generator, "r", topic))
        ResponseFactory.create(
            context=context, system=off, text=topic_text(generator, "r", (topic + 2) % TOPICS)
        )
    if with_unknown_reply:
        first = study.contexts.first()
        assert first is not None
        ResponseFactory.create(context=first, system=on, text="zzz yyy", sample_index=1)
    return study


def values(study: Study, name: str) -> dict[int, float]:
    return {
        score.response_id: score.value
        for score in MetricScore.objects.filter(response__context__study=study, signature__name=name)
    }


def test_train_metric_registers_a_hashed_artifact(model_dir: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "pairs.jsonl", count=120)
    output = run_command(
        "train_metric", "ruber", "--corpus", str(corpus), "--name", "cli-ruber", "--default", *TRAIN_ARGS
    )
    model = TrainedModel.objects.get(name="cli-ruber")
    path = Path(model.path)
    assert path.parent == (model_dir / "ruber").resolve()
    assert path.name == f"cli-ruber-{model.content_hash[:12]}"
    assert f"registered ruber model cli-ruber (the default): {path}" in output
    assert (path / "hash.txt").read_text().strip() == model.content_hash
    assert load_ruber(path).content_hash == model.content_hash
    assert model.config["metric"] == "ruber"
    assert model.curve
    assert model.is_default
    assert "pairs.jsonl (pairs-jsonl); validation: 5% held out" in model.corpus
    assert [p.name for p in (model_dir / "ruber").iterdir()] == [path.name]  # no scratch folder left


def test_learned_metrics_use_the_named_model_and_record_its_hash(trained: TrainedModel) -> None:
    study = topic_study(with_unknown_reply=True)
    run = scoring_run_create(
        study=study, metrics=["ruber-gmean", "vector-pool-unreferenced"], models=["tiny-ruber"], enqueue=False
    )
    # the blend's raw components are stored with it
    assert run.metrics == [
        "ruber-referenced",
        "ruber-unreferenced",
        "ruber-gmean",
        "vector-pool-unreferenced",
    ]
    assert run.trained_models["ruber"]["hash"] == trained.content_hash
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    # s_R has no value for the reply without a known word; nothing stored, and the notes say so
    assert (
        "ruber-referenced has no value for 1 response(s): the reply, or every one of its references, has no "
        "word with a vector" in run.notes
    )
    signature_texts = set(
        MetricScore.objects.filter(response__context__study=study).values_list("signature__text", flat=True)
    )
    assert len(signature_texts) == 4
    assert all(f"model:{trained.content_hash}" in text for text in signature_texts)

    referenced, unreferenced = values(study, "ruber-referenced"), values(study, "ruber-unreferenced")
    assert len(unreferenced) == 13
    assert len(referenced) == 12
    ids = sorted(unreferenced)
    expected = ruber_blends([referenced.get(i) for i in ids], [unreferenced[i] for i in ids])["gmean"]
    gmean = values(study, "ruber-gmean")
    assert [gmean.get(i) for i in ids] == pytest.approx(expected)  # normalised over the whole study
    assert min(gmean.values()) == 0.0  # eq. 4 maps the worst item to 0 (a batch-wise blend would not)

    # the trained model separates on-topic from off-topic replies
    systems = dict(
        MetricScore.objects.filter(signature__name="ruber-unreferenced").values_list(
            "response_id", "response__system__name"
        )
    )
    on = [v for i, v in unreferenced.items() if systems[i] == "on"]
    off = [v for i, v in unreferenced.items() if systems[i] == "off"]
    assert sum(on) / len(on) > sum(off) / len(off)


def test_a_study_without_a_model_gets_a_message_saying_how_to_train_one(model_dir: Path) -> None:
    study = topic_study()
    with pytest.raises(ScoringRequestError) as caught:
        scoring_run_create(study=study, metrics=["ruber-unreferenced"], enqueue=False)
    assert "need a trained ruber model" in str(caught.value)
    assert "manage.py train_metric ruber --corpus" in str(caught.value)
    assert not ScoringRun.objects.exists()
    # "all" leaves learned metrics out instead of failing
    run = scoring_run_create(study=study, metrics=["all"], enqueue=False)
    assert "bleu-2" in run.metrics
    assert "ruber-unreferenced" not in run.metrics


def test_study_choice_and_default_resolve_in_order(trained: TrainedModel, tmp_path: Path) -> None:
    copy = tmp_path / "other"
    shutil.copytree(trained.path, copy)
    default = trained_model_register(
        name="other-ruber", kind="ruber", path=copy, content_hash=trained.content_hash, language="en",
        corpus="", config={}, curve=[], make_default=True,
    )  # fmt: skip
    assert default.is_default
    study = topic_study()
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"], enqueue=False)
    assert run.trained_models["ruber"]["name"] == "other-ruber"
    scoring_run_cancel(run=run)  # else the next request (the same artifact hash) would return this run
    study_model_choose(study=study, trained_model=trained, kind="ruber")
    run = scoring_run_create(study=study, metrics=["ruber-unreferenced"], enqueue=False)
    assert run.trained_models["ruber"]["name"] == "tiny-ruber"
    assert "ruber-unreferenced" in scoring_run_create(study=study, metrics=["all"], enqueue=False).metrics


def test_a_changed_artifact_fails_the_run_clearly(trained: TrainedModel) -> None:
    study = topic_study()
    run = scoring_run_create(
        study=study, metrics=["ruber-unreferenced"], models=["tiny-ruber"], enqueue=False
    )
    (Path(trained.path) / "hash.txt").write_text("0" * 64 + "\n")
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.FAILED
    assert "has changed since the run was created" in run.error.splitlines()[0]
    assert not MetricScore.objects.exists()


@pytest.mark.parametrize(
    ("metrics", "models", "message"),
    [
        (["ruber-unreferenced"], ["nope"], "no trained model named 'nope'"),
        (["bleu-2"], ["tiny-ruber"], "tiny-ruber is a ruber model, but no requested metric uses one"),
    ],
)
def test_bad_model_requests_change_nothing(
    trained: TrainedModel, metrics: list[str], models: list[str], message: str
) -> None:
    with pytest.raises(ScoringRequestError, match=message):
        scoring_run_create(study=topic_study(), metrics=metrics, models=models, enqueue=False)
    assert not ScoringRun.objects.exists()


def test_score_study_model_option_and_list_models(trained: TrainedModel) -> None:
    topic_study()
    output = run_command(
        "score_study", "learned study", "--metrics", "ruber-unreferenced", "--model", "tiny-ruber", "--sync"
    )
    assert f"ruber model: tiny-ruber ({trained.content_hash[:12]})" in output
    assert "succeeded: 12 scores: 12 replies x 1 metric in " in output
    listing = run_command("list_models")
    assert listing.splitlines()[1].startswith(f"tiny-ruber\truber\t{trained.content_hash[:12]}\t-\t")


def test_score_study_counts_the_metrics_asked_for_and_a_blends_components_apart(
    trained: TrainedModel,
) -> None:
    """asking for 2 metrics said "x 3 metrics": the blend's stored component was counted."""
    topic_study()
    output = run_command(
        "score_study", "learned study", "--metrics", "ruber-unreferenced,ruber-gmean", "--model", "tiny-ruber",
        "--sync",
    )  # fmt: skip
    assert (
        "succeeded: 36 scores: 12 replies x 2 metrics + 12 replies x 1 blend component (ruber-referenced) in"
        in (output)
    )


@pytest.mark.parametrize(
    ("corpus_text", "message"),
    [
        ("", "empty corpus"),
        ('{"query": "hi", "reply": "hello"}\n', "only 1 query-reply pair"),
        ('{"query": "hi"}\n', "line 1: lacks the key 'reply'"),
    ],
)
def test_train_metric_refuses_a_bad_corpus(
    model_dir: Path, tmp_path: Path, corpus_text: str, message: str
) -> None:
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text(corpus_text, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        run_command(
            "train_metric", "ruber", "--corpus", str(corpus), "--format", "pairs-jsonl", "--name", "bad"
        )
    assert not TrainedModel.objects.exists()


def test_train_metric_refuses_non_utf8_and_a_taken_name(trained: TrainedModel, tmp_path: Path) -> None:
    corpus = tmp_path / "latin1.jsonl"
    corpus.write_bytes('{"query": "caf\xe9", "reply": "oui"}\n'.encode("latin-1"))
    with pytest.raises(CommandError, match="line 1: not UTF-8"):
        run_command(
            "train_metric", "ruber", "--corpus", str(corpus), "--format", "pairs-jsonl", "--name", "x"
        )
    good = write_corpus(tmp_path / "good.jsonl", count=20)
    with pytest.raises(CommandError, match="a trained model named 'tiny-ruber' exists already"):
        run_command(
            "train_metric", "ruber", "--corpus", str(good), "--format", "pairs-jsonl", "--name", "tiny-ruber"
        )
    assert TrainedModel.objects.count() == 1


def test_api_runs_name_their_models_without_server_paths(trained: TrainedModel) -> None:
    study = topic_study()
    owner = study.owner
    client = APIClient()
    client.force_authenticate(owner)
    created = client.post(
        f"/api/studies/{study.pk}/scoring-runs/",
        {"metrics": ["ruber-unreferenced"], "models": ["tiny-ruber"]},
        format="json",
    )
    assert created.status_code == 202, created.content
    assert created.json()["trained_models"] == {"ruber": {"name": "tiny-ruber", "hash": trained.content_hash}}
    assert trained.path not in created.content.decode()
    refused = client.post(
        f"/api/studies/{study.pk}/scoring-runs/",
        {"metrics": ["ruber-unreferenced"], "models": ["nope"]},
        format="json",
    )
    assert refused.status_code == 400
    assert "no trained model named 'nope'" in refused.json()["metrics"][0]
    listed = client.get("/api/trained-models/").json()
    assert [(row["name"], row["kind"], row["content_hash"]) for row in listed] == [
        ("tiny-ruber", "ruber", trained.content_hash)
    ]
    metrics = {row["name"]: row for row in client.get("/api/metrics/").json()}
    assert metrics["ruber-gmean"]["needs_model"] == "ruber"
    assert metrics["bleu-2"]["needs_model"] == ""


def test_the_study_page_chooses_the_studys_model(trained: TrainedModel, client) -> None:
    study = topic_study()
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/")
    assert b'id="study-models-form"' in page.content
    assert b"tiny-ruber" in page.content
    response = client.post(
        f"/scoring/studies/{study.pk}/models/", {"model_ruber": "tiny-ruber", "model_bert_ruber": ""}
    )
    assert response.status_code == 302
    assert study.model_choices.get().trained_model == trained
    # "all" now includes the learned RUBER metrics for this study
    run = scoring_run_create(study=study, metrics=["all"], enqueue=False)
    assert "ruber-gmean" in run.metrics
    # another researcher cannot change it
    other = ResearcherFactory.create()
    client.force_login(other)
    assert client.post(f"/scoring/studies/{study.pk}/models/", {"model_ruber": ""}).status_code == 404
    assert study.model_choices.count() == 1


def test_bert_ruber_cells_and_blends_through_a_run(model_dir: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "pairs.jsonl", count=120)
    run_command(
        "train_metric", "bert-ruber", "--corpus", str(corpus), "--name", "tiny-bert",
        "--cells", "bert-max-ce,word2vec-mean-ranking", *TRAIN_ARGS,
    )  # fmt: skip
    model = TrainedModel.objects.get(name="tiny-bert")
    assert model.kind == "bert-ruber"
    assert model.config["cells"] == ["word2vec-mean-ranking", "bert-max-ce"]
    study = topic_study()
    run = scoring_run_create(
        study=study,
        metrics=["bert-ruber-gmean", "bert-ruber-unreferenced:word2vec-mean-ranking"],
        models=["tiny-bert"],
        enqueue=False,
    )
    assert run.metrics[:2] == ["bert-ruber-referenced", "bert-ruber-unreferenced"]
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    for name in (
        "bert-ruber-unreferenced",
        "bert-ruber-unreferenced:word2vec-mean-ranking",
        "bert-ruber-gmean",
    ):
        scores = values(study, name)
        assert len(scores) == 12
        assert all(0.0 <= value <= 1.0 for value in scores.values())
    signature = MetricScore.objects.filter(signature__name="bert-ruber-unreferenced").first()
    assert signature is not None
    assert f"model:{model.content_hash}" in signature.signature.text
    assert "cell:bert-max-ce" in signature.signature.text
    # a cell the model lacks is refused when the run is created, naming the cells it has
    with pytest.raises(
        ScoringRequestError, match=r"not trained with \(its cells: word2vec-mean-ranking, bert-max-ce\)"
    ):
        scoring_run_create(
            study=study, metrics=["bert-ruber-unreferenced:bert-rnn-ce"], models=["tiny-bert"], enqueue=False
        )
