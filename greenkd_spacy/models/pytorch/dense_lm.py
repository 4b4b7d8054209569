"""The densely connected LSTM language model of LD-Net (ld-net-lm-pruning.md, 2.1-2.5).

Layer l of a direction reads the word embedding and the outputs of every earlier kept
layer, ``x_l = [x, h_1, ..., h_{l-1}]``, and the direction's output is
``h = [x, h_1, ..., h_L]``. Because nothing depends on a layer except through these
concatenations, a layer can be deleted by cutting its columns out of the later layers'
input weights and out of whatever reads ``h`` (the LM head here, the labeller's
contextual projection, eq. 5) - that is what `prune_layers` does.

Layer-wise dropout (2.5): during LM training, each layer's output is withheld from the
later recurrent layers with probability ``layer_dropout`` per batch, but still reaches
the projection, so the model learns to work with layers missing.

Gates ``z`` (eq. 6) multiply each layer's output; they are 1 while the LM is trained and
are learned by the labeller under the R3 regulariser (see `r3_penalty`).
"""
import random
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn


class DenseLSTM(nn.Module):
    """One direction of the LM: densely connected single-layer LSTMs."""

    def __init__(self, n_in: int, hidden_width: int, depth: int):
        super().__init__()
        self.n_in = n_in
        self.hidden_width = hidden_width
        self.cells = nn.ModuleList(
            nn.LSTM(n_in + i * hidden_width, hidden_width, batch_first=True) for i in range(depth)
        )
        # Which of the original layers the cells are (kept across pruning, for reports).
        self.layer_ids: List[int] = list(range(depth))

    @property
    def depth(self) -> int:
        return len(self.cells)

    @property
    def out_width(self) -> int:
        return self.n_in + self.depth * self.hidden_width

    def forward(
        self,
        x: torch.Tensor,
        gates: Optional[torch.Tensor] = None,
        layer_dropout: float = 0.0,
        lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """x: (B, T, n_in), sequences left-aligned; lengths: (B,) real lengths (None:
        all T). Returns (B, T, out_width), zeros after each sequence's end.

        The layers run on one packed sequence, so no step is spent on padding: a batch
        of sentences is padded to its longest, and labelling a corpus in document order
        would otherwise compute several times the real positions. The dense
        concatenations work on the packed rows directly, since every layer's packed
        output has the same row order as its input.
        """
        if lengths is None:
            lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.long)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        to_next = [packed.data]
        outputs = [packed.data]
        for i, cell in enumerate(self.cells):
            h = cell(packed._replace(data=torch.cat(to_next, dim=-1)))[0].data
            if gates is not None:
                h = h * gates[i]
            outputs.append(h)
            dropped = self.training and layer_dropout > 0 and random.random() < layer_dropout
            to_next.append(torch.zeros_like(h) if dropped else h)
        dense = packed._replace(data=torch.cat(outputs, dim=-1))
        return nn.utils.rnn.pad_packed_sequence(dense, batch_first=True, total_length=x.shape[1])[0]

    def prune(self, keep: Sequence[int]) -> List[slice]:
        """Delete every cell whose position is not in keep; cut the deleted layers'
        columns out of the later cells' input weights.

        RETURNS (List[slice]): the column ranges of the old output that survive, in
            order, so the caller can cut the same columns out of what reads the output.
        """
        keep = sorted(set(keep))
        old_blocks = [slice(0, self.n_in)] + [
            slice(self.n_in + i * self.hidden_width, self.n_in + (i + 1) * self.hidden_width)
            for i in range(self.depth)
        ]
        new_cells = nn.ModuleList()
        for new_pos, i in enumerate(keep):
            cell = self.cells[i]
            # Inputs of cell i were blocks 0..i of the old output; keep x and kept layers < i.
            cols = [old_blocks[0]] + [old_blocks[j + 1] for j in keep if j < i]
            index = torch.cat([torch.arange(s.start, s.stop) for s in cols])
            new = nn.LSTM(self.n_in + new_pos * self.hidden_width, self.hidden_width, batch_first=True)
            with torch.no_grad():
                new.weight_ih_l0.copy_(cell.weight_ih_l0[:, index])
                new.weight_hh_l0.copy_(cell.weight_hh_l0)
                new.bias_ih_l0.copy_(cell.bias_ih_l0)
                new.bias_hh_l0.copy_(cell.bias_hh_l0)
            new_cells.append(new)
        self.cells = new_cells
        self.layer_ids = [self.layer_ids[i] for i in keep]
        return [old_blocks[0]] + [old_blocks[i + 1] for i in keep]

    def flops_per_token(self) -> int:
        """Multiply-adds of the recurrent layers for one token (see `lstm_step_flops`)."""
        return sum(lstm_step_flops(self.n_in + i * self.hidden_width, self.hidden_width) for i in range(self.depth))


def lstm_step_flops(n_in: int, hidden: int) -> int:
    """Multiply-adds of one LSTM time step in one direction, gates and cell update
    included, activations not: 4 * hidden * (input + hidden) + 3 * hidden."""
    return 4 * hidden * (n_in + hidden) + 3 * hidden


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of a left-aligned batch within its own length."""
    max_len = x.shape[1]
    positions = torch.arange(max_len)[None, :]
    index = torch.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)
    return x.gather(1, index[:, :, None].expand(-1, -1, x.shape[2]))


@dataclass(frozen=True)
class LMShape:
    """The LM's hyperparameters, defaulting to the paper's LM (10 layers of 300 per
    direction, 300-d embeddings, 1,600-d projection, layer dropout 0.5). The module,
    `greenkd-pretrain-lm` and `pretrain_lm` take their defaults from here."""

    vocab_size: int = 30000
    embed_width: int = 300
    hidden_width: int = 300
    depth: int = 10
    proj_width: int = 1600
    cutoffs: Tuple[int, ...] = (4000, 20000)
    layer_dropout: float = 0.5
    dropout: float = 0.1


PAPER_LM = LMShape()


class DenseLM(nn.Module):
    """Forward and backward densely connected LMs over a shared word embedding.

    Word ids index a frequency-sorted vocabulary (0 = unknown, 1 = sentence boundary),
    which the adaptive softmax needs. The LM heads (projection + adaptive softmax) are
    only used while pretraining; the labeller reads the two directions' outputs.
    """

    UNK = 0
    BOUNDARY = 1

    def __init__(
        self,
        vocab_size: int,
        embed_width: int = PAPER_LM.embed_width,
        hidden_width: int = PAPER_LM.hidden_width,
        depth: int = PAPER_LM.depth,
        proj_width: int = PAPER_LM.proj_width,
        cutoffs: Sequence[int] = PAPER_LM.cutoffs,
        layer_dropout: float = PAPER_LM.layer_dropout,
        dropout: float = PAPER_LM.dropout,
    ):
        super().__init__()
        self.vocab_size = vocab_size
        self.layer_dropout = layer_dropout
        self.embed = nn.Embedding(vocab_size, embed_width)
        self.dropout = nn.Dropout(dropout)
        self.forward_lstm = DenseLSTM(embed_width, hidden_width, depth)
        self.backward_lstm = DenseLSTM(embed_width, hidden_width, depth)
        cutoffs = [c for c in cutoffs if 0 < c < vocab_size - 1]
        if not cutoffs:  # torch needs one cluster boundary; tiny vocabularies get a middle one
            cutoffs = [max(1, vocab_size // 2)]
        self.heads = nn.ModuleDict()
        for name, lstm in (("fwd", self.forward_lstm), ("bwd", self.backward_lstm)):
            self.heads[name] = nn.ModuleDict(
                {
                    "proj": nn.Linear(lstm.out_width, proj_width),
                    "softmax": nn.AdaptiveLogSoftmaxWithLoss(proj_width, vocab_size, cutoffs, div_value=4.0),
                }
            )

    @property
    def depth(self) -> int:
        return self.forward_lstm.depth

    def directions(self, ids: torch.Tensor, lengths: torch.Tensor, gates: Optional[Dict[str, torch.Tensor]] = None) -> Dict[str, torch.Tensor]:
        """Both directions' dense outputs ("fwd", "bwd") for a left-aligned batch of word ids (B, T),
        aligned so that position t holds h_t (forward) and h^r_t (backward)."""
        gates = gates or {}
        layer_dropout = self.layer_dropout if self.training else 0.0
        x = self.dropout(self.embed(ids))
        fwd = self.forward_lstm(x, gates.get("fwd"), layer_dropout, lengths)
        backward = self.backward_lstm(reverse_padded(x, lengths), gates.get("bwd"), layer_dropout, lengths)
        bwd = reverse_padded(backward, lengths)
        return {"fwd": fwd, "bwd": bwd}

    def lm_loss(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the next word (forward) and of the previous
        word (backward); each sentence is framed by boundary tokens."""
        batch = ids.shape[0]
        framed_len = lengths + 2
        framed = torch.full((batch, int(framed_len.max())), self.BOUNDARY, dtype=torch.long)
        framed[:, 1 : ids.shape[1] + 1] = torch.where(
            torch.arange(ids.shape[1])[None, :] < lengths[:, None], ids, torch.full_like(ids, self.BOUNDARY)
        )
        outputs = self.directions(framed, framed_len)
        losses = []
        mask = torch.arange(framed.shape[1] - 1)[None, :] < (framed_len - 1)[:, None]
        for name, inputs_at, targets in (
            ("fwd", outputs["fwd"][:, :-1], framed[:, 1:]),
            ("bwd", outputs["bwd"][:, 1:], framed[:, :-1]),
        ):
            head = self.heads[name]
            hidden = torch.relu(head["proj"](self.dropout(inputs_at)))
            result = head["softmax"](hidden[mask], targets[mask])
            losses.append(result.loss)
        return sum(losses) / 2

    def prune_layers(self, keep: Dict[str, Sequence[int]]) -> Dict[str, List[slice]]:
        """Delete layers per direction; the LM heads are dropped (a pruned LM serves a
        labeller, it no longer predicts words). RETURNS the surviving output columns."""
        kept = {
            "fwd": self.forward_lstm.prune(keep["fwd"]),
            "bwd": self.backward_lstm.prune(keep["bwd"]),
        }
        self.heads = nn.ModuleDict()
        return kept

    def flops_per_token(self) -> int:
        """Recurrent multiply-adds per token, both directions (the softmax excluded:
        the labeller does not run it)."""
        return self.forward_lstm.flops_per_token() + self.backward_lstm.flops_per_token()


def r3_penalty(z: torch.Tensor, target_layers: float) -> torch.Tensor:
    """R3 of eq. 2.4: delta(|z|_0 > lambda_1) * |z|_1 + |z * (1 - z)|_1.

    The L1 term switches off once no more than ``target_layers`` (lambda_1) gates are
    non-zero, so kept layers are not shrunk further; the second term pushes every gate
    to 0 or 1. z is kept in [0, 1] by projection after each step (`project_gates`).
    """
    active = float((z > 0).sum()) > target_layers
    l1 = z.abs().sum() if active else z.sum() * 0.0
    return l1 + (z * (1 - z)).abs().sum()


@torch.no_grad()
def project_gates(z: torch.Tensor) -> None:
    """The projection of projected gradient descent: clip gates into [0, 1]."""
    z.clamp_(0.0, 1.0)
