"""kernel/csv_cells.py: OWASP's CSV injection rule, one cell at a time and through the writer."""

from __future__ import annotations

import csv
import io

import pytest

from kernel.csv_cells import FormulaSafeWriter, formula_safe_cell, formula_safe_text

PAYLOAD = "=cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    "text",
    [PAYLOAD, "+1+1", "-5", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "=", "-"],
)
def test_text_starting_with_a_trigger_gets_a_leading_quote(text):
    assert formula_safe_text(text) == "'" + text
    assert formula_safe_cell(text) == "'" + text


@pytest.mark.parametrize(
    "text",
    ["", "hello", "i am fine , thank you .", "a=b", "1-2", "5", " =1+1", "'=1+1", "明天", "human:q"],
)
def test_harmless_text_is_unchanged(text):
    assert formula_safe_text(text) == text
    assert formula_safe_cell(text) == text


@pytest.mark.parametrize("value", [-0.0067, -5, 0, 3, 2.5, -1e-12, None, True])
def test_non_text_cells_are_left_alone(value):
    assert formula_safe_cell(value) is value


def test_the_writer_makes_every_text_cell_safe_and_writes_numbers_as_numbers():
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator="\n")
    writer.writerow(["id", "human:-q", "@metric|refs:multi"])
    writer.writerows([[1, PAYLOAD, -0.0067], [-2, "-5", ""]])
    assert buffer.getvalue().splitlines() == [
        "id,human:-q,'@metric|refs:multi",
        "1,'=cmd|' /C calc'!A0,-0.0067",
        "-2,'-5,",
    ]
    rows = list(csv.reader(io.StringIO(buffer.getvalue(), newline="")))
    assert float(rows[1][2]) == -0.0067


def test_the_writer_quotes_as_csv_writer_does():
    buffer = io.StringIO()
    FormulaSafeWriter(buffer, lineterminator="\n").writerow(['=a, "b"', "line\nbreak", "\r\n-x", "plain"])
    assert buffer.getvalue() == '"\'=a, ""b""","line\nbreak","\'\r\n-x",plain\n'
    assert list(csv.reader(io.StringIO(buffer.getvalue(), newline=""))) == [
        ['\'=a, "b"', "line\nbreak", "'\r\n-x", "plain"]
    ]


@pytest.mark.parametrize("lineterminator", ["\n", "\r\n"])
def test_a_carriage_return_inside_a_cell_cannot_start_a_new_line(lineterminator):
    """csv.writer with a "\\n" terminator leaves "ok\\r=..." unquoted: read back, the part after the
    carriage return is a new line starting with a live formula."""
    buffer = io.StringIO()
    writer = FormulaSafeWriter(buffer, lineterminator=lineterminator)
    writer.writerows([["ok\r" + PAYLOAD, 1], ["next", 2]])
    assert buffer.getvalue() == f'"ok\r{PAYLOAD}",1{lineterminator}next,2{lineterminator}'
    assert list(csv.reader(io.StringIO(buffer.getvalue(), newline=""))) == [
        ["ok\r" + PAYLOAD, "1"],
        ["next", "2"],
    ]
