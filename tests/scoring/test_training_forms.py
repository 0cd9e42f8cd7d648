"""The study page's scoring forms keep the researcher's choices after an error: the run form, the
model choice form and the new training form; the training form starts a job and opens its page; the job
page and the trained models page show what they should, escaped; CSRF stays on."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from scoring.models import ScoringRun, StudyModelChoice, TrainedModel, TrainingJob, TrainingStatus
from tests.factories import ResearcherFactory
from tests.scoring.training_builders import topic_study, training_places, write_pairs

pytestmark = pytest.mark.django_db


class FormState(HTMLParser):
    """What a browser would post back from a page's form, by form id: ticked boxes, chosen radios and
    options, typed values."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.select: str | None = None
        self.values: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form":
            self.inside = found.get("id") == self.form_id
        if not self.inside:
            return
        name = found.get("name") or ""
        if tag == "input" and found.get("type") in ("checkbox", "radio"):
            if "checked" in found:
                self.values.setdefault(name, []).append(found.get("value") or "on")
        elif tag == "input" and found.get("type") not in ("hidden", "file", "submit"):
            if found.get("value") is not None:
                self.values.setdefault(name, []).append(found["value"] or "")
        elif tag == "select":
            self.select = name
        elif tag == "option" and self.select and "selected" in found:
            self.values.setdefault(self.select, []).append(found.get("value") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        if tag == "select":
            self.select = None


def form_state(html: str, form_id: str) -> dict[str, list[str]]:
    parser = FormState(form_id)
    parser.feed(html)
    return parser.values


@pytest.fixture
def places(tmp_path: Path, settings):
    return training_places(tmp_path, settings)


@pytest.fixture
def logged_in(researcher) -> Client:
    client = Client()
    client.force_login(researcher)
    return client


@pytest.fixture
def study(researcher):
    return topic_study(owner=researcher)


def study_page(client: Client, study) -> str:
    response = client.get(f"/studies/{study.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_run_form_keeps_the_choices_after_a_refused_request(logged_in: Client, study) -> None:
    posted = {
        "metrics": ["bleu-1", "ruber-unreferenced"],
        "references": "single",
        "tokenizer": "none",
        "recompute": "on",
    }
    response = logged_in.post(f"/scoring/studies/{study.pk}/runs/", posted)
    assert response.status_code == 302
    assert not ScoringRun.objects.exists()
    page = study_page(logged_in, study)
    assert "need a trained ruber model" in page  # the message, and the error in the form
    state = form_state(page, "scoring-form")
    assert state["metrics"] == ["bleu-1", "ruber-unreferenced"]
    assert state["references"] == ["single"]
    assert state["tokenizer"] == ["none"]
    assert state["recompute"] == ["on"]
    # once shown, the page is the plain form again
    assert form_state(study_page(logged_in, study), "scoring-form")["references"] == ["multi"]


def test_the_run_form_keeps_the_choices_after_an_invalid_post(logged_in: Client, study) -> None:
    posted = {"metrics": ["bleu-2"], "references": "single", "model_ruber": "no-such-model"}
    logged_in.post(f"/scoring/studies/{study.pk}/runs/", posted)
    state = form_state(study_page(logged_in, study), "scoring-form")
    assert state["metrics"] == ["bleu-2"]
    assert state["references"] == ["single"]


def test_the_model_choice_form_keeps_the_choices_after_an_error(logged_in: Client, study) -> None:
    TrainedModel.objects.create(name="en-ruber", kind="ruber", path="/x", content_hash="1" * 64)
    posted = {"model_ruber": "en-ruber", "model_bert_ruber": "not-a-model"}
    logged_in.post(f"/scoring/studies/{study.pk}/models/", posted)
    assert not StudyModelChoice.objects.exists()  # all or nothing
    page = study_page(logged_in, study)
    assert '<details id="study-models" open>' in page
    assert form_state(page, "study-models-form")["model_ruber"] == ["en-ruber"]


def test_the_training_form_keeps_the_choices_and_shows_the_error_beside_the_field(
    logged_in: Client, study, places
) -> None:
    corpus = write_pairs(places.corpora / "pairs.jsonl")
    TrainedModel.objects.create(name="taken", kind="ruber", path="/x", content_hash="1" * 64)
    posted = {
        "kind": "bert-ruber", "name": "taken", "corpus": str(corpus), "corpus_format": "generic",
        "epochs": "3", "max_pairs": "200", "cells": ["word2vec-max-ce", "word2vec-rnn-ranking"],
        "variants": ["maude"], "make_default": "on",
    }  # fmt: skip
    response = logged_in.post(f"/scoring/studies/{study.pk}/training-jobs/", posted)
    assert response.status_code == 302
    assert response["Location"].endswith("#training")
    assert not TrainingJob.objects.exists()
    page = study_page(logged_in, study)
    assert "a trained model named &#x27;taken&#x27; exists already" in page
    state = form_state(page, "training-form")
    assert state["kind"] == ["bert-ruber"]
    assert state["name"] == ["taken"]
    assert state["corpus"] == [str(corpus)]
    assert state["corpus_format"] == ["generic"]
    assert state["epochs"] == ["3"]
    assert state["max_pairs"] == ["200"]
    assert sorted(state["cells"]) == ["word2vec-max-ce", "word2vec-rnn-ranking"]
    assert state["make_default"] == ["on"]


def test_the_training_form_offers_the_known_corpora_with_the_fast_cells_ticked(
    logged_in: Client, study, places
) -> None:
    (places.corpora / "dailydialog" / "train").mkdir(parents=True)
    (places.corpora / "dailydialog" / "train" / "dialogues_train.txt").write_text("a __eou__ b __eou__\n")
    page = study_page(logged_in, study)
    state = form_state(page, "training-form")
    assert state["corpus"] == [str(places.corpora / "dailydialog")]
    assert sorted(state["cells"]) == sorted([
        "word2vec-max-ranking", "word2vec-max-ce", "word2vec-mean-ranking", "word2vec-mean-ce",
        "bert-max-ranking", "bert-max-ce", "bert-mean-ranking", "bert-mean-ce",
    ])  # fmt: skip
    assert state["corpus_format"] == ["dailydialog"]


def test_starting_a_training_opens_its_page_with_a_cancel_button(logged_in: Client, study, places) -> None:
    corpus = write_pairs(places.corpora / "pairs.jsonl")
    posted = {
        "kind": "ruber",
        "name": "page-ruber",
        "corpus": str(corpus),
        "corpus_format": "generic",
        "epochs": "2",
    }
    response = logged_in.post(f"/scoring/studies/{study.pk}/training-jobs/", posted, follow=True)
    job = TrainingJob.objects.get()
    assert job.study == study
    assert job.parameters == {"epochs": 2, "language": "en"}
    assert response.redirect_chain[-1][0] == f"/scoring/training-jobs/{job.pk}/"
    page = response.content.decode()
    assert 'id="job-cancel"' in page
    assert "vendor/plotly/plotly.min.js" in page
    assert "scoring/training.js" in page
    assert 'id="training-curve"' in page
    # the study page lists the job with its progress
    assert f'id="training-job-{job.pk}"' in study_page(logged_in, study)
    # cancel, then the page has no cancel button
    logged_in.post(f"/scoring/training-jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.status == TrainingStatus.CANCELLED
    assert 'id="job-cancel"' not in logged_in.get(f"/scoring/training-jobs/{job.pk}/").content.decode()


def test_the_job_page_escapes_text_and_another_researcher_gets_a_404(logged_in: Client, study) -> None:
    job = TrainingJob.objects.create(
        name="x", kind="ruber", corpus="<script>alert(1)</script>", corpus_path="/c", study=study,
        status=TrainingStatus.FAILED, error="<b>bad</b>",
    )  # fmt: skip
    page = logged_in.get(f"/scoring/training-jobs/{job.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;bad&lt;/b&gt;" in page
    other = Client()
    other.force_login(ResearcherFactory.create(username="bob"))
    assert other.get(f"/scoring/training-jobs/{job.pk}/").status_code == 404
    assert other.post(f"/scoring/training-jobs/{job.pk}/cancel/").status_code == 404


def test_the_cancel_and_start_posts_need_the_csrf_token(researcher, study, places) -> None:
    job = TrainingJob.objects.create(name="x", kind="ruber", corpus="c", corpus_path="/c", study=study)
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(f"/scoring/training-jobs/{job.pk}/cancel/").status_code == 403
    assert client.post(f"/scoring/studies/{study.pk}/training-jobs/", {"kind": "ruber"}).status_code == 403
    job.refresh_from_db()
    assert job.status == TrainingStatus.PENDING


def test_the_trained_models_page_lists_the_figures(logged_in: Client) -> None:
    TrainedModel.objects.create(
        name="dd-bert", kind="bert-ruber", path="/nowhere", content_hash="9" * 64, corpus="dailydialog",
        pairs=76052, epochs=4, validation_accuracy=0.8612, size_bytes=12_345_678,
        config={"cells": ["bert-max-ce", "word2vec-max-ce"]},
    )  # fmt: skip
    page = logged_in.get("/scoring/models/").content.decode()
    row = page[page.index('id="model-dd-bert"') :].split("</tr>")[0]
    for text in (
        "dailydialog",
        "76,052 pairs",
        ">4<",
        "bert-max-ce, word2vec-max-ce",
        "0.861",
        "12.3 MB",
        "999999999999",
    ):
        assert text in row, text
