"""The swap masks of a permutation test, drawn from one seeded generator in a fixed order and kept packed, and
the sums over the swapped units that a block of masks selects (one matrix product per metric)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from stats.bootstrap import row_product
from stats.meta.permutation.types import PERM_BOTH, Layout

# A metric's sum matrix (units x group sums) is dense up to this many columns and cells, else sparse: a product
# with a dense matrix costs units x columns per permutation, with the sparse one (one entry per reply) replies.
DENSE_COLUMNS = 48
DENSE_CELLS = 4_000_000


def swap_units(layout: Layout, scheme: str) -> tuple[np.ndarray, int]:
    """Each reply's swap unit: itself (PERM-BOTH) or its context (PERM-INPUTS)."""
    if scheme == PERM_BOTH:
        return np.arange(layout.n), layout.n
    return layout.contexts.codes, layout.contexts.count


def sum_matrix(
    units: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray | sparse.csr_matrix:
    """units x columns: the sum of ``values`` of the replies of each unit that fall in each column, stored
    transposed (columns x units, C order), the form its product with the masks (units x permutations) takes."""
    if shape[1] <= DENSE_COLUMNS and shape[0] * shape[1] <= DENSE_CELLS:
        dense = np.zeros((shape[1], shape[0]))
        np.add.at(dense, (columns, units), values)
        return dense
    return sparse.csr_matrix((values, (columns, units)), shape=(shape[1], shape[0]))


class Masks:
    """One block of swap masks as drawn: units x permutations, C order."""

    def __init__(self, units_first: np.ndarray) -> None:
        self.units_first = units_first

    def times(self, matrix: np.ndarray | sparse.csr_matrix) -> np.ndarray:
        """permutations x sums: the swapped sums (``matrix`` is columns x units, see :func:`sum_matrix`)."""
        if sparse.issparse(matrix):
            return np.asarray(matrix @ self.units_first).T
        return row_product(matrix, self.units_first).T


class MaskBlocks:
    """The blocks of swap masks of one seed, drawn in order as :func:`swap_masks` draws them and kept packed
    (one bit per unit and permutation), so that later tests see the same masks without drawing them again."""

    def __init__(self, generator: np.random.Generator, units: int) -> None:
        self.generator, self.units = generator, units
        self.packed: list[tuple[int, np.ndarray]] = []

    def block(self, index: int, rows: int) -> np.ndarray:
        """units x rows of 0.0/1.0."""
        return unpacked(self.raw(index, rows), rows, self.units)

    def bits(self, index: int, rows: int) -> np.ndarray:
        """units x rows of 0/1 (uint8): the same masks as :meth:`block`."""
        return np.unpackbits(self.raw(index, rows))[: rows * self.units].reshape(self.units, rows)

    def raw(self, index: int, rows: int) -> np.ndarray:
        if index > len(self.packed):
            raise ValueError("blocks of masks are drawn in order")
        if index == len(self.packed):
            raw = np.frombuffer(self.generator.bytes((rows * self.units + 7) // 8), dtype=np.uint8)
            self.packed.append((rows, raw))
        size, raw = self.packed[index]
        if size != rows:
            raise ValueError("a block of masks was first drawn with another size")
        return raw


_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


def unpacked(raw: np.ndarray, rows: int, units: int) -> np.ndarray:
    """units x rows of 0.0/1.0 from packed bits (a byte's 8 bits at once, from a table)."""
    result: np.ndarray = _BITS[raw].reshape(-1)[: rows * units].reshape(units, rows)
    return result


def swap_masks(generator: np.random.Generator, rows: int, units: int) -> np.ndarray:
    """rows x units of 0.0/1.0, each independently 1 (swap) with probability 1/2; drawn unit by unit (the
    result is the transpose of a C-ordered units x rows array)."""
    raw = np.frombuffer(generator.bytes((rows * units + 7) // 8), dtype=np.uint8)
    return unpacked(raw, rows, units).T
