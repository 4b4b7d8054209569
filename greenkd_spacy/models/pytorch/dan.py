"""The Deep Averaging Network over n-gram embeddings (sparse-distillation-dan.md, 2.3)."""
import torch
from torch import nn


class DANModule(nn.Module):
    """logits = W2 ReLU(W1 mean(Emb(g_1..g_n)) + b1) + b2.

    The embedding table is the big, sparsely activated part: it is an EmbeddingBag with
    sparse gradients, so a step touches only the rows of the n-grams in the batch (the
    component updates it with SparseAdam, the dense layers with thinc's Adam).
    """

    def __init__(self, n_rows: int, width: int, hidden_width: int, n_classes: int, dropout: float):
        super().__init__()
        self.embed = nn.EmbeddingBag(max(1, n_rows), width, mode="mean", sparse=True)
        nn.init.normal_(self.embed.weight, std=0.1)
        self.hidden = nn.Linear(width, hidden_width)
        self.output = nn.Linear(hidden_width, n_classes)
        self.dropout = nn.Dropout(dropout)

    def set_dropout(self, rate: float) -> None:
        self.dropout.p = rate

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        # A doc without a known n-gram has an empty bag, whose mean is the zero vector.
        pooled = self.dropout(self.embed(ids, offsets))
        return self.output(self.dropout(torch.relu(self.hidden(pooled))))
