"""The project's own Markdown documents (docs/*.md) as HTML, for the pages that serve them
(config/doc_pages.py): the subset those documents use — headings (with GitHub's anchor ids, so that
``metrics.md#tokenizer`` works), paragraphs, lists, tables, block quotes, fenced code, and inline code,
emphasis and links.

Safe by construction: every character of the text is HTML-escaped first, and only the markup this module
writes is added; a link's target must be an anchor, an http(s) URL, or a document that ``link`` resolves
(another document of the folder), else the link is shown as its text. No Django here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

# A link's target, given as written ("import-formats.md#jsonl-generic"): its URL, or None to leave it out.
LinkResolver = Callable[[str], str | None]

_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*]|\d+\.)\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_STRONG = re.compile(r"\*\*(.+?)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_PLACEHOLDER = "\x00{}\x00"


def heading_id(text: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    plain = _CODE_SPAN.sub(r"\1", text).lower()
    plain = re.sub(r"[^\w\- ]", "", plain)
    return plain.replace(" ", "-")


def markdown_html(text: str, *, link: LinkResolver) -> str:
    """``text`` (Markdown) as HTML, every character of it escaped (see the module docstring)."""
    lines = text.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
        elif _FENCE.match(line):
            index = _fenced(lines, index, out)
        elif heading := _HEADING.match(line):
            level, title = len(heading.group(1)), heading.group(2)
            out.append(f'<h{level} id="{escape(heading_id(title))}">{inline(title, link)}</h{level}>')
            index += 1
        elif line.lstrip().startswith("|") and index + 1 < len(lines) and _TABLE_RULE.match(lines[index + 1]):
            index = _table(lines, index, out, link)
        elif _BULLET.match(line):
            index = _list(lines, index, out, link)
        elif line.lstrip().startswith(">"):
            quoted = []
            while index < len(lines) and lines[index].lstrip().startswith(">"):
                quoted.append(lines[index].lstrip()[1:].strip())
                index += 1
            out.append(f"<blockquote><p>{inline(' '.join(quoted), link)}</p></blockquote>")
        else:
            # The first line always belongs to it (one that only looks like something else, "|x| is ...",
            # must not stop the loop before it moves on); the following lines while they are paragraph lines.
            paragraph = [line.strip()]
            index += 1
            while index < len(lines) and _in_paragraph(lines[index]):
                paragraph.append(lines[index].strip())
                index += 1
            out.append(f"<p>{inline(' '.join(paragraph), link)}</p>")
    return "\n".join(out)


_PLACED = re.compile("\x00(\\d+)\x00")


def inline(text: str, link: LinkResolver) -> str:
    """One line's inline Markdown: code spans, links, strong and emphasis; everything else escaped."""
    kept: list[str] = []

    def keep(html: str) -> str:
        kept.append(html)
        return _PLACEHOLDER.format(len(kept) - 1)

    text = _CODE_SPAN.sub(lambda match: keep(f"<code>{escape(match.group(1))}</code>"), text)

    def linked(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        url = _url(target, link)
        # The label's code spans are already this line's placeholders: put them back in its HTML.
        shown = _PLACED.sub(lambda found: kept[int(found.group(1))], inline(label, link))
        return keep(f'<a href="{escape(url)}">{shown}</a>' if url is not None else shown)

    text = _LINK.sub(linked, text)
    html = escape(text, quote=False)
    html = _STRONG.sub(r"<strong>\1</strong>", html)
    html = _EMPHASIS.sub(r"<em>\1</em>", html)
    # A placeholder this call did not make (a link label's code span, made by the caller) stays for the caller.
    return _PLACED.sub(
        lambda found: kept[int(found.group(1))] if int(found.group(1)) < len(kept) else found[0], html
    )


def _url(target: str, link: LinkResolver) -> str | None:
    if target.startswith("#"):
        return target
    if re.match(r"^https?://", target):
        return target
    return link(target)


def _in_paragraph(line: str) -> bool:
    return bool(
        line.strip()
        and not _FENCE.match(line)
        and not _HEADING.match(line)
        and not _BULLET.match(line)
        and not line.lstrip().startswith(("|", ">"))
    )


def _fenced(lines: list[str], index: int, out: list[str]) -> int:
    body = []
    index += 1
    while index < len(lines) and not _FENCE.match(lines[index]):
        body.append(lines[index])
        index += 1
    out.append(f"<pre><code>{escape(chr(10).join(body))}</code></pre>")
    return index + 1


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)]


def _table(lines: list[str], index: int, out: list[str], link: LinkResolver) -> int:
    header = _cells(lines[index])
    rows = []
    index += 2
    while index < len(lines) and lines[index].lstrip().startswith("|"):
        rows.append(_cells(lines[index]))
        index += 1
    html = ["<table>", "<thead><tr>", *(f"<th>{inline(cell, link)}</th>" for cell in header), "</tr></thead>"]
    html.append("<tbody>")
    for row in rows:
        html.append("<tr>" + "".join(f"<td>{inline(cell, link)}</td>" for cell in row) + "</tr>")
    html.append("</tbody></table>")
    out.append("".join(html))
    return index


def _list(lines: list[str], index: int, out: list[str], link: LinkResolver) -> int:
    """A list and its items' continuation lines; a more indented marker starts a list inside the item."""
    first = _BULLET.match(lines[index])
    assert first is not None
    indent = len(first.group(1))
    tag = "ol" if first.group(2)[0].isdigit() else "ul"
    items: list[list[str]] = []  # each item's HTML parts
    text: list[str] = []
    while index < len(lines):
        line = lines[index]
        bullet = _BULLET.match(line)
        if bullet and len(bullet.group(1)) == indent:
            if items:
                items[-1].insert(0, inline(" ".join(text), link))
            items.append([])
            text = [bullet.group(3).strip()]
            index += 1
        elif bullet and len(bullet.group(1)) > indent:
            nested: list[str] = []
            index = _list(lines, index, nested, link)
            items[-1].extend(nested)
        elif line.strip() and line.startswith(" ") and not _FENCE.match(line):
            text.append(line.strip())
            index += 1
        else:
            break
    if items:
        items[-1].insert(0, inline(" ".join(text), link))
    out.append(f"<{tag}>" + "".join(f"<li>{''.join(parts)}</li>" for parts in items) + f"</{tag}>")
    return index
