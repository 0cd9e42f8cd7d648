"""The item browser gives the reply the room: with nine metric scores and a long query, the
reply column was about three words wide and 24 replies made a 9,800 px page."""

from __future__ import annotations

import pytest

from tests.browser_fixtures import log_in
from tests.correlation.builders import Item, add_items, signature
from tests.factories import QuestionFactory, StudyFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUERY = "according to your advertisement , you want an experienced software engineer . i think i fit"


def test_the_reply_column_is_wide_enough_to_read(page, live_server, researcher) -> None:
    study = StudyFactory.create(owner=researcher)
    question = QuestionFactory.create(study=study, name="appropriateness", scale_min=0, scale_max=2)
    metrics = [signature(name) for name in ("bert-ruber-referenced", "embedding-average", "greedy-matching")]
    metrics += [signature(f"bleu-{n}") for n in (1, 2, 3, 4)] + [signature("meteor"), signature("rouge-l")]
    add_items(
        study=study,
        question=question,
        items=[
            Item("dualencoder_train", ratings=[0, 1, 2], scores={m.text: 0.5 for m in metrics}, text=QUERY)
            for _ in range(3)
        ],
    )
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/studies/{study.pk}/items/")
    table = page.locator("#item-table").bounding_box()
    reply = page.locator("#item-table td.reply-cell").first.bounding_box()
    assert table is not None
    assert reply is not None
    assert reply["width"] >= 0.3 * table["width"]
    assert reply["width"] >= 280  # 18rem
