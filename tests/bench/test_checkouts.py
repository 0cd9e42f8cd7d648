"""bench.checkouts reads the measured cells of the tables a bench command prints."""

from __future__ import annotations

from bench.checkouts import table_measures

OUTPUT = """# report benchmark
| replies | part | CPU (s) | wall (s) |
|---:|---|---:|---:|
| 10,000 | whole report (build_report) | 2.23 / 2.28 / 2.40 | 1.50 / 1.57 / 1.60 |
| 10,000 | cached page (GET) | | 132 / 136 / 824 ms |
| 10,000 | one value | 0.75 | |
text between tables
| mode | wall s |
|---|---|
| in-process | 4.7 / 5.1 / 6.4 |
"""


def test_each_measured_cell_is_named_by_its_row_and_column_and_takes_the_middle_value() -> None:
    assert table_measures(OUTPUT) == {
        ("10,000 · whole report (build_report)", "CPU (s)"): 2.28,
        ("10,000 · whole report (build_report)", "wall (s)"): 1.57,
        ("10,000 · cached page (GET)", "wall (s) [ms]"): 136.0,
        ("10,000 · one value", "CPU (s)"): 0.75,
        ("in-process", "wall s"): 5.1,
    }


def test_output_without_tables_has_no_cells() -> None:
    assert table_measures("round 1: before 3.2 s\nno table here\n") == {}
