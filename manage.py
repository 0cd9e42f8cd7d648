#!/usr/bin/env python
"""Django's command-line utility."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    from scoring.torch_threads import omp_wait_policy_setdefault

    omp_wait_policy_setdefault()  # before torch is imported (docs/benchmarks.md: training threads)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
