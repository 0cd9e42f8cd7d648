"""Which reply of a pairwise item an annotator sees on the left (pure Python, no Django).

A pair item holds its two replies in canonical order (``response_id < response_b_id``, WorkItem). Always
showing the lower id first would put one system on the left whenever its replies were imported first, and
position bias would then look like a quality difference. So the side is drawn per annotator and item: a
hash of the annotator's ``order_seed`` (the seed of their shuffled queue) and the item id. It is the same on
every reload and after "back", different between annotators, about half of the items each way, and the
server recomputes it when the answer comes, so the page never needs to send a reply id.
"""

from __future__ import annotations

import hashlib

LEFT = "left"
RIGHT = "right"
TIE = "tie"
POSITIONS = (LEFT, RIGHT, TIE)  # what an annotator answers: the side they found better, or a tie


def lower_id_on_left(*, order_seed: int, item_id: int) -> bool:
    """True when the pair's first reply (the lower id, ``response_a``) is shown on the left."""
    digest = hashlib.sha256(f"pair-side:{int(order_seed)}:{int(item_id)}".encode("ascii")).digest()
    return digest[0] % 2 == 0


def shown_order(*, order_seed: int, item_id: int, response_a: int, response_b: int) -> tuple[int, int]:
    """(left reply id, right reply id) of a pair item for the annotator with ``order_seed``."""
    if lower_id_on_left(order_seed=order_seed, item_id=item_id):
        return response_a, response_b
    return response_b, response_a


def canonical_choice(position: str, *, left_is_a: bool) -> str:
    """The stored choice ("a", "b", "tie") of an answer given by position ("left", "right", "tie")."""
    if position == TIE:
        return "tie"
    if position not in (LEFT, RIGHT):
        raise ValueError(f"unknown position {position!r}")
    return "a" if (position == LEFT) == left_is_a else "b"


def shown_position(choice: str, *, left_is_a: bool) -> str:
    """The inverse of :func:`canonical_choice`: a stored choice as the side the annotator picked."""
    if choice == "tie":
        return TIE
    if choice not in ("a", "b"):
        raise ValueError(f"unknown choice {choice!r}")
    return LEFT if (choice == "a") == left_is_a else RIGHT
