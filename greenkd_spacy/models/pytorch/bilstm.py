"""A stacked bidirectional LSTM over a flat batch of variable-length sequences."""
from typing import List, Tuple

import numpy
import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence


class StackedBiLSTM(nn.Module):
    """Stacked BiLSTM with dropout between layers (Dozat & Manning 2017).

    Inputs are given flat, as all tokens of a batch concatenated, plus the length of
    each sequence, so that the thinc wrapper never pads by hand. Sequences are packed,
    so the backward direction of a short sequence never reads padding.
    """

    def __init__(self, n_in: int, hidden_width: int, depth: int, dropout: float, window: int = 0):
        super().__init__()
        self.n_in = n_in
        self.hidden_width = hidden_width
        self.dropout = dropout
        # Sequences longer than this run as overlapping windows (0: whole sequences).
        # torch's CPU LSTM steps through time one position after another, so a batch
        # costs about as many steps as its longest sequence has tokens: one 700-token
        # article made a 2,000-word batch's forward and backward 4x slower than windows
        # of 128 would.
        self.window = window
        self.lstm = nn.LSTM(
            n_in,
            hidden_width,
            num_layers=depth,
            bidirectional=True,
            batch_first=True,
            dropout=dropout if depth > 1 else 0.0,
        )

    def set_dropout(self, rate: float) -> None:
        """Set the inter-layer dropout, so spaCy's [training] dropout reaches torch."""
        self.dropout = rate
        if self.lstm.num_layers > 1:
            self.lstm.dropout = rate

    def forward(self, flat: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """flat: (N, n_in); lengths: (B,) summing to N. Returns (N, 2 * hidden_width)."""
        if flat.shape[0] == 0:
            return flat.new_zeros((0, 2 * self.hidden_width))
        if self.window and int(lengths.max()) > self.window:
            source, window_lengths, rows = overlapping_windows(lengths.tolist(), self.window)
            return self._whole(flat[source], window_lengths)[rows]
        return self._whole(flat, lengths)

    def _whole(self, flat: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The BiLSTM over each whole sequence."""
        index, batch_sizes = packed_order(lengths)
        # The packed batch is one gather from flat and the output one gather back,
        # each with a scatter-add as its gradient. Padding first (torch's
        # pad_sequence / pack_padded_sequence / pad_packed_sequence) copies the batch
        # four times more, and pad_sequence's backward clones the whole padded
        # gradient once per sequence.
        packed = PackedSequence(flat[index], batch_sizes)
        output, _ = self.lstm(packed)
        inverse = torch.empty_like(index)
        inverse[index] = torch.arange(index.shape[0])
        return output.data[inverse]


def packed_order(lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Where each row of a PackedSequence comes from in the flat batch (sequences one
    after another, `lengths` long; empty ones allowed), and the packed batch sizes.

    A PackedSequence holds time step 0 of every sequence, then step 1 of those that
    have one, and so on, the sequences in order of decreasing length."""
    starts = torch.cumsum(lengths, 0) - lengths
    order = torch.argsort(lengths, descending=True, stable=True)
    order = order[lengths[order] > 0]
    sorted_lengths, sorted_starts = lengths[order], starts[order]
    positions = torch.arange(int(sorted_lengths[0]))
    valid = positions[:, None] < sorted_lengths[None, :]  # (time, sequence)
    index = (sorted_starts[None, :] + positions[:, None])[valid]
    return index, valid.sum(dim=1)


def overlapping_windows(lengths: List[int], window: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Cut every sequence longer than `window` into windows of at most `window` tokens
    that overlap by window // 4 on each side, so that every token is read from a window
    where it has at least that much context on both sides (or its sequence's edge).

    RETURNS: the rows of flat that make the windows, one after another; the windows'
    lengths; and for each row of flat, the row of the windows' output to read: the
    one window whose middle (core) holds it.
    """
    margin = window // 4
    core = window - 2 * margin
    source: List[numpy.ndarray] = []
    rows: List[numpy.ndarray] = []
    window_lengths: List[int] = []
    start = offset = 0
    for length in lengths:
        if length <= window:
            spans = [(0, length, 0, length)]
        else:
            spans = [
                (max(0, c - margin), min(length, c + core + margin), c, min(length, c + core))
                for c in range(0, length, core)
            ]
        for w_start, w_end, c_start, c_end in spans:
            source.append(numpy.arange(start + w_start, start + w_end))
            rows.append(numpy.arange(offset + c_start - w_start, offset + c_end - w_start))
            window_lengths.append(w_end - w_start)
            offset += w_end - w_start
        start += length
    return (
        torch.from_numpy(numpy.concatenate(source)),
        torch.tensor(window_lengths, dtype=torch.int64),
        torch.from_numpy(numpy.concatenate(rows)),
    )
