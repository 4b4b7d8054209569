"""The Deep Averaging Network over n-gram embeddings (sparse-distillation-dan.md, 2.3)."""
from typing import Optional, Tuple

import torch
from torch import nn

from .word_cnn import WordCNN

POOLINGS = ("mean", "sqrtn", "sum")


class DANModule(nn.Module):
    """logits = W2 ReLU(W1 [pool(Emb(g_1..g_n)); v] + b1) + b2 [+ sum_i Lin(g_i)] [+ V v].

    v is the mean of the doc's static word vectors (``vectors_width`` > 0; greenkd.DAN.v3,
    greenkd.NgramLinear.v2): the DAN reads it beside its pooled n-grams, the linear bag
    through one dense layer to the logits (V).

    pool is the paper's mean ("mean"), or the sum scaled by 1/sqrt(n) ("sqrtn") or the
    plain sum ("sum"). The mean makes a long text's vector the average of many mostly
    neutral n-grams, so a model trained on SST-2's short phrases is less sure on whole
    sentences; the scaled sum keeps some of a linear bag-of-words model's additivity.

    ``cnn`` (a WordCNN, greenkd.NgramCNN.v1) adds the logits of a convolution over the
    doc's word embeddings: the word order no bag of n-grams sees.

    The embedding table is the big, sparsely activated part: it is an EmbeddingBag with
    sparse gradients, so a step touches only the rows of the n-grams in the batch (the
    component updates it with SparseAdam, the dense layers with thinc's Adam).

    With ``deep=False`` only the linear bag is left (logits = b + sum_i Lin(g_i)): no
    embeddings, no dense layers. On SST-2's phrase-labelled data it generalises to whole
    sentences better than any DAN we trained (docs/benchmarks.md, textcat-dan-seed-sweep).
    """

    def __init__(
        self,
        n_rows: int,
        width: int,
        hidden_width: int,
        n_classes: int,
        dropout: float,
        pooling: str = "mean",
        linear: bool = False,
        deep: bool = True,
        vectors_width: int = 0,
        cnn: Optional[WordCNN] = None,
    ):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"(greenkd-spacy) Unknown DAN pooling '{pooling}': use one of {', '.join(POOLINGS)}.")
        if not deep and not linear:
            raise ValueError("(greenkd-spacy) A DAN with deep = false needs linear = true: nothing else is left.")
        self.pooling = pooling
        self.n_rows = max(1, n_rows)
        self.n_classes = n_classes
        self.deep = deep
        self.vectors_width = vectors_width
        mode = "mean" if pooling == "mean" else "sum"
        self.dropout = nn.Dropout(dropout)
        if deep:
            self.embed = nn.EmbeddingBag(self.n_rows, width, mode=mode, sparse=True)
            nn.init.normal_(self.embed.weight, std=0.1)
            self.hidden = nn.Linear(width + vectors_width, hidden_width)
            self.output = nn.Linear(hidden_width, n_classes)
        else:  # the linear bag's class biases, and its weights on the mean static vector
            self.bias = nn.Parameter(torch.zeros(n_classes))
            self.vector_logits = nn.Linear(vectors_width, n_classes, bias=False) if vectors_width else None
        # The "wide" part: one weight per n-gram and class, summed over the doc's n-grams
        # (a linear bag of n-grams, as spaCy's BOW textcat), added to the DAN's logits.
        self.linear = nn.EmbeddingBag(self.n_rows, n_classes, mode="sum", sparse=True) if linear else None
        if self.linear is not None:
            nn.init.zeros_(self.linear.weight)
        self.cnn = cnn

    def sparse_parameters(self) -> list:
        """The per-n-gram tables, then the word table of the CNN: the tables that get
        sparse gradients (updated with SparseAdam)."""
        return self.ngram_tables() + ([self.cnn.embed.weight] if self.cnn is not None else [])

    def ngram_tables(self) -> list:
        """The tables with a row per n-gram (what pruning cuts row by row)."""
        return ([self.embed.weight] if self.deep else []) + ([self.linear.weight] if self.linear is not None else [])

    def set_dropout(self, rate: float) -> None:
        self.dropout.p = rate
        if self.cnn is not None:
            self.cnn.dropout.p = rate

    def forward(
        self,
        ids: torch.Tensor,
        offsets: torch.Tensor,
        vectors: Optional[torch.Tensor] = None,
        words: Optional[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = None,
    ) -> torch.Tensor:
        """words: the CNN's input (WordCNN.forward's sequence, positions, doc_of)."""
        logits = self._bag_logits(ids, offsets, vectors)
        if self.cnn is not None:
            logits = logits + self.cnn(*words, n_docs=offsets.shape[0])
        return logits

    def _bag_logits(self, ids: torch.Tensor, offsets: torch.Tensor, vectors: Optional[torch.Tensor]) -> torch.Tensor:
        # A doc without a known n-gram has an empty bag, whose mean or sum is the zero
        # vector; one without a word in the vectors table, a zero mean vector.
        if (vectors is None) != (self.vectors_width == 0):
            raise ValueError(
                f"(greenkd-spacy) This DAN was built for {self.vectors_width}-d static vectors and got "
                f"{'none' if vectors is None else vectors.shape[-1]}: load the vectors it was trained with."
            )
        if not self.deep:
            logits = self.linear(ids, offsets) + self.bias
            if vectors is not None:
                logits = logits + self.vector_logits(self.dropout(vectors))
            return logits
        weights = None
        if self.pooling == "sqrtn" and ids.numel():
            ends = torch.cat([offsets[1:], offsets.new_tensor([ids.numel()])])
            counts = ends - offsets
            scale = counts.clamp(min=1).to(torch.float32).rsqrt()
            weights = torch.repeat_interleave(scale, counts)
        pooled = self.embed(ids, offsets, per_sample_weights=weights)
        if vectors is not None:
            pooled = torch.cat([pooled, vectors], dim=1)
        pooled = self.dropout(pooled)
        logits = self.output(self.dropout(torch.relu(self.hidden(pooled))))
        if self.linear is not None:
            logits = logits + self.linear(ids, offsets)
        return logits
