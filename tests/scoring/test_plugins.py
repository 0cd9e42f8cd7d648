"""Metric plugins (entry point group ``dialeval.metrics``): a real installed distribution is found
by importlib.metadata, its metric is registered, listed and scored by a run, and its signature names the
plugin; a plugin that fails to load, or clashes with a built-in metric, is skipped and listed as broken.

"Installed" honestly: the fixtures write the ``*.dist-info`` (METADATA, entry_points.txt) that pip would
write for tests/plugins/dialeval_example_plugin/pyproject.toml into a temporary folder on ``sys.path``,
then reload the registry's plugins; the teardown removes them and reloads again.
"""

from __future__ import annotations

import logging
import sys
import tomllib
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from scoring.metrics import registry
from scoring.metrics.plugins import MetricPlugin, specs_from
from scoring.models import MetricOrigin, MetricScore, MetricSignature, RunStatus
from scoring.services import scoring_run_create, scoring_run_execute
from tests.factories import DialogContextFactory, ResponseFactory, StudyFactory, SystemFactory

EXAMPLE = Path(__file__).resolve().parent.parent / "plugins" / "dialeval_example_plugin"


def write_dist_info(folder: Path, *, name: str, version: str, entry_points: dict[str, str]) -> None:
    """What pip leaves in site-packages for a distribution with these entry points."""
    dist_info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = ["[dialeval.metrics]", *(f"{key} = {value}" for key, value in entry_points.items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders the test puts on sys.path; removed (and the plugins reloaded) afterwards."""
    added: list[Path] = []
    yield added
    for folder in added:
        sys.path.remove(str(folder))
    for module in [name for name in sys.modules if name.startswith(("dialeval_example_plugin", "broken_"))]:
        del sys.modules[module]
    registry.metric_plugins_reload()
    assert "reply-length" not in registry.available_metric_names()


@pytest.fixture
def example_plugin(tmp_path: Path, on_path: list[Path]) -> MetricPlugin:
    """tests/plugins/dialeval_example_plugin installed as its pyproject.toml says."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tmp_path / "site-packages"
    write_dist_info(
        site,
        name=project["name"],
        version=project["version"],
        entry_points=project["entry-points"]["dialeval.metrics"],
    )
    for folder in (site, EXAMPLE):
        sys.path.insert(0, str(folder))
        on_path.append(folder)
    registry.metric_plugins_reload()
    return next(plugin for plugin in registry.metric_plugins() if plugin.entry_point == "reply-length")


def test_the_example_plugin_is_registered_with_its_distribution(example_plugin) -> None:
    assert example_plugin.loaded, example_plugin.error
    assert (example_plugin.distribution, example_plugin.version) == ("dialeval-example-plugin", "0.1.0")
    assert "reply-length" in registry.available_metric_names()
    assert registry.metric_origin("reply-length") == "plugin"
    assert registry.metric_origin("bleu-2") == "builtin"
    parameters = registry.signature_parameters("reply-length", language="en", references="multi")
    assert parameters == {"plugin": "dialeval-example-plugin@0.1.0", "version": "1.0.0"}
    scores = registry.compute_metrics(["reply-length"], ["a b c", ""], [[], []], ["q", "q"], "en")
    assert scores == {"reply-length": [3.0, None]}


def test_list_metrics_marks_the_plugin_metric(example_plugin) -> None:
    out = StringIO()
    call_command("list_metrics", stdout=out)
    lines = out.getvalue().splitlines()
    assert "reply-length\tplugin dialeval-example-plugin 0.1.0" in lines
    assert "bleu-2" in lines  # built-in names stay alone on their line
    out = StringIO()
    call_command("list_metrics", "--verbose", stdout=out)
    row = next(line for line in out.getvalue().splitlines() if line.startswith("reply-length\t"))
    assert row.split("\t")[1:3] == ["reference-free", "no training"]
    assert row.split("\t")[-1] == "plugin dialeval-example-plugin 0.1.0"


@pytest.mark.django_db
def test_a_run_scores_the_plugin_metric_and_its_signature_names_the_plugin(example_plugin) -> None:
    study = StudyFactory.create()
    system = SystemFactory.create(study=study, name="bot")
    texts = ["i am fine , thanks .", "no", "sure thing"]
    replies = [
        ResponseFactory.create(context=DialogContextFactory.create(study=study), system=system, text=text)
        for text in texts
    ]
    run = scoring_run_create(study=study, metrics=["reply-length", "bleu-1"], enqueue=False)
    run = scoring_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    signature = MetricSignature.objects.get(pk=run.signatures["reply-length"])
    assert signature.text == "reply-length|plugin:dialeval-example-plugin@0.1.0|version:1.0.0"
    assert signature.origin == MetricOrigin.PLUGIN
    assert MetricSignature.objects.get(pk=run.signatures["bleu-1"]).origin == MetricOrigin.BUILTIN
    values = dict(MetricScore.objects.filter(signature=signature).values_list("response_id", "value"))
    assert values == {reply.pk: float(len(text.split())) for reply, text in zip(replies, texts, strict=True)}


def test_a_plugin_of_the_fixed_argument_list_of_before_scores_unchanged(
    tmp_path: Path, on_path: list[Path]
) -> None:
    """A plugin written for ``compute(hypotheses, references, queries, language, params)`` (the protocol
    before ``MetricInputs``) is adapted by the loader and scores as it did."""
    site = tmp_path / "site-packages"
    (site / "broken_old_protocol").mkdir(parents=True)  # "broken_": the fixture unloads it afterwards
    (site / "broken_old_protocol" / "__init__.py").write_text(
        "from scoring.metrics.spec import MetricSpec\n"
        "def overlap(hypotheses, references, queries, language, params):\n"
        "    return [float(len(set(h.split()) & set(q.split()))) for h, q in zip(hypotheses, queries)]\n"
        "def spec():\n"
        "    return MetricSpec(name='query-overlap', description='words shared with the query',\n"
        "                      needs_references=False, version='1.0', compute=overlap,\n"
        "                      uses_tokenizer=False)\n",
        encoding="utf-8",
    )
    write_dist_info(site, name="old-plugin", version="1.0", entry_points={"old": "broken_old_protocol:spec"})
    sys.path.insert(0, str(site))
    on_path.append(site)
    plugins = {plugin.entry_point: plugin for plugin in registry.metric_plugins_reload()}
    assert plugins["old"].loaded, plugins["old"].error
    scores = registry.compute_metrics(
        ["query-overlap"], ["a b c", "x"], [[], []], ["b c d", "y"], "en", contexts=[["z", "b c d"], ["y"]]
    )
    assert scores == {"query-overlap": [2.0, 0.0]}


def test_a_plugin_that_fails_to_load_is_skipped_and_listed_as_broken(
    tmp_path: Path, on_path: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    site = tmp_path / "site-packages"
    (site / "broken_clash").mkdir(parents=True)
    (site / "broken_clash" / "__init__.py").write_text(
        "from scoring.metrics.registry import metric_spec\n"
        "from dataclasses import replace\n"
        "def specs():\n"
        "    return [replace(metric_spec('bleu-2'), family='')]\n",
        encoding="utf-8",
    )
    write_dist_info(
        site,
        name="broken-plugins",
        version="2.0",
        entry_points={
            "missing": "broken_missing_module:spec",  # the module does not exist
            "clash": "broken_clash:specs",  # names a built-in metric
        },
    )
    sys.path.insert(0, str(site))
    on_path.append(site)
    with caplog.at_level(logging.WARNING, logger="scoring.metrics.registry"):
        plugins = {plugin.entry_point: plugin for plugin in registry.metric_plugins_reload()}
    assert not plugins["missing"].loaded
    assert "ModuleNotFoundError" in plugins["missing"].error
    assert not plugins["clash"].loaded
    assert "'bleu-2' is already registered (built in)" in plugins["clash"].error
    assert registry.metric_spec("bleu-2").family == "bleu"  # the built-in metric is untouched
    warnings = [record.getMessage() for record in caplog.records]
    assert any("missing = broken_missing_module:spec (broken-plugins 2.0)" in text for text in warnings)
    assert any("clash = broken_clash:specs (broken-plugins 2.0)" in text for text in warnings)
    err = StringIO()
    call_command("list_metrics", stdout=StringIO(), stderr=err)
    assert "broken plugin missing = broken_missing_module:spec (broken-plugins 2.0)" in err.getvalue()
    assert "broken plugin clash" in err.getvalue()


def test_a_plugin_object_that_is_no_metric_spec_is_refused() -> None:
    with pytest.raises(TypeError, match="not a MetricSpec"):
        specs_from("bleu-2")
    with pytest.raises(TypeError, match="returned int"):
        specs_from(lambda: [registry.metric_spec("meteor"), 3])
    assert specs_from(lambda: registry.metric_spec("meteor")) == (registry.metric_spec("meteor"),)
