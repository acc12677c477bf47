"""The hf engine's running batch KV: one preallocated slot per row, so rows join and leave without copying the batch.

Row i of every layer's key and value buffer holds its sequence at columns 0..lengths[i]-1 (left-aligned,
padding on the right). A decode step writes each row's new key and value in place at its own column,
`lengths[i]`, and attends over columns 0..width-1 (width = the longest row + 1) with a mask that hides
each row's columns past its own length. So:

  * a row joins by copying its own prefilled KV into a free slot (nothing else moves);
  * a row leaves by having the last running row copied into its slot (the batch stays rows 0..n-1,
    contiguous, so a step computes no empty rows);
  * a step writes one column per row instead of concatenating (and so copying) the whole cache, as
    transformers' `DynamicCache` does.

The buffers grow when a row or a column does not fit, in blocks (`ROW_BLOCK` rows, `COLUMN_BLOCK`
columns): a whole copy, but a rare one. When rows leave and the batch needs two blocks fewer rows or
columns than the buffers hold, they shrink to fit (another copy, as rare), so they hold at most about
(rows + 2 ROW_BLOCK) x (width + 2 COLUMN_BLOCK) slots, never what a long row that has left once needed.
They start zeroed, and every column a mask hides holds finite numbers (zeros or an earlier row's),
which attention multiplies by zero weight.

`SlotKV.step_cache()` gives the model a transformers `Cache` over the rows for one decode step; the
engine passes `position_ids = lengths` and `attention_mask = SlotKV.mask()`, and the model's causal mask
(query at `width - 1`) then lets each row see exactly its own columns.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import Cache, CacheLayerMixin

ROW_BLOCK = 8  # the buffers' rows grow and shrink in steps of this many
COLUMN_BLOCK = 256  # and their columns in steps of this many tokens


class ViewLayer(CacheLayerMixin):
    """A cache layer over buffers the engine owns for one forward pass: it allocates nothing itself."""

    is_sliding = False

    def __init__(self, index: int):
        super().__init__()
        self.index, self.is_initialized = index, True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        pass

    def get_max_length(self) -> int:
        return -1


class SlotLayer(ViewLayer):
    """One layer's view of the slots for one decode step: writes each row's new key and value at its length."""

    def __init__(self, slots: SlotKV, index: int):
        super().__init__(index)
        self.slots = slots

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        slots = self.slots
        if key_states.shape[-2] != 1:
            raise ValueError(f"slot layers take one token per row a step, got {key_states.shape[-2]}")
        slots.write(self.index, key_states[:, :, 0], value_states[:, :, 0])
        keys, values = slots.keys[self.index], slots.values[self.index]
        return keys[: slots.rows, :, : slots.width], values[: slots.rows, :, : slots.width]

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.slots.width, 0

    def get_seq_length(self) -> int:
        return self.slots.width - 1


class SlotKV:
    """The running rows' keys and values, a slot per row (see the module docstring)."""

    def __init__(self, layers: int, heads: int, head_dim: int, dtype: torch.dtype, device: torch.device):
        self.device = device
        self.keys = [torch.zeros((0, heads, 0, head_dim), dtype=dtype, device=device) for _ in range(layers)]
        self.values = [k.clone() for k in self.keys]
        self.lengths = torch.zeros(0, dtype=torch.long, device=device)  # tokens cached per row
        self.host_lengths: list[int] = []  # the same on the host, so no step waits for the device to read them
        self._arange, self._width = self.lengths.clone(), 0
        self._layers = [SlotLayer(self, index) for index in range(layers)]

    @property
    def rows(self) -> int:
        return len(self.host_lengths)

    @property
    def width(self) -> int:
        """Columns a decode step attends over: the longest row plus the token it writes."""
        return self._width

    @property
    def capacity(self) -> tuple[int, int]:
        return self.keys[0].shape[0], self.keys[0].shape[2]

    def tokens_held(self) -> int:
        """KV slots allocated (rows x columns of capacity): what the buffers occupy."""
        rows, columns = self.capacity
        return rows * columns

    def add(self, kv: list[tuple[torch.Tensor, torch.Tensor]], row: int, length: int) -> None:
        """Append a row: `length` tokens of row `row` of `kv` (per layer, keys and values [batch, heads, width, dim])
        taken from the right end (a prefill's rows are right-aligned)."""
        self._reserve(self.rows + 1, length + 1)
        at = self.rows
        for index, (keys, values) in enumerate(kv):
            self.keys[index][at, :, :length] = keys[row, :, keys.shape[-2] - length :]
            self.values[index][at, :, :length] = values[row, :, values.shape[-2] - length :]
        self.host_lengths.append(length)
        self._sync()

    def keep(self, rows: list[int]) -> list[int]:
        """Keep only `rows` (ascending): each leaving row's slot takes a kept row from the end. The new order as old rows."""
        order = list(range(len(rows)))
        kept = set(rows)
        holes = [row for row in range(len(rows)) if row not in kept]
        movers = [row for row in rows if row >= len(rows)]
        for hole, mover in zip(holes, movers, strict=True):
            length = self.host_lengths[mover]
            for buffers in (self.keys, self.values):
                for buffer in buffers:
                    buffer[hole, :, :length] = buffer[mover, :, :length]
            order[hole] = mover
        self.host_lengths = [self.host_lengths[row] for row in order]
        self._sync()
        have_rows, have_columns = self.capacity
        if not rows or have_rows >= self.rows + 2 * ROW_BLOCK or have_columns >= self.width + 2 * COLUMN_BLOCK:
            self._resize(self.rows, self.width)  # an idle engine holds no buffers at all
        return order

    def row(self, row: int, length: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A copy of the first `length` columns of one row, per layer, as [1, heads, length, dim] keys and values."""
        return [
            (k[row : row + 1, :, :length].clone(), v[row : row + 1, :, :length].clone())
            for k, v in zip(self.keys, self.values, strict=True)
        ]

    def write(self, layer: int, keys: torch.Tensor, values: torch.Tensor) -> None:
        """One layer's key and value of each row's new token ([rows, heads, dim]), at the row's length."""
        self.keys[layer][self._arange, :, self.lengths] = keys
        self.values[layer][self._arange, :, self.lengths] = values

    def mask(self) -> torch.Tensor:
        """The 2D attention mask for a decode step: row i sees columns 0..lengths[i] (its cache and the new token)."""
        columns = torch.arange(self.width, device=self.device)
        return (columns[None, :] <= self.lengths[:, None]).long()

    def step_cache(self) -> Cache:
        """The cache for the next decode step (growing the buffers if a row's new token has no column yet)."""
        self._reserve(self.rows, self.width)
        return Cache(layers=self._layers)

    def advance(self) -> None:
        """After a decode step: every row holds one more token."""
        self.lengths = self.lengths + 1
        self.host_lengths = [length + 1 for length in self.host_lengths]
        self._width += 1

    def _sync(self) -> None:
        """The device's lengths (and row indices) and the width, from the host's lengths."""
        self.lengths = torch.tensor(self.host_lengths, dtype=torch.long, device=self.device)
        self._arange = torch.arange(self.rows, device=self.device)
        self._width = max(self.host_lengths) + 1 if self.host_lengths else 0

    def _reserve(self, rows: int, columns: int) -> None:
        have_rows, have_columns = self.capacity
        if rows > have_rows or columns > have_columns:
            self._resize(max(rows, have_rows), max(columns, have_columns))

    def _resize(self, rows: int, columns: int) -> None:
        """New buffers of `rows` x `columns` rounded up to whole blocks, holding the running rows."""
        rows = -(-rows // ROW_BLOCK) * ROW_BLOCK
        columns = -(-columns // COLUMN_BLOCK) * COLUMN_BLOCK
        n, width = self.rows, min(self.width, self.capacity[1])
        for buffers in (self.keys, self.values):
            for index, old in enumerate(buffers):
                new = old.new_zeros((rows, old.shape[1], columns, old.shape[3]))
                new[:n, :, :width] = old[:n, :, :width]
                buffers[index] = new
