"""The n-gram vocabulary of the DAN text classifier (sparse-distillation-dan.md, 2.5).

The paper picks the top-|V| most frequent 1-4-grams of the training set plus the
unlabeled distillation corpus with scikit-learn's CountVectorizer; we do the same, with
spaCy's tokens as the words so that training and inference see identical n-grams.

Rows are ordered by frequency (most frequent first) and the counts are kept with the
model, split into training-set and extra-corpus counts: post-hoc pruning (paper 4.2,
Fig. 5) keeps the rows that are most frequent by either estimate.
"""
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import srsly
from sklearn.feature_extraction.text import CountVectorizer
from spacy.tokens import Doc
from thinc.api import Model, deserialize_attr, serialize_attr


def doc_words(doc: Doc, lowercase: bool = True) -> List[str]:
    """The words n-grams are made of: the doc's non-space tokens, lowercased."""
    return [t.lower_ if lowercase else t.text for t in doc if not t.is_space]


def word_ngrams(words: Sequence[str], n_min: int, n_max: int) -> List[str]:
    """All n-grams of the words for n_min <= n <= n_max, joined by single spaces
    (the format of CountVectorizer's feature names)."""
    grams: List[str] = []
    for n in range(n_min, n_max + 1):
        grams.extend(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
    return grams


class NgramTable:
    """Maps n-grams to embedding rows; keeps their training and extra-corpus counts."""

    def __init__(
        self,
        ngrams: Sequence[str] = (),
        counts: Optional[numpy.ndarray] = None,
        ngram_range: Tuple[int, int] = (1, 4),
        lowercase: bool = True,
    ):
        self.ngrams = list(ngrams)
        self.counts = (
            numpy.zeros((len(self.ngrams), 2), dtype="int64")
            if counts is None
            else numpy.asarray(counts, dtype="int64").reshape(len(self.ngrams), 2)
        )
        self.ngram_range = (int(ngram_range[0]), int(ngram_range[1]))
        self.lowercase = lowercase
        self.index: Dict[str, int] = {g: i for i, g in enumerate(self.ngrams)}

    def __len__(self) -> int:
        return len(self.ngrams)

    @classmethod
    def build(
        cls,
        train_docs: Iterable[Doc],
        extra_docs: Iterable[Doc] = (),
        *,
        size: int,
        ngram_range: Tuple[int, int] = (1, 4),
        lowercase: bool = True,
    ) -> "NgramTable":
        """Count n-grams with CountVectorizer and keep the `size` most frequent.

        train_docs (Iterable[Doc]): The task's training docs.
        extra_docs (Iterable[Doc]): Unlabeled docs (the distillation corpus), streamed.
        size (int): |V|, the number of n-grams kept.
        RETURNS (NgramTable): Rows ordered by total count, most frequent first.
        """
        n_min, n_max = ngram_range
        n_train = 0

        def texts() -> Iterator[List[str]]:
            nonlocal n_train
            for doc in train_docs:
                n_train += 1
                yield doc_words(doc, lowercase)
            for doc in extra_docs:
                yield doc_words(doc, lowercase)

        vectorizer = CountVectorizer(
            analyzer=lambda words: word_ngrams(words, n_min, n_max),
            max_features=size,
            dtype=numpy.int64,
        )
        matrix = vectorizer.fit_transform(texts()).tocsc()
        names = vectorizer.get_feature_names_out()
        train_counts = numpy.asarray(matrix[:n_train].sum(axis=0)).ravel()
        extra_counts = numpy.asarray(matrix[n_train:].sum(axis=0)).ravel()
        total = train_counts + extra_counts
        # Most frequent first; ties by training count, then alphabetically (stable).
        order = numpy.lexsort((names, -train_counts, -total))
        counts = numpy.stack([train_counts[order], extra_counts[order]], axis=1)
        return cls([str(names[i]) for i in order], counts, ngram_range, lowercase)

    def doc_ids(self, doc: Doc) -> List[int]:
        words = doc_words(doc, self.lowercase)
        index = self.index
        grams = word_ngrams(words, *self.ngram_range)
        return [index[g] for g in grams if g in index]

    def batch_ids(self, docs: Sequence[Doc]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Flat row ids of all known n-grams of the docs, and each doc's offset into them
        (the input format of torch's EmbeddingBag). Unknown n-grams are skipped; a doc
        without a known n-gram gets an empty bag."""
        ids: List[int] = []
        offsets = numpy.zeros(len(docs), dtype="int64")
        for i, doc in enumerate(docs):
            offsets[i] = len(ids)
            ids.extend(self.doc_ids(doc))
        return numpy.asarray(ids, dtype="int64"), offsets

    def select(self, keep: int, by: str = "train") -> numpy.ndarray:
        """Rows of the `keep` most frequent n-grams, by training-set counts ("train",
        the paper's better estimate) or by all counts ("all"), in their current order."""
        keep = max(0, min(int(keep), len(self)))
        if by == "train":
            # Training count first, total count as tie-breaker.
            order = numpy.lexsort((-self.counts.sum(axis=1), -self.counts[:, 0]))
        elif by == "all":
            order = numpy.arange(len(self))
        else:
            raise ValueError(f"(greenkd-spacy) Unknown pruning order '{by}': use 'train' or 'all'.")
        return numpy.sort(order[:keep])

    def subset(self, rows: numpy.ndarray) -> "NgramTable":
        return NgramTable(
            [self.ngrams[i] for i in rows], self.counts[rows], self.ngram_range, self.lowercase
        )

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps(
            {
                "ngrams": self.ngrams,
                "counts": self.counts,
                "ngram_range": list(self.ngram_range),
                "lowercase": self.lowercase,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> "NgramTable":
        msg = srsly.msgpack_loads(data)
        return cls(msg["ngrams"], msg["counts"], tuple(msg["ngram_range"]), msg["lowercase"])


@serialize_attr.register(NgramTable)
def _serialize_table(_: NgramTable, value: NgramTable, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(NgramTable)
def _deserialize_table(_: NgramTable, value: bytes, name: str, model: Model) -> NgramTable:
    return NgramTable.from_bytes(value)
