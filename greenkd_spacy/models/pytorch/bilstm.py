"""A stacked bidirectional LSTM over a flat batch of variable-length sequences."""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


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
        starts = torch.cumsum(lengths, 0) - lengths
        # Empty docs contribute no rows to flat and cannot be packed: leave them out.
        keep = lengths > 0
        starts, lengths = starts[keep], lengths[keep]
        # The padded batch is one gather from flat (row N: zeros for the padding), whose
        # gradient is one scatter-add. torch's pad_sequence copies each sequence into a
        # slice instead, and the backward of every such copy clones the whole padded
        # gradient: quadratic in the number of sequences, it was most of a training
        # step's time.
        positions = torch.arange(int(lengths.max()))
        valid = positions[None, :] < lengths[:, None]
        index = torch.where(valid, starts[:, None] + positions[None, :], flat.shape[0])
        rows = torch.cat((flat, flat.new_zeros((1, flat.shape[1]))), dim=0)
        packed = pack_padded_sequence(rows[index], lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        padded, _ = pad_packed_sequence(output, batch_first=True)
        return padded[valid]
