"""The statistics package is checked as ``mypy --strict`` checks it, by the one ``mypy .`` of the test
command: pyproject.toml lists --strict's flags for ``stats.*`` (mypy accepts ``strict`` only globally). When
a mypy upgrade adds a flag to --strict, this test names it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from mypy.main import define_options
from mypy.options import PER_MODULE_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
CONFIG_ONLY = {"warn_unused_configs"}  # about the configuration file's sections, not about any code


def test_the_statistics_package_gets_every_flag_of_mypy_strict() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    (stats,) = [entry for entry in mypy["overrides"] if "stats.*" in entry["module"]]
    _, _, strict_flags = define_options()
    missing = [
        f"{name} = {value}"
        for name, value in strict_flags
        if name not in CONFIG_ONLY
        and (stats if name in PER_MODULE_OPTIONS else mypy).get(name, not value) != value
    ]
    assert not missing, f"--strict turns on what pyproject.toml does not set for stats.*: {missing}"
