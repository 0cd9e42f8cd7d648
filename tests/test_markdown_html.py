"""The docs/*.md renderer behind the documentation pages (config/markdown_html.py): the Markdown the
documents use, every character of the text escaped, links only where they are safe and lead somewhere."""

from __future__ import annotations

from config.markdown_html import heading_id, markdown_html


def _links(target: str) -> str | None:
    return "/docs/metrics/" if target == "metrics.md" else None


def test_headings_paragraphs_lists_tables_and_code() -> None:
    html = markdown_html(
        "# Import formats\n\nA *generic* `jsonl` line, **all or nothing**.\n\n"
        "- one\n  continued\n- two\n  - inner\n\n1. first\n2. second\n\n"
        "| name | what |\n|---|---|\n| `bleu-2` | BLEU |\n\n```sh\npython manage.py x --a <b>\n```\n\n> quoted",
        link=_links,
    )
    assert '<h1 id="import-formats">Import formats</h1>' in html
    assert "<p>A <em>generic</em> <code>jsonl</code> line, <strong>all or nothing</strong>.</p>" in html
    assert "<ul><li>one continued</li><li>two<ul><li>inner</li></ul></li></ul>" in html
    assert "<ol><li>first</li><li>second</li></ol>" in html
    assert "<thead><tr><th>name</th><th>what</th></tr></thead>" in html
    assert "<td><code>bleu-2</code></td><td>BLEU</td>" in html
    assert "<pre><code>python manage.py x --a &lt;b&gt;</code></pre>" in html
    assert "<blockquote><p>quoted</p></blockquote>" in html


def test_heading_ids_are_githubs_so_links_between_documents_land() -> None:
    assert heading_id("Flags, comments and adjudication (Gupta et al., 2019)") == (
        "flags-comments-and-adjudication-gupta-et-al-2019"
    )
    assert heading_id("`jsonl` (generic)") == "jsonl-generic"


def test_text_is_escaped_and_only_safe_links_are_made() -> None:
    html = markdown_html(
        "<script>alert(1)</script> [docs](metrics.md#tokenizer) [x](javascript:alert(1)) "
        '[src](../scoring/x.py) [web](https://example.org/a?b=1&c=2) [here](#top") `<i>`',
        link=lambda target: "/docs/metrics/#tokenizer" if target == "metrics.md#tokenizer" else None,
    )
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<a href="/docs/metrics/#tokenizer">docs</a>' in html
    assert "javascript:" not in html.replace("&lt;", "")  # shown as text, never as a link
    assert 'href="javascript' not in html
    assert "src" in html
    assert '<a href="../scoring' not in html
    assert '<a href="https://example.org/a?b=1&amp;c=2">web</a>' in html
    assert "<code>&lt;i&gt;</code>" in html


def test_a_line_that_only_looks_like_a_table_row_is_a_paragraph_and_the_rest_follows() -> None:
    text = "The gates end small\n|tanh g| at 0.05–0.15, and the head\ndoes the rest.\n\n- a list after it"
    html = markdown_html(text, link=lambda target: target)
    assert "<p>|tanh g| at 0.05–0.15, and the head does the rest.</p>" in html
    assert "<li>a list after it</li>" in html


def test_a_code_span_inside_a_link_label_stays_code_inside_the_link() -> None:
    html = markdown_html("- see [the `x` option](#a), then `y` and **b**", link=lambda target: target)

    assert '<a href="#a">the <code>x</code> option</a>' in html
    assert "<code>y</code>" in html
    assert "\x00" not in html
