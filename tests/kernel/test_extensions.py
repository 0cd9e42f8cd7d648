"""The kernel's page extensions: what an upper app adds to a lower app's page without being imported by it."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from kernel import extensions


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty registries for the test (the apps' own registrations are restored afterwards)."""
    monkeypatch.setattr(extensions, "_SECTIONS", {})
    monkeypatch.setattr(extensions, "_PROVIDERS", {})


def test_a_slot_renders_what_was_registered_in_order(fresh: None) -> None:
    extensions.register_section("slot", lambda context, obj: f"<p>first {obj}</p>")
    second = lambda context, obj: f"<p>second {context['who']}</p>"  # noqa: E731
    extensions.register_section("slot", second)
    extensions.register_section("slot", second)  # registered once, however often ready() runs
    html = Template('{% load page_extensions %}{% page_sections "slot" 7 %}').render(Context({"who": "me"}))
    assert html == "<p>first 7</p><p>second me</p>"


def test_a_slot_nobody_filled_renders_nothing_and_unprovided_data_is_empty(fresh: None) -> None:
    template = Template(
        '{% load page_extensions %}[{% page_sections "nobody" 1 %}]'
        '{% provided "nothing" rows as data %}{% for item in data|item_of:3 %}x{% endfor %}.'
    )
    assert template.render(Context({"rows": [1, 2]})) == "[]."


def test_provided_data_is_read_per_key(fresh: None) -> None:
    extensions.register_provider("squares", lambda rows: {row: [row * row] for row in rows})
    template = Template(
        '{% load page_extensions %}{% provided "squares" rows as data %}'
        "{% for row in rows %}{% for value in data|item_of:row %}{{ value }} {% endfor %}{% endfor %}"
    )
    assert template.render(Context({"rows": [2, 3]})) == "4 9 "
    with pytest.raises(ValueError, match="a provider of 'squares' is registered already"):
        extensions.register_provider("squares", lambda rows: {})


def test_the_scoring_app_fills_the_study_page_and_the_item_browser() -> None:
    """Registered by scoring's AppConfig.ready: the annotation app's templates name only the slots."""
    from scoring.study_section import reply_scores, study_scoring_html

    assert study_scoring_html in extensions._SECTIONS["study-detail"]
    assert extensions._PROVIDERS["reply-metric-scores"] is reply_scores
