"""Biaffine arc and label scorers of Dozat & Manning (2017)."""
from typing import Callable, Optional, Tuple

import torch
from torch import nn

# Added to the logits of impossible heads (padding, self-loops); finite, so the
# softmax and its gradient stay well defined.
MASK_VALUE = -1e4

Decoder = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class MLP(nn.Module):
    """One dense layer with LeakyReLU(0.1) and dropout, as in the paper."""

    def __init__(self, n_in: int, n_out: int, dropout: float):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.activation = nn.LeakyReLU(0.1)
        self.dropout = nn.Dropout(dropout)
        nn.init.orthogonal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.activation(self.linear(x)))


class Biaffine(nn.Module):
    """score[b, o, i, j] = [x_i; 1]^T W_o [y_j; 1] (the bias rows are optional)."""

    def __init__(self, n_in: int, n_out: int, bias_x: bool, bias_y: bool):
        super().__init__()
        self.bias_x = bias_x
        self.bias_y = bias_y
        self.weight = nn.Parameter(
            torch.zeros(n_out, n_in + int(bias_x), n_in + int(bias_y))
        )

    def _extend(self, x: torch.Tensor, y: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.bias_x:
            x = torch.cat((x, torch.ones_like(x[..., :1])), dim=-1)
        if self.bias_y:
            y = torch.cat((y, torch.ones_like(y[..., :1])), dim=-1)
        return x, y

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x: (B, Lx, d), y: (B, Ly, d) -> (B, n_out, Lx, Ly)."""
        x, y = self._extend(x, y)
        return torch.einsum("bxi,oij,byj->boxy", x, self.weight, y)

    def pairwise(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Score aligned pairs only: x, y: (B, L, d) -> (B, L, n_out)."""
        x, y = self._extend(x, y)
        return torch.einsum("bli,oij,blj->blo", x, self.weight, y)


class BiaffineParserModule(nn.Module):
    """Arc and label scores for padded sentences over encoder vectors.

    The root is a learned vector in the encoder's output space, prepended to every
    sentence, so the head works over any encoder without changing its input.
    Labels are scored only at one head per token (the gold head in training, the
    decoded head at inference), which keeps memory linear in sentence length.
    """

    def __init__(
        self,
        n_in: int,
        arc_size: int,
        label_size: int,
        n_labels: int,
        dropout: float,
        decoder: Optional[Decoder] = None,
    ):
        super().__init__()
        self.n_in = n_in
        self.n_labels = n_labels
        self.root = nn.Parameter(torch.zeros(n_in))
        self.arc_dep = MLP(n_in, arc_size, dropout)
        self.arc_head = MLP(n_in, arc_size, dropout)
        self.label_dep = MLP(n_in, label_size, dropout)
        self.label_head = MLP(n_in, label_size, dropout)
        self.arc_attn = Biaffine(arc_size, 1, bias_x=True, bias_y=False)
        self.label_attn = Biaffine(label_size, n_labels, bias_x=True, bias_y=True)
        self.decoder = decoder

    def set_dropout(self, rate: float) -> None:
        for module in self.modules():
            if isinstance(module, nn.Dropout):
                module.p = rate

    def forward(
        self, flat: torch.Tensor, index: torch.Tensor, heads: Optional[torch.Tensor]
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Score a padded batch of sentences.

        flat (torch.Tensor): (N, n_in) encoder vectors of all tokens of the batch.
        index (torch.Tensor): (S, L) long, the row of flat for each sentence position,
            -1 on padding.
        heads (Optional[torch.Tensor]): (S, L) long heads in 0..L (0 = root) at which to
            score labels; None to decode them from the arc scores with self.decoder.
        RETURNS: arc logits (S, L, L + 1), label logits (S, L, n_labels), heads (S, L).
        """
        n_sents, max_len = index.shape
        mask = index >= 0
        tokens = flat[index.clamp(min=0)] * mask.unsqueeze(-1).to(flat.dtype)
        root = self.root.expand(n_sents, 1, self.n_in)
        nodes = torch.cat((root, tokens), dim=1)
        arc_logits = self.arc_attn(self.arc_dep(tokens), self.arc_head(nodes)).squeeze(1)
        head_mask = torch.cat((mask.new_ones((n_sents, 1)), mask), dim=1)
        invalid = ~head_mask.unsqueeze(1).expand(n_sents, max_len, max_len + 1)
        positions = torch.arange(max_len + 1)
        self_loops = (positions[1:, None] == positions[None, :]).unsqueeze(0)
        arc_logits = arc_logits.masked_fill(invalid | self_loops, MASK_VALUE)
        if heads is None:
            if self.decoder is None:
                heads = arc_logits.argmax(dim=-1)
            else:
                heads = self.decoder(arc_logits.detach(), mask.sum(dim=1))
        safe_heads = heads.clamp(min=0)
        label_nodes = self.label_head(nodes)
        gathered = torch.gather(
            label_nodes,
            1,
            safe_heads.unsqueeze(-1).expand(n_sents, max_len, label_nodes.shape[-1]),
        )
        label_logits = self.label_attn.pairwise(self.label_dep(tokens), gathered)
        return arc_logits, label_logits, heads
