"""The n-gram vocabulary of the DAN text classifier (sparse-distillation-dan.md, 2.5).

The paper picks the top-|V| most frequent 1-4-grams of the training set plus the
unlabeled distillation corpus with scikit-learn's CountVectorizer; we do the same, with
spaCy's tokens as the words so that training and inference see identical n-grams.

Rows are ordered by frequency (most frequent first) and the counts are kept with the
model, split into training-set and extra-corpus counts: post-hoc pruning (paper 4.2,
Fig. 5) keeps the rows that are most frequent by either estimate.

At inference the n-gram strings are never built: each n-gram is a 64-bit key mixed from
spaCy's hashes of its words (the LOWER or ORTH attribute the doc already holds), and the
keys of a whole batch are looked up at once in a numpy hash table (`KeyIndex`). Building
strings token by token made n-gram lookup 95 % of the DAN's prediction time, slower than
spaCy's own bag-of-words textcat; the string path (`doc_ids`) stays as the definition the
fast path is tested against. The batch's keys are made and looked up in compiled code
(`_ngram_rows.pyx`, reading each doc's token array), with the numpy version
(`batch_ids_numpy`) as its reference: numpy needs one `Doc.to_array` call per doc,
which on short texts costs more than everything else the featurization does.
"""
import warnings
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.attrs import IS_SPACE, LOWER, ORTH
from spacy.strings import get_string_id
from spacy.tokens import Doc
from thinc.api import Model, deserialize_attr, serialize_attr

try:
    from ._ngram_rows import batch_rows as _compiled_batch_rows
    from ._ngram_rows import batch_word_keys as _compiled_word_keys
except ImportError:  # a source tree on sys.path without `pip install` (nothing built)
    _compiled_batch_rows = _compiled_word_keys = None


def word_keys(docs: Sequence[Doc]) -> numpy.ndarray:
    """(total tokens, 2) uint64 ORTH and LOWER ids of the docs' tokens, one doc after
    another: compiled where built, else one `Doc.to_array` per doc (same array)."""
    if _compiled_word_keys is not None:
        return _compiled_word_keys(list(docs))
    arrays = [doc.to_array([ORTH, LOWER]).reshape(-1, 2) for doc in docs]
    if not arrays:
        return numpy.zeros((0, 2), dtype="uint64")
    return numpy.concatenate(arrays).astype("uint64")


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


# Odd 64-bit multiplier (the golden-ratio constant) that mixes word hashes into n-gram keys.
_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def ngram_key(words: Sequence[str]) -> int:
    """The 64-bit key of an n-gram: k = h(w1), then k = k * MIX + h(w) per next word,
    modulo 2**64, where h is spaCy's string id (what Token.lower / Token.orth hold: the
    string's hash, or a small symbol id for strings such as "cc" that are spaCy symbols)."""
    key = 0
    for i, word in enumerate(words):
        key = get_string_id(word) if i == 0 else (key * _MIX + get_string_id(word)) & _MASK
    return key


class KeyIndex:
    """uint64 key -> row, as a numpy open-addressing hash table with linear probing.

    Keys are already well-mixed hashes, so their low bits pick the slot. A batch of
    queries is answered in a few vectorised probe rounds: about one random memory access
    per query where a binary search (numpy.searchsorted, the first version) needed ~18,
    which made it the largest cost of a DAN prediction. The first probe, which answers
    most queries, runs over the whole batch without index bookkeeping (half the time of
    treating it as one more round); rows are int32 to halve that array's cache traffic.
    """

    def __init__(self, keys: numpy.ndarray):
        keys = numpy.asarray(keys, dtype="uint64")
        size = 1 << max(4, (2 * len(keys)).bit_length())  # load factor <= 0.5
        self.mask = numpy.uint64(size - 1)
        self.keys = numpy.zeros(size, dtype="uint64")
        self.rows = numpy.full(size, -1, dtype="int32")
        pending = numpy.arange(len(keys))
        slots = (keys & self.mask).astype("int64")
        while pending.size:  # insert in rounds; colliding keys move to the next slot
            free = self.rows[slots] < 0
            # Among keys that want the same free slot, the first (lowest row) takes it.
            _, first = numpy.unique(slots[free], return_index=True)
            placed = numpy.flatnonzero(free)[first]
            self.keys[slots[placed]] = keys[pending[placed]]
            self.rows[slots[placed]] = pending[placed]
            waiting = numpy.ones(pending.size, dtype=bool)
            waiting[placed] = False
            pending, slots = pending[waiting], (slots[waiting] + 1) & (size - 1)

    def lookup(self, queries: numpy.ndarray) -> numpy.ndarray:
        """The row of each query key, or -1 where the key is not in the table."""
        queries = numpy.asarray(queries, dtype="uint64")
        size_mask = len(self.rows) - 1
        slots = (queries & self.mask).astype("int64")
        rows = self.rows[slots]
        occupied = rows >= 0
        found = occupied & (self.keys[slots] == queries)
        result = numpy.where(found, rows, -1).astype("int64")
        active = numpy.flatnonzero(occupied & ~found)  # another key there: probe on
        slots = (slots[active] + 1) & size_mask
        while active.size:
            rows = self.rows[slots]
            occupied = rows >= 0
            found = occupied & (self.keys[slots] == queries[active])
            result[active[found]] = rows[found]
            going_on = occupied & ~found
            active, slots = active[going_on], (slots[going_on] + 1) & size_mask
        return result


_warned = False


def _warn_not_compiled() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "(greenkd-spacy) The compiled n-gram featurization (greenkd_spacy.models."
            "_ngram_rows) is not built, so greenkd_textcat featurizes in numpy: same "
            "results, slower on short texts. Install the package (`pip install -e .` in a "
            "checkout) to build it.",
            stacklevel=3,
        )


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
        if not 1 <= self.ngram_range[0] <= self.ngram_range[1]:
            raise ValueError(
                f"(greenkd-spacy) An n-gram range needs 1 <= shortest <= longest, got "
                f"{self.ngram_range}: set ngram_size (greenkd.DAN) to 1 or more."
            )
        self.lowercase = lowercase
        self.index: Dict[str, int] = {g: i for i, g in enumerate(self.ngrams)}
        self._key_index: Optional[KeyIndex] = None
        self._word_rows: Optional[numpy.ndarray] = None

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

        # Imported here: scikit-learn costs about a second at import, and every `python -m
        # spacy` command (which loads our factories) would pay it for a table built once.
        from sklearn.feature_extraction.text import CountVectorizer

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

    def key_index(self) -> "KeyIndex":
        """The n-gram keys in an open-addressing hash table (built on first use: about
        a second for a million n-grams)."""
        if self._key_index is None:
            keys = numpy.fromiter((ngram_key(g.split(" ")) for g in self.ngrams), dtype="uint64", count=len(self.ngrams))
            self._key_index = KeyIndex(keys)
        return self._key_index

    def word_rows(self) -> numpy.ndarray:
        """Per n-gram row, its row in a word table (greenkd.NgramCNN.v1): the table's
        unigrams in row order from `first`, every longer n-gram `unknown`. Made on first
        use and kept, as the key index."""
        if self._word_rows is None:
            from .pytorch.word_cnn import FIRST_WORD_ROW, UNKNOWN_ROW

            is_word = numpy.fromiter((" " not in g for g in self.ngrams), dtype=bool, count=len(self.ngrams))
            rows = numpy.full(len(self.ngrams), UNKNOWN_ROW, dtype="int64")
            rows[is_word] = FIRST_WORD_ROW + numpy.arange(int(is_word.sum()))
            self._word_rows = rows
        return self._word_rows

    def n_words(self) -> int:
        """How many of the n-grams are single words."""
        return sum(" " not in g for g in self.ngrams)

    def batch_ids(self, docs: Sequence[Doc]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Flat row ids of all known n-grams of the docs, and each doc's offset into them
        (the input format of torch's EmbeddingBag). Unknown n-grams are skipped; a doc
        without a known n-gram gets an empty bag. Same ids, in the same order, as
        `doc_ids` per doc (n-grams by length, then by position)."""
        if _compiled_batch_rows is None:
            _warn_not_compiled()
            return self.batch_ids_numpy(docs)
        index = self.key_index()
        n_min, n_max = self.ngram_range
        return _compiled_batch_rows(list(docs), self.lowercase, n_min, n_max, index.keys, index.rows)

    def batch_ids_numpy(self, docs: Sequence[Doc]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """`batch_ids` in numpy: the reference of the compiled version, and its stand-in
        where greenkd-spacy runs from a source tree that was never built."""
        n_docs = len(docs)
        attr = LOWER if self.lowercase else ORTH
        if n_docs == 0 or len(self) == 0 or not any(len(doc) for doc in docs):
            return numpy.zeros(0, dtype="int64"), numpy.zeros(n_docs, dtype="int64")
        # One filter over the whole batch: per-doc numpy calls cost more than the work.
        tokens = numpy.concatenate([doc.to_array([attr, IS_SPACE]) for doc in docs])  # (n, 2) each
        token_doc = numpy.repeat(numpy.arange(n_docs), [len(doc) for doc in docs])
        is_word = tokens[:, 1] == 0
        flat = tokens[is_word, 0]
        doc_of = token_doc[is_word]
        lengths = numpy.bincount(doc_of, minlength=n_docs)
        total = len(flat)
        if total == 0:
            return numpy.zeros(0, dtype="int64"), numpy.zeros(n_docs, dtype="int64")
        room = numpy.repeat(numpy.cumsum(lengths), lengths) - numpy.arange(total)  # words left in the doc
        n_min, n_max = self.ngram_range
        keys, owners = [], []
        hashes = flat
        with numpy.errstate(over="ignore"):
            for n in range(1, n_max + 1):
                if n > 1:  # hashes[i] becomes the key of the n-gram starting at word i
                    if total - n + 1 <= 0:
                        break
                    hashes = hashes[: total - n + 1] * numpy.uint64(_MIX) + flat[n - 1 :]
                if n >= n_min:
                    fits = room[: len(hashes)] >= n
                    keys.append(hashes[fits])
                    owners.append(doc_of[: len(hashes)][fits])
        all_keys = numpy.concatenate(keys)
        all_owners = numpy.concatenate(owners)
        rows = self.key_index().lookup(all_keys)
        hit = rows >= 0
        ids = rows[hit]
        owner = all_owners[hit]
        order = numpy.argsort(owner, kind="stable")  # group by doc, keep length-then-position order
        counts = numpy.bincount(owner, minlength=n_docs)
        offsets = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]]).astype("int64")
        return ids[order], offsets

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
        table = cls(msg["ngrams"], msg["counts"], tuple(msg["ngram_range"]), msg["lowercase"])
        table.key_index()  # pay for the lookup table at load time, not on the first request
        return table


@serialize_attr.register(NgramTable)
def _serialize_table(_: NgramTable, value: NgramTable, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(NgramTable)
def _deserialize_table(_: NgramTable, value: bytes, name: str, model: Model) -> NgramTable:
    return NgramTable.from_bytes(value)
