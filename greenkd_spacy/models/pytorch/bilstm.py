"""A stacked bidirectional LSTM over a flat batch of variable-length sequences."""
from typing import List

import torch
from torch import nn
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence


class StackedBiLSTM(nn.Module):
    """Stacked BiLSTM with dropout between layers (Dozat & Manning 2017).

    Inputs are given flat, as all tokens of a batch concatenated, plus the length of
    each sequence, so that the thinc wrapper never pads by hand. Sequences are packed,
    so the backward direction of a short sequence never reads padding.
    """

    def __init__(self, n_in: int, hidden_width: int, depth: int, dropout: float):
        super().__init__()
        self.n_in = n_in
        self.hidden_width = hidden_width
        self.dropout = dropout
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
        sizes: List[int] = lengths.tolist()
        # Empty docs contribute no rows to flat and cannot be packed: leave them out.
        sequences = [seq for seq in torch.split(flat, sizes) if seq.shape[0]]
        lengths = lengths[lengths > 0]
        packed = pack_sequence(sequences, enforce_sorted=False)
        output, _ = self.lstm(packed)
        padded, _ = pad_packed_sequence(output, batch_first=True)
        mask = torch.arange(padded.shape[1])[None, :] < lengths[:, None]
        return padded[mask]
