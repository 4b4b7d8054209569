"""greenkd.SubwordHashEmbed.v1: spaCy's hash embeddings plus hashed character n-grams.

Why: spaCy's MultiHashEmbed sees a word through its NORM and two fixed affixes (the
first character, the last three). In an agglutinative language most word forms of a
small treebank are rare, and the part that carries the tag and the dependency label
(a case or tense ending, often four to six code points in Tamil) is neither affix;
making the suffix longer replaces a dense feature with a sparse one (docs/benchmarks.md:
five-character suffixes parsed Tamil-TTB worse). Here every character n-gram of the
word (fastText's subword units, Bojanowski et al. 2017: "<word>" with boundary marks,
n from min_n to max_n) gets a hashed row, and their mean is added to MultiHashEmbed's
output, so every ending length is seen at once and shared across the words that carry it.

Cost: a word's n-gram rows depend only on its NORM, so they are computed once per word
type (kept in a bounded cache) and each batch averages the rows of its distinct words
only, with numpy gathers and one scatter-add in the backward pass.
"""
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy
from murmurhash.mrmr import hash as murmur32
from spacy.attrs import NORM
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, deserialize_attr, serialize_attr, uniform_init
from thinc.types import Floats2d

from ..errors import Errors
from .word_dropout import build_word_dropout_embed

# A word type's rows are cached by its NORM id (about 0.5 kB a word); past this many
# types the cache starts afresh, so a service reading an open vocabulary stays bounded.
_CACHE_LIMIT = 100_000


class WordRowCache(dict):
    """NORM id -> that word's n-gram rows. Derived data: it is saved and pickled empty
    (the rows are recomputed from the strings on first use), so it never bloats a model
    file or the pickle nlp.pipe(n_process=...) sends to its workers."""

    def __reduce__(self):
        return (WordRowCache, ())


@serialize_attr.register(WordRowCache)
def _serialize_cache(_: WordRowCache, value: WordRowCache, name: str, model: Model) -> bytes:
    return b""


@deserialize_attr.register(WordRowCache)
def _deserialize_cache(_: WordRowCache, value: bytes, name: str, model: Model) -> WordRowCache:
    return WordRowCache()


@registry.architectures("greenkd.SubwordHashEmbed.v1")
def build_subword_hash_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    include_static_vectors: bool,
    subword_rows: int = 10000,
    min_n: int = 3,
    max_n: int = 5,
    word_dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """Build spaCy's MultiHashEmbed (the same four arguments) with the mean of the word's
    hashed character n-grams added to each token's vector.

    width (int): Output width, also the width of each n-gram row.
    attrs (List[Union[str, int]]): Token attributes of spaCy's hash embeddings.
    rows (List[int]): Rows of each of those tables.
    include_static_vectors (bool): Also read the pipeline's static vectors (spaCy's).
    subword_rows (int): Rows of the hashed n-gram table (0: plain MultiHashEmbed).
    min_n (int): Shortest n-gram, in characters, boundary marks included.
    max_n (int): Longest n-gram.
    word_dropout (float): While training, look a random share of the tokens' NORM up as
        one unknown word (greenkd.WordDropoutEmbed.v1); their n-grams stay visible, so
        the model learns to read a rare word from them. 0: off.
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of `width` per token.
    """
    # At word_dropout = 0 this is spaCy's MultiHashEmbed itself.
    words = build_word_dropout_embed(width, attrs, rows, include_static_vectors, word_dropout)
    if not subword_rows:
        return words
    return add_per_token(words, subword_embed(width, subword_rows, min_n, max_n))


def subword_embed(width: int, rows: int, min_n: int = 3, max_n: int = 5) -> Model[List[Doc], List[Floats2d]]:
    """The mean of a token's hashed character n-gram rows, by NORM.

    width (int): Width of each row.
    rows (int): Rows of the hashed table, >= 1.
    min_n (int): Shortest n-gram (>= 1).
    max_n (int): Longest n-gram (>= min_n).
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of `width` per token.
    """
    if rows < 1 or not 1 <= min_n <= max_n:
        raise ValueError(Errors.E050.format(rows=rows, min_n=min_n, max_n=max_n))
    return Model(
        "subword_embed",
        _subword_forward,
        init=_init_subword,
        params={"E": None},
        dims={"nO": width, "nV": rows},
        attrs={"min_n": min_n, "max_n": max_n, "cache": WordRowCache()},
    )


def word_ngram_rows(word: str, rows: int, min_n: int, max_n: int) -> numpy.ndarray:
    """The table rows of a word's character n-grams: every substring of "<word>" with
    min_n <= length <= max_n, hashed with MurmurHash3 (stable across processes and
    machines, so a saved model reads the rows it was trained with). A word too short to
    have one (only when min_n > len(word) + 2) uses the row of the whole "<word>"."""
    marked = f"<{word}>"
    grams = [marked[i : i + n] for n in range(min_n, max_n + 1) for i in range(len(marked) - n + 1)]
    if not grams:
        grams = [marked]
    return numpy.asarray([murmur32(gram) % rows for gram in grams], dtype="int32")


def _init_subword(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    width, rows = model.get_dim("nO"), model.get_dim("nV")
    model.set_param("E", uniform_init(model.ops, (rows, width)))
    return model


def _distinct_words(
    model: Model, docs: List[Doc], doc_lengths: List[int]
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The batch's tokens as indices into its distinct words, and those words' n-gram
    rows, flat with one length per word. RETURNS (token_word, flat_rows, lengths).

    The rows of a word type are memoized in the model's cache: a pure function of the
    word's string and the table's settings, so reading them again changes nothing a
    caller can observe, and the cache is never saved (WordRowCache)."""
    keys = numpy.concatenate([doc.to_array(NORM).reshape(-1) for doc in docs])
    distinct, first, token_word = numpy.unique(keys, return_index=True, return_inverse=True)
    cache: Dict[int, numpy.ndarray] = model.attrs["cache"]
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    rows, min_n, max_n = model.get_dim("nV"), model.attrs["min_n"], model.attrs["max_n"]
    # A new word's string is read from the vocab of a doc that holds it: a batch may mix
    # docs of different pipelines.
    doc_ends = numpy.cumsum(doc_lengths)
    per_word = []
    for key, position in zip(distinct.tolist(), first.tolist()):
        word_rows = cache.get(key)
        if word_rows is None:
            vocab = docs[int(numpy.searchsorted(doc_ends, position, side="right"))].vocab
            word_rows = cache[key] = word_ngram_rows(vocab.strings[key], rows, min_n, max_n)
        per_word.append(word_rows)
    flat = numpy.concatenate(per_word) if per_word else numpy.zeros((0,), "int32")
    lengths = numpy.asarray([len(r) for r in per_word], dtype="int32")
    return token_word.reshape(-1), flat, lengths


def _subword_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    E = model.get_param("E")
    width = model.get_dim("nO")
    doc_lengths = [len(doc) for doc in docs]
    if not sum(doc_lengths):
        return [ops.alloc2f(n, width) for n in doc_lengths], lambda dYs: []
    token_word, flat, lengths = (ops.asarray(a) for a in _distinct_words(model, docs, doc_lengths))
    word_vectors = ops.reduce_mean(E[flat], lengths)
    Ys = ops.unflatten(word_vectors[token_word], ops.asarray1i(doc_lengths))

    def backprop(dYs: List[Floats2d]) -> List[Doc]:
        d_tokens = ops.flatten([ops.asarray2f(dY) for dY in dYs])
        d_words = ops.alloc2f(len(lengths), width)
        ops.scatter_add(d_words, token_word, d_tokens)
        d_E = ops.alloc2f(*E.shape)
        ops.scatter_add(d_E, flat, ops.backprop_reduce_mean(d_words, lengths))
        model.inc_grad("E", d_E)
        return []

    return Ys, backprop


def add_per_token(
    first: Model[List[Doc], List[Floats2d]], second: Model[List[Doc], List[Floats2d]]
) -> Model[List[Doc], List[Floats2d]]:
    """Two embedders of the same width, their per-token vectors summed (thinc's `add`
    works on single arrays, these return one array per doc)."""
    return Model(
        "add_per_token",
        _add_forward,
        init=_init_add,
        layers=[first, second],
        dims={"nO": first.get_dim("nO") if first.has_dim("nO") else None},
    )


def _init_add(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    for layer in model.layers:
        layer.initialize(X=X)
    if not model.has_dim("nO"):
        model.set_dim("nO", model.layers[0].get_dim("nO"))
    return model


def _add_forward(model: Model, docs: List[Doc], is_train: bool):
    first, second = model.layers
    Y1, back1 = first(docs, is_train)
    Y2, back2 = second(docs, is_train)
    Ys = [a + b for a, b in zip(Y1, Y2)]

    def backprop(dYs: List[Floats2d]) -> List[Doc]:
        back1(dYs)
        back2(dYs)
        return []

    return Ys, backprop
