"""Django's one-line comments: the template lexer only recognises ``{# ... #}`` within one line, so a
``{#`` whose ``#}`` is on a later line is printed to the visitor as text (every rating screen
showed the comment of templates/annotation/work/_question.html). Longer comments use
``{% comment %}...{% endcomment %}``."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates"


def unclosed_comments(text: str) -> list[int]:
    """Line numbers of the ``{#`` that have no ``#}`` after them on the same line."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        start = line.find("{#")
        while start != -1:
            end = line.find("#}", start + 2)
            if end == -1:
                lines.append(number)
                break
            start = line.find("{#", end + 2)
    return lines


def test_no_template_has_a_comment_that_spans_lines() -> None:
    # The scan itself first: it must see a comment spread over lines, and only that.
    assert unclosed_comments("{# one line #}\n<p>{# a #} and {# b #}</p>") == []
    assert unclosed_comments("<p>\n{# starts here,\n   ends here #}\n</p>") == [2]
    assert unclosed_comments("{# closed #} {# open") == [1]

    files = sorted(path for path in TEMPLATES.rglob("*") if path.is_file())
    assert files, f"no template found under {TEMPLATES}"
    found = [
        f"{path.relative_to(TEMPLATES)}:{line}"
        for path in files
        for line in unclosed_comments(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "a {# #} comment must open and close on one line; use {% comment %} instead"
