"""The pure cores (scoring/metrics, correlation/stats) never import Django: import-linter's contracts hold,
and they would catch a module that broke them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
PURE_CORRELATION_MODULES = (
    "stats.py",
    "agreement.py",
    "agreement_coefficients.py",
    "bootstrap.py",
    "comparisons.py",
    "curves.py",
    "human_ceiling.py",
    "latex.py",
    "figures.py",
    "pairwise_figures.py",
    "pairwise_report.py",
    "pairwise_stats.py",
    "plot_points.py",
    "report_adjudication.py",
    "report_builder.py",
    "report_document.py",
    "report_human.py",
    "report_metrics.py",
    "report_page.py",
    "report_types.py",
)


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
    """The two pure cores with the project's contracts, in a tree of their own."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("annotation", "correlation", "config", "scoring"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for forbidden in ("models", "services", "selectors", "tasks", "api", "views"):  # named by the contract
        (tmp_path / "scoring" / f"{forbidden}.py").write_text("")
    (tmp_path / "annotation" / "selectors").mkdir()  # the layers contract's declared exceptions
    (tmp_path / "annotation" / "selectors" / "__init__.py").write_text("")
    (tmp_path / "annotation" / "selectors" / "quality.py").write_text("from correlation import agreement\n")
    (tmp_path / "annotation" / "views_progress.py").write_text("from correlation import agreement\n")
    shutil.copytree(ROOT / "scoring" / "metrics", tmp_path / "scoring" / "metrics")
    for core in PURE_CORRELATION_MODULES:
        shutil.copy(ROOT / "correlation" / core, tmp_path / "correlation" / core)
    return tmp_path


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("scoring/metrics/leak.py", "from django.db import models\n"),
        ("scoring/metrics/leak.py", "import annotation\n"),
        ("correlation/stats.py", "import django.conf\n"),
        ("correlation/agreement.py", "from annotation import models\n"),
        ("correlation/bootstrap.py", "from django.db import models\n"),
        ("correlation/agreement_coefficients.py", "import celery\n"),
        ("correlation/human_ceiling.py", "from scoring.models import MetricScore\n"),
        ("correlation/report_builder.py", "from django.conf import settings\n"),
        ("correlation/figures.py", "from annotation.models import Study\n"),
        ("annotation/leak.py", "from scoring import models\n"),  # the layers: annotation is the bottom one
        ("annotation/leak.py", "from correlation import stats\n"),
        ("scoring/services.py", "from correlation import stats\n"),  # scoring sits below correlation
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
