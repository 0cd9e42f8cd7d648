"""Every page a researcher or a volunteer can open fits the window, in headless Chromium at
1280x800 and at 1440x900:

* the document does not scroll sideways (``scrollWidth`` of the document within the window's width);
* no element's text is clipped by its box: an element that hides its overflow (``hidden``/``clip``) and
  holds more than it shows, an ellipsis that is engaged, a select whose chosen option is cut short;
* no template source (``{#``, ``{%``, ``{{``) in the rendered text (quoted code, ``<code>``/``<pre>``, aside);
  every ``<details>`` is opened first: what a click shows is on the page too;
* no console error, no uncaught exception, no request that failed or was answered with 400 or more (the
  favicon among them);
* every plotly figure on the page (read from Plotly's rendered SVG: ``.main-svg``, the plot area's
  ``.nsewdrag``, ``.legend``, the axis titles, ``.xtick``/``.ytick`` labels) keeps its title, legend, axis
  titles, tick labels and notes inside the figure's box, and its legend, axis titles and tick labels off the
  plot area; the plot area is not squashed (MIN_PLOT); the legend neither scrolls, nor overprints its own
  entries, nor covers a title or a label; an axis names each tick once; a label written by a point is under
  neither another label nor another point. The report's figures are checked again as they are exported (PNG,
  SVG): ``figure_for_export``'s figure drawn in the page with Plotly.newPlot at the export width, which is
  what kaleido renders.

The pages come from the URL conf (config/urls.py and each app's urls.py), one test case per page. A report
is checked tab by tab (a tab is what a person sees): loaded once per window size, then every tab clicked in
turn, as a person reads it; a few routes open a tab by its link (``#tab-<name>``) instead. Left out, as they are not pages: the JSON, CSV, ZIP, LaTeX,
PNG and SVG downloads and endpoints (``contexts.<fmt>``, ``import/jobs/<id>/status.json``,
``export/<what>.<fmt>``, ``status.json``, ``figures.json``, ``figures/<name>.png|svg``,
``correlations.csv|json``, ``scores.csv``, ``report.json``, ``tables.tex``, ``tables/<section>.csv``,
``bundle.zip``), the REST API under ``/api/`` and its schema (``/api/schema/``), the health checks
(``/health/``, ``/health/workers/``); the POST-only actions (log out, settings, checks, invite rotation,
inclusion, unblocking, training items, requalifying, adjudication, exclusion, undoing an adjudication,
scoring runs, model choice, cancelling, training jobs, metric score uploads and deletions, word vector
deletion, prompt template deletion, skipping an item, notes, report compute and retry); the GETs that only
redirect to a page checked here (``/`` for a researcher, ``/studies/<id>/import/``,
``/work/<id>/<task>/back/``); and Django's admin (``/admin/``), which only staff accounts open, neither
researchers nor volunteers. A researcher's own prompt template's pages are the shipped ones' (its form is
the copy's).

The studies: the project's own demo sample (annotation/demo_sample.py) scored with fast metrics; a study of
20 metrics with long names (signatures made directly, as tests/correlation/benchmark/builders.py does) and
long system names; a study with every volunteer task (rating, writing, diversity, pairs); one with a
qualification round; one of conversations. They are built once for the module (a page reads them, none
changes them but the hand-out of a volunteer's next item), with one live server and one login per role.

``LAYOUT_SCREENSHOTS=<folder>`` also writes a full-page screenshot of every page at 1440x900 there.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.demo_sample import demo_sample_jsonl
from annotation.importers import ImportFile
from annotation.models import (
    Annotator,
    DiversityJudgment,
    ImportJob,
    PairwiseJudgment,
    Question,
    Rating,
    Response,
    Study,
    StudyImport,
    System,
    TrainingItem,
)
from annotation.services.annotators import annotator_join
from annotation.services.assignment import next_assignment
from annotation.services.imports import study_import
from annotation.services.joining import annotator_consent
from annotation.services.qualification import training_answer_submit
from annotation.services.studies import study_create
from annotation.services.submissions import rating_submit
from annotation.services.work_items import work_items_sync
from correlation.report.cache import report_current
from scoring.models import MetricScore, MetricSignature, SystemMetricScore, TrainingJob, TrainingStatus
from scoring.services import scoring_run_create, scoring_run_execute
from stats.figures.report import EXPORT_WIDTH, figure_for_export
from stats.report.types import ReportOptions
from tests.annotation.joining_builders import training_study
from tests.browser_fixtures import log_in
from tests.correlation.builders import bump_data_version
from tests.correlation.conversations.conversation_builders import add_conversation, chat
from tests.factories import (
    DialogContextFactory,
    QuestionFactory,
    ResearcherFactory,
    ResponseFactory,
    StudyFactory,
    SystemFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser]

VIEWPORTS = ({"width": 1280, "height": 800}, {"width": 1440, "height": 900})
# Reply-level baselines, and system-level ones (the System level tab's "System-level metrics" table).
DEMO_METRICS = [
    "bleu-1",
    "bleu-2",
    "bleu-4",
    "rouge-l",
    "meteor",
    "corpus-bleu",
    "corpus-chrf",
    "self-bleu-4",
]
ANONYMOUS, RESEARCHER, VOLUNTEER = "anonymous", "researcher", "volunteer"
SCREENSHOTS = os.environ.get("LAYOUT_SCREENSHOTS", "")

# 20 metrics whose names are as long as real ones get (model names, layers, variants), some sharing a name
# (the display name then carries the implementation or the references).
LONG_METRICS = [
    "bertscore-deberta-xlarge-mnli-f1|impl:bert-score|layer:40|refs:multi|version:0.3.13",
    "bertscore-roberta-large-rescaled-f1|impl:bert-score|layer:17|refs:multi|version:0.3.13",
    "bleurt-20-d12-checkpoint|impl:bleurt|refs:single|version:0.0.2",
    "bleu-4|impl:nlg-eval|refs:multi|version:2.3",
    "bleu-4|impl:sacrebleu|refs:multi|tok:13a|version:2.4.0",
    "bleu-4|impl:nltk|refs:single|smoothing:method1|version:3.8.1",
    "meteor-wordnet-synonyms-paraphrase|impl:nltk|refs:multi|version:3.8.1",
    "rouge-l-summary-level-f-measure|impl:rouge-score|refs:multi|version:0.1.2",
    "embedding-average-glove-840b-300d|impl:own|vectors:glove.840B.300d|version:1",
    "embedding-greedy-matching-word2vec|impl:own|vectors:word2vec-google-news|version:1",
    "embedding-vector-extrema-fasttext-crawl|impl:own|vectors:crawl-300d-2M|version:1",
    "ruber-unreferenced-bigru-dailydialog|impl:own|model:3f2a91c0d4|version:1",
    "ruber-hybrid-arithmetic-mean-dailydialog|impl:own|model:3f2a91c0d4|version:1",
    "usr-masked-language-model-roberta|impl:usr|version:1.0",
    "usr-retrieval-dialog-retrieval-roberta|impl:usr|version:1.0",
    "grade-graph-enhanced-coherence-convai2|impl:grade|version:1.0",
    "dynaeval-dialog-level-structured-graph|impl:dynaeval|version:1.0",
    "distinct-2-per-reply-bigram-ratio|impl:own|version:1",
    "self-bleu-4-against-other-replies|impl:own|version:1",
    "chrf-plus-plus-character-ngram-fscore|impl:sacrebleu|refs:multi|version:2.4.0",
]
LONG_SYSTEMS = [
    "hierarchical-recurrent-encoder-decoder-finetuned",
    "sequence-to-sequence-attention-baseline-2017",
    "retrieval-dual-encoder-dailydialog-train",
]
SYSTEM_LEVEL = [
    "corpus-bleu-4|impl:sacrebleu|refs:multi|smooth:exp|tok:13a|version:2.4.0",
    "self-bleu-4-over-all-replies-of-a-system|impl:own|version:1",
]


@dataclass(frozen=True)
class Route:
    """One page: who opens it, and its address (``{name}`` fields filled from the module's data)."""

    name: str
    role: str
    path: str


ROUTES = [
    # config/urls.py
    Route("login", ANONYMOUS, "/accounts/login/"),
    Route("docs-index", RESEARCHER, "/docs/"),
    *(
        Route(f"doc-{path.stem}", RESEARCHER, f"/docs/{path.stem}/")
        for path in sorted((Path(__file__).resolve().parents[2] / "docs").glob("*.md"))
    ),
    Route("api-docs", RESEARCHER, "/api/docs/"),
    Route("api-redoc", RESEARCHER, "/api/redoc/"),
    # annotation/urls.py (the researcher's)
    Route("study-list", RESEARCHER, "/studies/"),
    Route("study-new", RESEARCHER, "/studies/new/"),
    Route("study-detail-demo", RESEARCHER, "/studies/{demo}/"),
    Route("study-detail-long-names", RESEARCHER, "/studies/{wide}/"),
    Route("study-detail-tasks", RESEARCHER, "/studies/{tasks}/"),
    Route("study-import-job", RESEARCHER, "/studies/{demo}/import/jobs/{import_job}/"),
    Route("study-import-undo", RESEARCHER, "/studies/{demo}/imports/{demo_import}/undo/"),
    Route("study-system-delete", RESEARCHER, "/studies/{demo}/systems/{demo_system}/delete/"),
    Route("study-annotation-demo", RESEARCHER, "/studies/{demo}/annotation/"),
    Route("study-annotation-tasks", RESEARCHER, "/studies/{tasks}/annotation/"),
    Route("study-items", RESEARCHER, "/studies/{demo}/items/"),
    Route("study-item", RESEARCHER, "/studies/{demo}/items/{demo_reply}/"),
    Route("study-item-long-names", RESEARCHER, "/studies/{wide}/items/{wide_reply}/"),
    # scoring/urls.py
    Route("training-job", RESEARCHER, "/scoring/training-jobs/{training_job}/"),
    Route("trained-models", RESEARCHER, "/scoring/models/"),
    Route("word-vectors", RESEARCHER, "/scoring/word-vectors/"),
    Route("judge-templates", RESEARCHER, "/scoring/judge-templates/"),
    Route("judge-template", RESEARCHER, "/scoring/judge-templates/g-eval/"),
    Route("judge-template-copy", RESEARCHER, "/scoring/judge-templates/new/?copy=llm-eval"),
    # correlation/urls.py
    Route("benchmark", RESEARCHER, "/reports/benchmark/"),
    Route(
        "benchmark-table", RESEARCHER, "/reports/benchmark/?studies={demo}&studies={wide}&statistic=pearson"
    ),
    # A report's tabs are walked by test_every_tab_of_the_report_fits_the_window; these open one by its link.
    Route("report-demo-system", RESEARCHER, "/reports/{demo}/#tab-system"),
    Route("report-demo-grouped-by-context", RESEARCHER, "/reports/{demo}/?grouping=context#tab-metrics"),
    Route("report-wide-grouped-by-context", RESEARCHER, "/reports/{wide}/?grouping=context#tab-metrics"),
    Route("report-tasks-diversity", RESEARCHER, "/reports/{tasks}/#tab-diversity"),
    Route("report-wide-pairwise", RESEARCHER, "/reports/{wide}/#tab-pairwise"),
    Route("conversations", RESEARCHER, "/reports/{talk}/conversations/"),
    Route("conversation", RESEARCHER, "/reports/{talk}/conversations/{conversation}/"),
    Route(
        "conversation-every-metric",
        RESEARCHER,
        "/reports/{talk}/conversations/{conversation}/?"
        + "&".join(
            f"metric={name}" for name in dict.fromkeys(text.split("|")[0] for text in LONG_METRICS[:6])
        ),
    ),
    # annotation/work/urls.py (the volunteer's) and the home page
    Route("join-signup", ANONYMOUS, "/work/join/{tasks_token}/"),
    Route("join-member", VOLUNTEER, "/work/join/{tasks_token}/"),
    Route("volunteer-home", VOLUNTEER, "/"),
    Route("work-study", VOLUNTEER, "/work/{tasks}/"),
    Route("work-consent", VOLUNTEER, "/work/{tasks}/consent/"),
    Route("work-training", VOLUNTEER, "/work/{qualifying}/training/"),
    Route("work-training-feedback", VOLUNTEER, "/work/{qualifying}/training/{answered_training}/"),
    Route("work-rate", VOLUNTEER, "/work/{tasks}/rate/"),
    Route("work-rate-answered", VOLUNTEER, "/work/{tasks}/rate/{rated}/"),
    Route("work-write", VOLUNTEER, "/work/{tasks}/write/"),
    Route("work-diversity", VOLUNTEER, "/work/{tasks}/diversity/"),
    Route("work-pair", VOLUNTEER, "/work/{tasks}/pair/"),
    Route("work-no-work", VOLUNTEER, "/work/{demo}/rate/"),
    Route("work-history", VOLUNTEER, "/work/{tasks}/history/"),
]


# --- the data ---------------------------------------------------------------------------------------------


def _demo_study(owner: Any) -> tuple[Study, StudyImport]:
    study = study_create(owner=owner, name="Demo: sample dialogs", scale="0-2")
    record = study_import(
        study=study,
        format="jsonl",
        files=[ImportFile(name="demo-sample.jsonl", data=demo_sample_jsonl())],
        user=owner,
    )
    run = scoring_run_create(study=study, metrics=DEMO_METRICS, references="multi", enqueue=False)
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    return study, record


def _signature(text: str) -> MetricSignature:
    """The signature of ``text`` ("name|key:value|..."), its parameters those of the text."""
    name, *parts = text.split("|")
    parameters = dict(part.split(":", 1) for part in parts)
    version = parameters.pop("version", "test")
    return MetricSignature.objects.get_or_create(
        text=text, defaults={"name": name, "parameters": parameters, "version": version}
    )[0]


def _wide_study(owner: Any) -> Study:
    """12 contexts x 3 systems rated by three raters (1-5), scored by the 20 long-named metrics."""
    rng = np.random.default_rng(34)
    study = StudyFactory.create(
        owner=owner,
        name="Twenty metrics with long names, three systems with long names",
        kappa_threshold=None,
    )
    question = QuestionFactory.create(
        study=study, name="overall-quality-of-the-reply", scale_min=1, scale_max=5
    )
    raters = [Annotator.objects.create(study=study, pseudonym=f"imported-rater-number-{k}") for k in range(3)]
    systems = [System.objects.create(study=study, name=name) for name in LONG_SYSTEMS]
    signatures = [_signature(text) for text in LONG_METRICS]
    index = 0
    for number in range(12):
        context = DialogContextFactory.create(study=study, external_id=f"wide-{number}")
        for level, system in enumerate(systems):
            quality = float(rng.normal() + level)
            response = ResponseFactory.create(
                context=context, system=system, text=f"reply {index}: " + "a fairly long reply " * 4
            )
            for rater in raters:
                rating = int(np.clip(round(3 + quality + rng.normal(scale=0.7)), 1, 5))
                Rating.objects.create(annotator=rater, response=response, question=question, value=rating)
            for position, signature in enumerate(signatures):
                score = quality * (position % 5) / 4 + rng.normal(scale=0.5 + position / 10)
                MetricScore.objects.create(response=response, signature=signature, value=float(score))
            index += 1
        # Every pair of the context's replies compared by two of the raters, the better system winning.
        replies = list(Response.objects.filter(context=context).order_by("system_id"))
        for first, second in itertools.combinations(replies, 2):
            for rater in raters[:2]:
                PairwiseJudgment.objects.create(
                    annotator=rater, response_a=first, response_b=second, choice="b", shown_first=first
                )
    for text in SYSTEM_LEVEL:
        signature = _signature(text)
        for level, system in enumerate(systems):
            SystemMetricScore.objects.create(system=system, signature=signature, value=0.1 * level, items=12)
    bump_data_version(study)
    return study


def _tasks_study(owner: Any) -> Study:
    """Every volunteer task on: rating, writing references, judging diversity (three samples per system),
    comparing pairs."""
    study = study_create(
        owner=owner,
        name="Every volunteer task, with a rather long study name to see it wrap",
        ratings_per_item=2,
    )
    study.check_interval = 0
    study.references_wanted = 2
    study.diversity_enabled = True
    study.pairwise_enabled = True
    study.description = "Rate how well each reply fits the conversation, then write and compare replies."
    study.save()
    bots = [SystemFactory.create(study=study, name=name) for name in ("first-bot", "second-bot")]
    raters = [Annotator.objects.create(study=study, pseudonym=f"diversity-rater-{k}") for k in range(2)]
    for index in range(3):
        context = DialogContextFactory.create(
            study=study,
            turns=[
                {"speaker": "Ann", "text": f"what did you do on day {index} of the holidays ?"},
                {"speaker": "Bob", "text": "i went to the lake with my sister and we swam all afternoon ."},
            ],
        )
        for number, bot in enumerate(bots):
            for sample in range(3):
                ResponseFactory.create(
                    context=context,
                    system=bot,
                    sample_index=sample,
                    text=f"reply {number}.{sample}: that sounds lovely , was the water cold on day {index} ?",
                )
            # Judged for diversity by two imported raters (the report's Diversity tab).
            for rater in raters:
                judgment = DiversityJudgment.objects.create(
                    annotator=rater, context=context, system=bot, meanings=1 + (index + number) % 3
                )
                judgment.appropriate.set(Response.objects.filter(context=context, system=bot)[:2])
    work_items_sync(study=study)
    return study


def _conversation_study(owner: Any) -> tuple[Study, str]:
    study = StudyFactory.create(owner=owner, name="Conversations")
    signatures = [_signature(text) for text in LONG_METRICS[:6]]
    turns = chat(
        "hi , how was your weekend ?",
        "it was great , i went hiking in the mountains with friends .",
        "that sounds fun , where did you go ?",
        "we walked up to the lake above the village and had lunch there .",
        "was it cold up there ?",
        "a little , but the sun came out in the afternoon .",
    )
    for conversation, system in (
        ("weekend-chat-001", LONG_SYSTEMS[0]),
        ("weekend-chat-002", LONG_SYSTEMS[1]),
    ):
        add_conversation(
            study=study,
            conversation=conversation,
            system=system,
            turns=turns,
            scores={
                signature: [0.2 + 0.1 * k, 0.5, 0.4 + 0.05 * k] for k, signature in enumerate(signatures)
            },
        )
    bump_data_version(study)
    return study, "weekend-chat-001"


def _build() -> dict[str, Any]:
    researcher = ResearcherFactory.create(username="layout-researcher")
    volunteer_user = UserFactory.create(username="layout-volunteer")
    demo, demo_import = _demo_study(researcher)
    wide = _wide_study(researcher)
    tasks = _tasks_study(researcher)
    talk, conversation = _conversation_study(researcher)
    qualifying = training_study(items=2)
    for study in (demo, wide):
        for options in (ReportOptions(), ReportOptions(grouping="context")):
            report_current(study=study, options=options)

    members = {
        study.pk: annotator_consent(annotator=annotator_join(token=study.invite_token, user=volunteer_user))
        for study in (demo, tasks, qualifying)
    }
    # One answered rating (the history page lists it; the item can be opened again to change it).
    rated = next_assignment(annotator=members[tasks.pk]).assignment
    question = Question.objects.get(study=tasks)
    rating_submit(
        annotator=members[tasks.pk], assignment_id=rated.pk, values={question.name: "1"}, seconds=9.0
    )
    first_item = TrainingItem.objects.filter(study=qualifying).order_by("position", "id").first()
    assert first_item is not None
    training_answer_submit(annotator=members[qualifying.pk], training_item_id=first_item.pk, value=1)
    report_current(study=tasks, options=ReportOptions())

    job = ImportJob.objects.create(
        study=demo,
        format="jsonl",
        filenames=["demo-sample.jsonl"],
        folder="layout-test",
        total_bytes=len(demo_sample_jsonl()),
        status="succeeded",
        result=demo_import,
        created_by=researcher,
        finished_at=timezone.now(),
    )
    training_job = TrainingJob.objects.create(
        name="ruber on the demo sample",
        kind="ruber",
        corpus="the demo sample's replies",
        corpus_path="/data/demo",
        study=demo,
        status=TrainingStatus.FAILED,
        error="the corpus holds 36 replies; training needs at least 400 context-reply pairs",
    )
    demo_reply = Response.objects.filter(context__study=demo).order_by("id").first()
    wide_reply = Response.objects.filter(context__study=wide).order_by("id").first()
    assert demo_reply is not None
    assert wide_reply is not None
    return {
        "users": {RESEARCHER: researcher, VOLUNTEER: volunteer_user},
        "ids": {
            "demo": demo.pk,
            "wide": wide.pk,
            "tasks": tasks.pk,
            "talk": talk.pk,
            "qualifying": qualifying.pk,
            "conversation": conversation,
            "tasks_token": tasks.invite_token,
            "import_job": job.pk,
            "demo_import": demo_import.pk,
            "demo_system": System.objects.filter(study=demo).order_by("id").first().pk,  # type: ignore[union-attr]
            "demo_reply": demo_reply.pk,
            "wide_reply": wide_reply.pk,
            "training_job": training_job.pk,
            "rated": rated.pk,
            "answered_training": first_item.pk,
        },
    }


@pytest.fixture
def db() -> None:
    """pytest-django's ``db``, less its transaction: a test that asks for ``db`` has the test database set up,
    and these tests read the module's data (``site``), committed once, through a live server that writes too
    (a volunteer's next item is handed out as the page opens). The transaction pytest-django wraps a test in
    would hold SQLite's write lock (BEGIN IMMEDIATE) for the whole test and lock the server out; its
    ``transactional_db`` (and ``live_server``) would flush the data after every test."""


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker, chromium_browser) -> Iterator[dict[str, Any]]:
    """The module's data, a live server of its own and a logged-in browser context per role.

    The data is built once and the database flushed at the end (as a transactional test does after
    itself): pytest-django's ``live_server`` would flush it after every test case."""
    from pytest_django.live_server_helper import LiveServer

    server: LiveServer | None = None
    contexts: dict[str, Any] = {}
    with django_db_blocker.unblock():
        try:
            data = _build()
            server = LiveServer("localhost")  # the settings' ALLOWED_HOSTS hold localhost
            for role in (ANONYMOUS, RESEARCHER, VOLUNTEER):
                context = chromium_browser.new_context(viewport=VIEWPORTS[0])
                if role != ANONYMOUS:
                    login_page = context.new_page()
                    log_in(login_page, server, data["users"][role])
                    login_page.close()
                contexts[role] = context
            yield {**data, "url": server.url, "contexts": contexts}
        finally:
            for context in contexts.values():
                context.close()
            if server is not None:
                server.stop()
            call_command("flush", interactive=False, verbosity=0)


# --- the checks in the page -------------------------------------------------------------------------------

PAGE_PROBLEMS = r"""() => {
  const problems = [];
  const root = document.documentElement;
  const describe = (el) => {
    const id = el.id ? "#" + el.id : "";
    const classes = typeof el.className === "string" && el.className.trim()
      ? "." + el.className.trim().split(/\s+/).join(".") : "";
    const text = (el.innerText || el.value || "").trim().replace(/\s+/g, " ").slice(0, 60);
    return `<${el.tagName.toLowerCase()}${id}${classes}> "${text}"`;
  };
  if (root.scrollWidth > root.clientWidth) {
    // The widest things that stick out: the elements whose right edge passes the window.
    const culprits = [...document.body.querySelectorAll("*")]
      .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1)
      .filter((el) => !el.parentElement || el.parentElement.getBoundingClientRect().right <= root.clientWidth + 1)
      .slice(0, 3).map((el) => `${describe(el)} ends at ${Math.round(el.getBoundingClientRect().right)} px`);
    problems.push(`the page scrolls sideways: ${root.scrollWidth} px wide in a ${root.clientWidth} px window (${culprits.join("; ")})`);
  }
  const canvas = document.createElement("canvas").getContext("2d");
  // Every element but figures (checked on their own below) and what never shows.
  const elements = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT, (el) =>
    el.matches("svg, .js-plotly-plot, script, style, template") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT);
  for (let el = elements.nextNode(); el; el = elements.nextNode()) {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility !== "visible") continue;
    const rect = el.getBoundingClientRect();
    if (rect.width < 2 || rect.height < 2) continue;  // nothing to see (or text for screen readers only)
    if (!el.checkVisibility()) continue;  // inside a closed <details>, a hidden tab...
    const text = el.tagName === "SELECT"
      ? (el.selectedOptions[0] ? el.selectedOptions[0].text : "")
      : (el.innerText || "").trim();
    if (!text) continue;
    const clipsX = style.overflowX === "hidden" || style.overflowX === "clip";
    const clipsY = style.overflowY === "hidden" || style.overflowY === "clip";
    if (clipsX && el.scrollWidth > el.clientWidth + 1) {
      problems.push(`${describe(el)} is clipped: ${el.scrollWidth} px of content in ${el.clientWidth} px`);
    } else if (clipsY && el.scrollHeight > el.clientHeight + 1) {
      problems.push(`${describe(el)} is clipped: ${el.scrollHeight} px of content in ${el.clientHeight} px high`);
    } else if (style.textOverflow === "ellipsis" && el.tagName !== "SELECT" && el.scrollWidth > el.clientWidth + 1) {
      problems.push(`${describe(el)} ends in an ellipsis: ${el.scrollWidth} px of text in ${el.clientWidth} px`);
    }
    if (el.tagName === "SELECT" && !el.multiple && el.size <= 1) {
      // A closed select shows its chosen option in the box less its padding and the arrow.
      canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const needed = canvas.measureText(text).width;
      const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - SELECT_ARROW;
      if (needed > room + 1) {
        problems.push(`${describe(el)} is cut short: "${text}" needs ${Math.round(needed)} px, the box has ${Math.round(room)} px`);
      }
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const source = /\{#|\{%|\{\{/;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest("code, pre, script, style, textarea, template")) continue;  // quoted code
    if (source.test(node.textContent) && parent.checkVisibility()) {
      problems.push(`template source in the page: ${describe(parent)}`);
    }
  }
  if (source.test(document.title)) problems.push(`template source in the title: "${document.title}"`);
  return problems;
}"""

FIGURE_PROBLEMS = r"""(plot) => {
  const problems = [];
  const name = plot.dataset.figure || plot.id || "a figure";
  const box = (el) => el.getBoundingClientRect();
  const shown = (el) => { const r = box(el); return r.width > 0 && r.height > 0 && (el.textContent || el.tagName !== "text"); };
  const svg = plot.querySelector(".main-svg");
  if (!svg) return [`${name}: not drawn`];
  const figure = box(svg);
  const inside = (r) => r.left >= figure.left - 1 && r.right <= figure.right + 1 && r.top >= figure.top - 1 && r.bottom <= figure.bottom + 1;
  const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const round = (r) => `[${Math.round(r.left)}, ${Math.round(r.top)}, ${Math.round(r.right)}, ${Math.round(r.bottom)}]`;
  const text = (el) => (el.textContent || "").trim().slice(0, 50);
  const areas = [...plot.querySelectorAll(".draglayer .nsewdrag")].map(box).filter((r) => r.width > 0);
  areas.forEach((area) => {
    if (area.height < MIN_PLOT || area.width < MIN_PLOT) problems.push(`${name}: the plot area ${round(area)} is squashed`);
  });
  const labels = [];  // [what, element, off the plot too]: inside the figure, and off the plot area if so
  plot.querySelectorAll(".infolayer text[class$='title']").forEach((el) => {
    const kind = el.getAttribute("class");
    if (shown(el) && text(el)) labels.push([kind === "gtitle" ? "the title" : `the axis title "${text(el)}"`, el, kind !== "gtitle"]);
  });
  plot.querySelectorAll("g[class$='tick'] > text, g[class$='tick2'] > text").forEach((el) => {
    if (shown(el) && text(el)) labels.push([`the tick label "${text(el)}"`, el, true]);
  });
  plot.querySelectorAll(".infolayer .annotation").forEach((el) => {
    if (shown(el) && text(el)) labels.push([`the note "${text(el)}"`, el, false]);
  });
  // An axis names each of its ticks once ("1 2 2 3 3": whole numbers printed at half steps).
  const ticks = {};
  plot.querySelectorAll("g[class$='tick'] > text").forEach((el) => {
    if (!shown(el) || !text(el)) return;
    const axis = el.parentElement.getAttribute("class");
    (ticks[axis] = ticks[axis] || []).push(text(el));
  });
  Object.entries(ticks).forEach(([axis, names]) => {
    const repeated = names.filter((label, i) => names.indexOf(label) !== i);
    if (repeated.length) problems.push(`${name}: the ${axis} labels repeat ${[...new Set(repeated)].join(", ")}: ${names.join(" ")}`);
  });
  for (const [what, el, offPlot] of labels) {
    const r = box(el);
    if (!inside(r)) problems.push(`${name}: ${what} ${round(r)} is outside the figure ${round(figure)}`);
    if (offPlot && areas.some((area) => overlap(r, area))) problems.push(`${name}: ${what} ${round(r)} is over the plot area`);
  }
  // Labels written on the plot (a system's name by its point) are printed over neither another label nor
  // another point's marker (a trace's labels and markers come in the same order).
  const written = [], markers = [];
  plot.querySelectorAll(".scatterlayer .trace").forEach((trace) => {
    const points = [...trace.querySelectorAll(".points .point")];
    trace.querySelectorAll(".text .textpoint").forEach((label, index) => {
      const el = label.querySelector("text");
      if (el && shown(el) && text(el)) written.push([el, points[index]]);
    });
    markers.push(...points);
  });
  written.forEach(([a, own], i) => {
    written.slice(i + 1).forEach(([b]) => {
      if (overlap(box(a), box(b))) problems.push(`${name}: the labels "${text(a)}" and "${text(b)}" are printed over each other`);
    });
    markers.filter((point) => point !== own && overlap(box(a), box(point))).forEach(() => {
      problems.push(`${name}: the label "${text(a)}" is under another point`);
    });
  });
  const legend = plot.querySelector(".infolayer .legend");
  if (legend && legend.querySelector(".bg")) {
    const frame = box(legend.querySelector(".bg"));
    if (!inside(frame)) problems.push(`${name}: the legend ${round(frame)} is outside the figure ${round(figure)}`);
    if (areas.some((area) => overlap(frame, area))) problems.push(`${name}: the legend ${round(frame)} is over the plot area`);
    const scrollbar = legend.querySelector(".scrollbar");
    if (scrollbar && box(scrollbar).height > 0 && box(scrollbar).width > 0) problems.push(`${name}: the legend scrolls`);
    for (const [what, el] of labels) {
      if (overlap(box(el), frame)) problems.push(`${name}: the legend ${round(frame)} is over ${what} ${round(box(el))}`);
    }
    const entries = [...legend.querySelectorAll(".legendtext, .legendgrouptitle text, .legendtitletext")].filter((el) => shown(el) && text(el));
    entries.forEach((a, i) => entries.slice(i + 1).forEach((b) => {
      if (overlap(box(a), box(b))) problems.push(`${name}: legend entries "${text(a)}" and "${text(b)}" are printed over each other`);
    }));
    entries.forEach((el) => {
      if (!inside(box(el)) || box(el).bottom > frame.bottom + 1 || box(el).right > frame.right + 1)
        problems.push(`${name}: the legend entry "${text(el)}" ${round(box(el))} is cut off`);
    });
  }
  return problems;
}"""

QUIET_MS = 150
MIN_PLOT = 200  # px: a plot area less high or wide than this was squashed by what is around it
SELECT_ARROW = 20  # px that Chromium's closed select keeps for its arrow, on the right

# Drawn, and a responsive figure (the report's) resized to its box: one drawn while its tab was hidden is
# resized when the tab shows.
FIGURES_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter((div) => div.checkVisibility())
  .every((div) => {
    const svg = div.querySelector('.main-svg');
    const responsive = div._context && div._context.responsive;
    return svg && (!responsive || Math.abs(svg.getBoundingClientRect().width - div.clientWidth) < 2);
  })"""


class Watched:
    """A page's console errors, uncaught exceptions, failed requests and answers of 400 or more (``problems``),
    and its requests in flight."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        self.in_flight: set[Any] = set()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"uncaught: {error}"))
        page.on("request", lambda request: self.in_flight.add(request))
        page.on("requestfinished", lambda request: self.in_flight.discard(request))
        page.on("requestfailed", self._failed)
        page.on("response", self._answered)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text} ({message.location.get('url')})")

    def _failed(self, request: Any) -> None:
        self.in_flight.discard(request)
        self.problems.append(f"failed: {request.url} ({request.failure})")

    def _answered(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status}: {response.url}")

    def settle(self) -> None:
        """Loaded, with no request in flight for QUIET_MS (the report's figures come by a fetch after the load;
        Playwright's "networkidle" waits 500 ms, twice a page), every <details> open, the figures drawn at
        their box's width."""
        self.page.wait_for_load_state("load")
        quiet = 0
        for _ in range(400):  # 20 s at most
            self.page.wait_for_timeout(QUIET_MS / 3)
            quiet = 0 if self.in_flight else quiet + 1
            if quiet >= 3:
                break
        # What a click opens is on the page too: every <details> (a table of metric names, per system rows).
        self.page.evaluate(
            "() => document.querySelectorAll('details:not([open])').forEach((d) => { d.open = true; })"
        )
        self.page.wait_for_function(FIGURES_DRAWN, timeout=10_000)
        self.page.evaluate(
            "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
        )


def _page_problems(page: Any) -> list[str]:
    problems: list[str] = page.evaluate(PAGE_PROBLEMS.replace("SELECT_ARROW", str(SELECT_ARROW)))
    # Chromium asks for the icon once per browser profile and keeps a failure to itself: ask for it here.
    icon = page.evaluate(
        "() => (document.querySelector('link[rel~=icon]') || {}).href || new URL('/favicon.ico', location).href"
    )
    answer = page.request.get(icon)
    if not answer.ok or not answer.headers.get("content-type", "").startswith("image/"):
        problems.append(f"the icon {icon}: {answer.status} {answer.headers.get('content-type', '')}")
    problems += page.evaluate(
        f"""() => [...document.querySelectorAll('.js-plotly-plot')]
          .filter((plot) => plot.checkVisibility())
          .flatMap({FIGURE_PROBLEMS.replace("MIN_PLOT", str(MIN_PLOT))})"""
    )
    return problems


def _export_problems(page: Any, url: str) -> list[str]:
    """The report's figures as exported: each drawn alone at the export width, then checked and removed."""
    figures_url = page.evaluate("() => document.getElementById('report-body').dataset.figuresUrl")
    payload = page.request.get(url + figures_url).json()
    assert payload["figures"], "the report has no figures"
    problems: list[str] = []
    for spec in payload["figures"]:
        plot = page.evaluate_handle(
            """([name, figure, width]) => {
              const div = document.createElement("div");
              div.dataset.figure = name + " (export)";
              div.style.cssText = "position:absolute; left:0; top:0; background:#fff; z-index:10";
              document.body.append(div);
              return Plotly.newPlot(div, figure.data, {...figure.layout, width: width}).then(() => div);
            }""",
            [spec["name"], figure_for_export(spec["figure"]), EXPORT_WIDTH],
        )
        problems += plot.evaluate(FIGURE_PROBLEMS.replace("MIN_PLOT", str(MIN_PLOT)))
        plot.evaluate("div => { Plotly.purge(div); div.remove(); }")
    return problems


def _at_each_size(page: Any, url: str, watched: Watched) -> Iterator[str]:
    """``url`` opened, then laid out afresh at each window size, settled; yields the size ("1280x800")."""
    for number, viewport in enumerate(VIEWPORTS):
        page.set_viewport_size(viewport)
        if number == 0:
            page.goto(url)
        else:
            page.reload()  # a fresh layout at this size (a goto to the same address with a #tab only scrolls)
        watched.settle()
        yield f"{viewport['width']}x{viewport['height']}"


@pytest.mark.parametrize("route", ROUTES, ids=[route.name for route in ROUTES])
def test_the_page_fits_the_window(route: Route, site: dict[str, Any], db: None) -> None:
    url = site["url"] + route.path.format(**site["ids"])
    page = site["contexts"][route.role].new_page()
    page.set_default_timeout(20_000)
    watched = Watched(page)
    found: list[str] = []
    try:
        for at in _at_each_size(page, url, watched):
            if "#tab-" in route.path:  # the tab is there and open (an unknown one opens the first tab)
                tab = route.path.rsplit("#tab-", 1)[1]
                assert page.locator(f'#report-tabs a.active[data-tab="{tab}"]').count() == 1, tab
            found += [f"{at}: {problem}" for problem in _page_problems(page)]
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOTS) / f"{route.name}.png"), full_page=True)
    finally:
        page.close()
    found = watched.problems + found
    assert not found, f"{route.name} ({url}):\n" + "\n".join(dict.fromkeys(found))


@pytest.mark.parametrize("study", ["demo", "wide"])
def test_every_tab_of_the_report_fits_the_window(study: str, site: dict[str, Any], db: None) -> None:
    """The report loaded once per window size, then each of its tabs clicked in turn (its figures are resized
    as it shows) and checked as a page is. Loading the page again for every tab cost a minute of the suite."""
    url = f"{site['url']}/reports/{site['ids'][study]}/"
    page = site["contexts"][RESEARCHER].new_page()
    page.set_default_timeout(20_000)
    watched = Watched(page)
    found: list[str] = []
    walked: list[str] = []
    try:
        for number, at in enumerate(_at_each_size(page, url, watched)):
            tabs: list[str] = page.eval_on_selector_all(
                "#report-tabs a", "links => links.map((a) => a.dataset.tab)"
            )
            for tab in tabs:
                page.click(f'#report-tabs a[data-tab="{tab}"]')
                watched.settle()
                assert page.locator(f'#report-tabs a.active[data-tab="{tab}"]').count() == 1, tab
                assert page.locator(f'section.tab.active[data-tab="{tab}"]').count() == 1, tab
                found += [f"{at}, tab {tab}: {problem}" for problem in _page_problems(page)]
                if SCREENSHOTS and number == len(VIEWPORTS) - 1:
                    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
                    shot = Path(SCREENSHOTS) / f"report-{study}-{tab}.png"
                    page.screenshot(path=str(shot), full_page=True)
            walked += tabs
    finally:
        page.close()
    # Every tab every report has, each at both sizes (the wide study adds Pairwise).
    for tab in ("metrics", "agreement", "comparisons", "accuracy", "system", "references", "downloads"):
        assert walked.count(tab) == len(VIEWPORTS), (tab, walked)
    found = watched.problems + found
    assert not found, f"the {study} study's report ({url}):\n" + "\n".join(dict.fromkeys(found))


@pytest.mark.parametrize("study", ["demo", "wide"])
def test_the_exported_figures_fit(study: str, site: dict[str, Any], db: None) -> None:
    """Every figure of the report as its PNG and SVG files have it (figure_for_export at EXPORT_WIDTH, as
    kaleido draws it), on the report page of the study (its plotly.js)."""
    page = site["contexts"][RESEARCHER].new_page()
    try:
        page.goto(f"{site['url']}/reports/{site['ids'][study]}/")
        Watched(page).settle()
        found = _export_problems(page, site["url"])
    finally:
        page.close()
    assert not found, f"the exports of the {study} study's report:\n" + "\n".join(dict.fromkeys(found))
