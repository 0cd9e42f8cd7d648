"""Which code computed a report: the project's version and, in a git checkout, the commit.

Recorded in every report document and in the reproducibility bundle, so that a number in a paper can be
traced to the code that produced it. Read once per process.
"""

from __future__ import annotations

import functools
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def code_version() -> str:
    """``"0.1.0"``, ``"0.1.0+git.1a2b3c4d5e6f"`` or ``"0.1.0+git.1a2b3c4d5e6f.dirty"``."""
    try:
        version = str(
            tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
        )
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        version = "unknown"
    commit = _git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return version
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return f"{version}+git.{commit}{'.dirty' if dirty else ''}"


def _git(*arguments: str) -> str:
    try:
        result = subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""
