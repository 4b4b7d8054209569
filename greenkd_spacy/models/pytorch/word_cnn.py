"""A convolution over a doc's word embeddings, max-pooled into class logits: the part of
greenkd.NgramCNN.v1 that sees word order.

A bag of n-grams scores each n-gram apart, so "not good" and "good, not bad" differ only
in the n-grams they share; a window over the embeddings of neighbouring words learns
such patterns once for every word of similar use. Each position's window is one small
matrix product, so the network costs a few microseconds per word on one thread.

At inference that product is not needed: before the ReLU the convolution is a sum over
the window's offsets of each word's embedding times that offset's filters, which depends
on the word alone. Each vocabulary row's response to each offset is computed once (a
table of rows x offsets x filters, remade when the weights change) and a position's
hidden layer is a sum of as many looked-up rows as the window is wide: about a tenth of
the arithmetic per word, the same numbers up to rounding (spaCy's parser precomputes
its first layer per token for the same reason).
"""
from typing import Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

# Word rows: 0 is the gap put between docs (always the zero vector), 1 any word the
# n-gram table has no unigram for; the table's unigrams follow.
GAP_ROW = 0
UNKNOWN_ROW = 1
FIRST_WORD_ROW = 2
# The largest response table (floats) kept for inference; a larger vocabulary x window x
# filters falls back to the product at each position.
MAX_RESPONSE_FLOATS = 1 << 26


class WordCNN(nn.Module):
    """logits = W max_t ReLU(Conv(E[w_{t-k}], ..., E[w_{t+k}])) + b, per doc.

    The docs of a batch arrive as one flat sequence of word rows with ``window`` gap rows
    between docs (and at both ends), so that one convolution serves the whole batch
    without padding and no window reaches into the next doc; ``doc_of`` names the doc of
    each real position. A doc without words pools to zeros (its logits are the bias).
    The embedding table gets sparse gradients (SparseAdam, as the n-gram tables).
    """

    def __init__(self, n_words: int, width: int, hidden_width: int, window: int, n_classes: int, dropout: float):
        super().__init__()
        self.n_words = n_words
        self.window = window
        self.embed = nn.Embedding(n_words + FIRST_WORD_ROW, width, padding_idx=GAP_ROW, sparse=True)
        nn.init.normal_(self.embed.weight, std=0.1)
        with torch.no_grad():
            self.embed.weight[GAP_ROW].zero_()
        self.conv = nn.Conv1d(width, hidden_width, kernel_size=2 * window + 1)
        self.output = nn.Linear(hidden_width, n_classes)
        self.dropout = nn.Dropout(dropout)
        # Inference's response table and the weights' versions it was made from: not a
        # buffer, so not saved with the weights.
        self._responses: Optional[torch.Tensor] = None
        self._responses_key: Optional[Tuple[int, ...]] = None

    def forward(self, sequence: torch.Tensor, positions: torch.Tensor, doc_of: torch.Tensor, n_docs: int) -> torch.Tensor:
        """sequence: (S,) word rows with gaps; positions: (N,) the index in the
        convolution's output of each real word (its place in ``sequence`` minus the
        window); doc_of: (N,) its doc."""
        hidden_width, width, size = self.conv.weight.shape
        pooled = torch.zeros(n_docs, hidden_width, dtype=self.conv.weight.dtype)
        if positions.numel():
            if not self.training and not torch.is_grad_enabled() and self._fits_responses():
                # Inference: each position's window as offsets into the response table.
                rows = torch.stack([sequence.index_select(0, positions + k) + k * self.embed.num_embeddings for k in range(size)], dim=1)
                hidden = torch.relu(F.embedding_bag(rows, self._response_table(), mode="sum") + self.conv.bias)
            else:
                embedded = self.dropout(self.embed(sequence))  # (S, width)
                # The convolution at the real words only, as one product: each word's window
                # of rows side by side, against the filters laid out the same way (k-major).
                windows = torch.cat([embedded.index_select(0, positions + k) for k in range(size)], dim=1)
                filters = self.conv.weight.permute(0, 2, 1).reshape(hidden_width, size * width)
                hidden = torch.relu(torch.addmm(self.conv.bias, windows, filters.t()))  # (N, hidden)
            # ReLU outputs are >= 0, so the zeros the max starts from change nothing.
            pooled = pooled.scatter_reduce(0, doc_of.unsqueeze(1).expand(-1, hidden_width), hidden, "amax")
        return self.output(self.dropout(pooled))

    def _fits_responses(self) -> bool:
        hidden_width, _, size = self.conv.weight.shape
        return self.embed.num_embeddings * size * hidden_width <= MAX_RESPONSE_FLOATS

    def _response_table(self) -> torch.Tensor:
        """(offsets * rows, filters): row k * R + w is word row w's response to the
        filters of window offset k; remade when the embeddings or filters have changed
        (an optimizer step or loaded weights bump the tensors' versions)."""
        embed, weight = self.embed.weight, self.conv.weight
        key = (embed.data_ptr(), embed._version, weight.data_ptr(), weight._version)
        if self._responses is None or self._responses_key != key:
            with torch.no_grad():
                # (offsets, rows, filters) from (rows, width) x (offsets, width, filters)
                self._responses = torch.matmul(embed, weight.permute(2, 1, 0)).reshape(-1, weight.shape[0])
            self._responses_key = key
        return self._responses
