"""An annotator's own shuffled order of work items (pure Python, no Django).

Among the free items with as many answers, an annotator gets the one that comes first in their shuffle:
the items sorted by a hash of the annotator's ``order_seed`` and the item id. The hash is SHA-256 of
``item-order:<seed>:<id>``, its first eight bytes read as an unsigned big-endian integer, so the order is
reproducible from the stored seed alone, different between annotators, and unrelated to the ids' own
order (items imported together have consecutive ids; a linear map of the id, as this once was, kept them
in ascending order for about one annotator in thirty).
"""

from __future__ import annotations

import hashlib


def shuffle_key(*, order_seed: int, item_id: int) -> int:
    """The place of item ``item_id`` in the shuffle of the annotator with ``order_seed`` (sort ascending)."""
    digest = hashlib.sha256(f"item-order:{int(order_seed)}:{int(item_id)}".encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big")
