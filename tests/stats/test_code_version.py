"""The code version recorded in reports (stats/report/code_version.py): reports read
"unknown+git.decfd957ff1f" because the project's version was looked for beside the wrong folder."""

from __future__ import annotations

import importlib.metadata
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from stats.report import code_version as module

REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def fresh() -> Iterator[None]:
    """The version is read once per process: forget it before and after, so no other test sees this one's."""
    module.code_version.cache_clear()
    yield
    module.code_version.cache_clear()


def git(folder: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def bare_checkout(tmp_path: Path) -> tuple[Path, str]:
    """A git repository with one commit and no pyproject.toml: a checkout whose version cannot be read."""
    git(tmp_path, "init", "-q")
    git(
        tmp_path,
        "-c",
        "user.name=test",
        "-c",
        "user.email=test@example.org",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "one",
    )
    return tmp_path, git(tmp_path, "rev-parse", "--short=12", "HEAD")


def test_the_checkout_reports_its_project_version(fresh: None) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    recorded = module.code_version()
    assert recorded == version or recorded.startswith(f"{version}+git.")


def test_without_a_pyproject_the_installed_package_gives_the_version(
    fresh: None, bare_checkout: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, commit = bare_checkout
    monkeypatch.setattr(module, "ROOT", folder)
    # pytest is installed wherever the tests run; raising=False: older code had no such name
    monkeypatch.setattr(module, "DISTRIBUTION", "pytest", raising=False)
    assert module.code_version() == f"{importlib.metadata.version('pytest')}+git.{commit}"


def test_a_really_unknown_version_names_the_commit_alone(
    fresh: None, bare_checkout: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, commit = bare_checkout
    monkeypatch.setattr(module, "ROOT", folder)
    monkeypatch.setattr(module, "DISTRIBUTION", "no-such-distribution-issue-34", raising=False)
    assert module.code_version() == f"git {commit}"
