"""The layers and the pure cores (docs/architecture.md): import-linter's contracts hold on the project, and they
would catch a module that broke them: Django in the metric core or the statistics package, an app in the
kernel, a lower app importing an upper one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_project_keeps_its_contracts() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def _copy_of_the_cores(tmp_path: Path) -> Path:
    """The pure cores (scoring/metrics, stats) with the project's contracts, and empty apps and kernel, in a
    tree of their own."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("annotation", "correlation", "config", "scoring", "kernel"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for forbidden in ("models", "services", "selectors", "tasks"):  # named by the contract
        (tmp_path / "scoring" / f"{forbidden}.py").write_text("")
    for feature in ("runs", "training", "external", "score_files", "vectors"):  # the feature packages too
        (tmp_path / "scoring" / feature).mkdir()
        (tmp_path / "scoring" / feature / "__init__.py").write_text("")
    shutil.copytree(ROOT / "scoring" / "metrics", tmp_path / "scoring" / "metrics")
    shutil.copytree(ROOT / "stats", tmp_path / "stats")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("scoring/metrics/leak.py", "from django.db import models\n"),
        ("scoring/metrics/leak.py", "import annotation\n"),
        ("stats/correlations.py", "import django.conf\n"),
        ("stats/agreement.py", "from annotation import models\n"),
        ("stats/bootstrap.py", "from django.db import models\n"),
        ("stats/agreement_coefficients.py", "import celery\n"),
        ("stats/human_ceiling.py", "from scoring.models import MetricScore\n"),
        ("stats/report/builder.py", "from django.conf import settings\n"),
        ("stats/figures/report.py", "from annotation.models import Study\n"),
        ("stats/figures/report.py", "import kaleido\n"),  # the figures' data; the browser is correlation's
        ("stats/latex/report.py", "import kernel\n"),  # the statistics import no project package at all
        ("annotation/leak.py", "from scoring import models\n"),  # the layers: annotation is below scoring
        ("annotation/leak.py", "import correlation\n"),
        ("scoring/services.py", "import correlation\n"),  # scoring sits below correlation
        ("kernel/leak.py", "import annotation\n"),  # the kernel is below every app
        ("kernel/leak.py", "from stats import bootstrap\n"),  # and beside the statistics, not above them
        ("scoring/services.py", "import config\n"),  # the configuration sits above every app
        ("kernel/leak.py", "import config\n"),
    ],
)
def test_a_module_that_imports_django_breaks_the_contract(tmp_path: Path, module: str, source: str) -> None:
    tree = _copy_of_the_cores(tmp_path)
    clean = _lint_imports(tree)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the copy itself is clean
    target = tree / module
    target.write_text((target.read_text() if target.exists() else "") + source)
    broken = _lint_imports(tree)
    assert broken.returncode != 0
    assert "BROKEN" in broken.stdout
