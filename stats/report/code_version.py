"""Which code computed a report: the project's version and, in a git checkout, the commit.

Recorded in every report document and in the reproducibility bundle, so that a number in a paper can be
traced to the code that produced it. Read once per process.
"""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
import tomllib
from pathlib import Path

# The repository root. This file was correlation/code_version.py once; after its move to stats/report/,
# parent.parent pointed at stats/, where no pyproject.toml is (reports read "unknown+git...").
ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "dialeval"  # pyproject.toml's [project].name, as an installed package knows itself


@functools.cache
def code_version() -> str:
    """``"0.1.0"``, ``"0.1.0+git.1a2b3c4d5e6f"`` or ``"0.1.0+git.1a2b3c4d5e6f.dirty"``; when no version can be
    found, the commit alone (``"git 1a2b3c4d5e6f"``), and ``"unknown"`` without that either."""
    version = project_version()
    commit = _git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return version or "unknown"
    dirty = ".dirty" if _git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{version}+git.{commit}{dirty}" if version else f"git {commit}{dirty}"


def project_version() -> str:
    """The version in the checkout's pyproject.toml (what runs here, even if an older build is installed),
    else the installed package's; "" when neither says."""
    try:
        return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        pass
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _git(*arguments: str) -> str:
    try:
        result = subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""
