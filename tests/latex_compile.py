"""Compiling a LaTeX document with pdflatex in a test (the report's and the benchmark's tables)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def compiled_log(source: str, folder: Path, stem: str = "document") -> str:
    """pdflatex's log of the document ``source``, compiled in ``folder``; fails the test if pdflatex stops."""
    path = folder / f"{stem}.tex"
    path.write_text(source, encoding="utf-8")
    # scripts/setup.sh installs TeX (texlive-latex-base, texlive-latex-recommended) for the tests.
    assert shutil.which("pdflatex"), "pdflatex is missing: run scripts/setup.sh --with-browser"
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", path.name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert (folder / f"{stem}.pdf").exists()
    return (folder / f"{stem}.log").read_text(errors="replace")
