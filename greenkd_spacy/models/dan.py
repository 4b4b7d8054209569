"""greenkd.DAN.v1 / v2: the sparse n-gram Deep Averaging Network as a thinc model, and
greenkd.NgramLinear.v1, the linear bag of n-grams (v2 without the DAN), greenkd_textcat's
default. greenkd.DAN.v3 and greenkd.NgramLinear.v2 also read the mean of the doc's
static word vectors (spaCy's `[initialize] vectors`); greenkd.NgramCNN.v1 is the linear
bag plus a convolution over the doc's word embeddings.

Input: docs; output: one row of class logits per doc. The n-gram vocabulary (an
NgramTable in attrs["ngrams"]) is built by the component at initialize from the training
corpus plus an optional unlabeled corpus, so the torch module is created only then, with
as many embedding rows as n-grams were kept.
"""
from typing import Dict, List, Optional, Tuple

import numpy
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d

from .ngrams import NgramTable, word_keys
from .pytorch.dan import POOLINGS, DANModule
from .pytorch.word_cnn import UNKNOWN_ROW, WordCNN
from .torch_bridge import sync_dropout, torch_wrapper
from .word_init import seed_from_vectors


@registry.architectures("greenkd.DAN.v1")
def build_dan(
    max_ngrams: int = 131072,
    ngram_size: int = 4,
    width: int = 48,
    hidden_width: int = 64,
    dropout: float = 0.0,
    lowercase: bool = True,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Build the paper's DAN: the mean of the embeddings of the doc's 1..ngram_size-grams.

    max_ngrams (int): |V|, rows of the embedding table (the paper: 1,000,000).
    ngram_size (int): Longest n-gram (the paper: 4).
    width (int): d_e, the embedding width (the paper: 1,000).
    hidden_width (int): Width of the first dense layer.
    dropout (float): Dropout on the pooled vector and the hidden layer; [training]
        dropout overrides it.
    lowercase (bool): Lowercase words before making n-grams.
    nO (Optional[int]): Number of classes; set by the component at initialize.
    RETURNS (Model[List[Doc], Floats2d]): Class logits, one row per doc.
    """
    return build_dan_v2(max_ngrams, ngram_size, width, hidden_width, dropout, lowercase, pooling="mean", nO=nO)


@registry.architectures("greenkd.DAN.v2")
def build_dan_v2(
    max_ngrams: int = 131072,
    ngram_size: int = 4,
    width: int = 48,
    hidden_width: int = 64,
    dropout: float = 0.0,
    lowercase: bool = True,
    pooling: str = "mean",
    ngram_dropout: float = 0.0,
    linear: bool = False,
    nO: Optional[int] = None,
    deep: bool = True,
    include_static_vectors: bool = False,
) -> Model[List[Doc], Floats2d]:
    """greenkd.DAN.v1 with a choice of pooling, n-gram dropout and an optional linear part.

    pooling (str): How the n-gram embeddings of a doc become one vector: "mean" (the
        paper, and v1), "sqrtn" (their sum over the square root of their number) or "sum".
    ngram_dropout (float): In training, each n-gram of a doc is left out of its bag with
        this probability (the word dropout of Iyyer et al.'s DAN), so that the classifier
        cannot lean on the few long n-grams it has memorised. Its own rate: spaCy's
        [training] dropout does not change it. 0 (v1): none.
    linear (bool): Add a linear bag of the same n-grams to the logits (one weight per
        n-gram and class, summed: the model of spaCy's BOW textcat) beside the DAN.
    deep (bool): Keep the DAN (embeddings, pooling, dense layers). false leaves the
        linear bag alone (needs linear = true; width, hidden_width, pooling and dropout
        are then unused): on SST-2, trained from scratch on its labelled phrases, the
        linear bag of 1-2-grams scored above every DAN and above spaCy's BOW
        (configs/defaults/textcat.cfg).
    Other arguments as greenkd.DAN.v1.
    """
    if not 0.0 <= ngram_dropout < 1.0:
        raise ValueError(
            f"(greenkd-spacy) greenkd.DAN.v2 got ngram_dropout = {ngram_dropout}: use a rate in [0, 1)."
        )
    if max_ngrams < 1 or ngram_size < 1 or width < 1 or hidden_width < 1:
        raise ValueError(
            "(greenkd-spacy) greenkd.DAN needs max_ngrams, ngram_size, width and "
            f"hidden_width >= 1, got {max_ngrams}, {ngram_size}, {width}, {hidden_width}."
        )
    if pooling not in POOLINGS:
        raise ValueError(
            f"(greenkd-spacy) greenkd.DAN.v2 got pooling = '{pooling}': use one of "
            f"{', '.join(repr(p) for p in POOLINGS)} in [components.*.model]."
        )
    if not deep and not linear:
        raise ValueError(
            "(greenkd-spacy) greenkd.DAN.v2 got deep = false and linear = false: nothing would be "
            "left of the model. Set linear = true in [components.*.model] (the linear bag alone), "
            "or deep = true."
        )
    return Model(
        "greenkd_dan",
        forward,
        init=init,
        dims={"nO": nO},
        attrs={
            "ngrams": NgramTable(ngram_range=(1, ngram_size), lowercase=lowercase),
            "max_ngrams": max_ngrams,
            "width": width,
            "hidden_width": hidden_width,
            "dropout_rate": dropout,
            "pooling": pooling,
            "ngram_dropout_rate": ngram_dropout,
            "linear": linear,
            "deep": deep,
            "include_static_vectors": include_static_vectors,
            # The static vectors' width, set at initialize from the pipeline's vectors.
            "vectors_width": 0,
        },
    )


@registry.architectures("greenkd.DAN.v3")
def build_dan_v3(
    max_ngrams: int = 131072,
    ngram_size: int = 4,
    width: int = 48,
    hidden_width: int = 64,
    dropout: float = 0.0,
    lowercase: bool = True,
    pooling: str = "mean",
    ngram_dropout: float = 0.0,
    linear: bool = False,
    include_static_vectors: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """greenkd.DAN.v2 that can also read the mean of the doc's static word vectors beside
    its pooled n-grams. An n-gram model knows only the words it saw in training and the
    transfer text; vectors trained on far more text (spaCy's en_core_web_md, or made from
    the teacher) tell it what an unseen word is like, at one table lookup per token.

    include_static_vectors (bool): Read the pipeline's static vectors (load them with
        [initialize] vectors = DIR, as for spaCy's tok2vec); each token's row is found by
        its text, else by its lowercase form.
    Other arguments as greenkd.DAN.v2.
    """
    return build_dan_v2(max_ngrams, ngram_size, width, hidden_width, dropout, lowercase, pooling, ngram_dropout,
                        linear, nO=nO, include_static_vectors=include_static_vectors)


@registry.architectures("greenkd.NgramLinear.v1")
def build_ngram_linear(
    max_ngrams: int = 131072,
    ngram_size: int = 2,
    ngram_dropout: float = 0.0,
    lowercase: bool = True,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """The linear bag of n-grams: one weight per n-gram and class, summed over the doc's
    n-grams, plus a bias per class (spaCy's BOW model, over our n-gram table and compiled
    featurization). greenkd_textcat's default model: trained from scratch it won on
    SST-2 and TREC (configs/defaults/textcat.cfg). The same model as greenkd.DAN.v2
    with deep = false, under a name of its own, so that a partial greenkd.DAN.v2 block
    given to the component is not filled in from this default.

    max_ngrams (int): Rows of the n-gram table.
    ngram_size (int): Longest n-gram.
    ngram_dropout (float): In training, each n-gram of a doc is left out with this
        probability (its own rate; [training] dropout does not change it).
    lowercase (bool): Lowercase words before making n-grams.
    nO (Optional[int]): Number of classes; set by the component at initialize.
    """
    return build_dan_v2(
        max_ngrams, ngram_size, lowercase=lowercase, pooling="sum", ngram_dropout=ngram_dropout,
        linear=True, deep=False, nO=nO,
    )


@registry.architectures("greenkd.NgramLinear.v2")
def build_ngram_linear_v2(
    max_ngrams: int = 131072,
    ngram_size: int = 2,
    ngram_dropout: float = 0.0,
    lowercase: bool = True,
    include_static_vectors: bool = False,
    dropout: float = 0.0,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """greenkd.NgramLinear.v1 that can also read the mean of the doc's static word
    vectors, through one dense layer added to the logits (see greenkd.DAN.v3 for why).

    include_static_vectors (bool): Read the pipeline's static vectors ([initialize]
        vectors = DIR).
    dropout (float): Dropout on the mean vector; [training] dropout overrides it.
    Other arguments as greenkd.NgramLinear.v1.
    """
    return build_dan_v2(
        max_ngrams, ngram_size, dropout=dropout, lowercase=lowercase, pooling="sum", ngram_dropout=ngram_dropout,
        linear=True, deep=False, nO=nO, include_static_vectors=include_static_vectors,
    )


@registry.architectures("greenkd.NgramCNN.v1")
def build_ngram_cnn(
    max_ngrams: int = 131072,
    ngram_size: int = 2,
    ngram_dropout: float = 0.0,
    lowercase: bool = True,
    word_width: int = 64,
    conv_width: int = 128,
    window: int = 1,
    dropout: float = 0.0,
    words_from_vectors: bool = False,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """greenkd.NgramLinear.v1 plus a convolution over the doc's word embeddings,
    max-pooled into logits added to the bag's. A bag of n-grams cannot tell which word a
    negation or a question word governs beyond its n-grams; the convolution reads every
    window of 2 * window + 1 words with one set of weights, so what it learns of one
    phrase carries to others of similar words. Its words are the n-gram table's unigrams
    (a word outside the table shares one row).

    word_width (int): Width of the word embeddings.
    conv_width (int): Filters of the convolution (the pooled vector's width).
    window (int): Words either side of each position the convolution reads.
    dropout (float): Dropout on the word embeddings and the pooled vector; [training]
        dropout overrides it.
    words_from_vectors (bool): At initialize, start each word's embedding from the
        pipeline's static vectors ([initialize] vectors = DIR), reduced to word_width
        (models/word_init.py); the vectors are not read after that.
    Other arguments as greenkd.NgramLinear.v1.
    """
    if word_width < 1 or conv_width < 1 or window < 0:
        raise ValueError(
            "(greenkd-spacy) greenkd.NgramCNN.v1 needs word_width >= 1, conv_width >= 1 and window >= 0, "
            f"got {word_width}, {conv_width}, {window}: fix them in [components.*.model]."
        )
    model = build_dan_v2(
        max_ngrams, ngram_size, dropout=dropout, lowercase=lowercase, pooling="sum", ngram_dropout=ngram_dropout,
        linear=True, deep=False, nO=nO,
    )
    model.attrs.update({
        "word_width": word_width, "conv_width": conv_width, "window": window, "n_words": 0,
        "words_from_vectors": words_from_vectors,
    })
    return model


def ensure_dan(
    model: Model, n_rows: int, n_classes: int, vectors_width: Optional[int] = None, n_words: Optional[int] = None
) -> None:
    """Create the torch module for this table size, class count, static vectors width
    and CNN vocabulary size (defaults: the model's; the CNN's, the table's unigrams),
    unless one of that shape exists (thinc loads weights only into a model of the right
    shape)."""
    if vectors_width is not None:
        model.attrs["vectors_width"] = vectors_width
    vectors_width = model.attrs.get("vectors_width", 0)
    conv_width = model.attrs.get("conv_width", 0)
    if conv_width:
        model.attrs["n_words"] = model.attrs["ngrams"].n_words() if n_words is None else n_words
    if model.layers:
        module = model.layers[0].shims[0]._model
        if (
            module.n_rows == max(1, n_rows)
            and module.n_classes == n_classes
            and module.vectors_width == vectors_width
            and (module.cnn.n_words if module.cnn is not None else None) == (model.attrs["n_words"] if conv_width else None)
        ):
            return
        model.layers.pop()
    cnn = None
    if conv_width:
        cnn = WordCNN(
            model.attrs["n_words"], model.attrs["word_width"], conv_width, model.attrs["window"], n_classes,
            model.attrs["dropout_rate"],
        )
    module = DANModule(
        n_rows,
        model.attrs["width"],
        model.attrs["hidden_width"],
        n_classes,
        model.attrs["dropout_rate"],
        model.attrs.get("pooling", "mean"),
        model.attrs.get("linear", False),
        model.attrs.get("deep", True),
        vectors_width,
        cnn,
    )
    layer = torch_wrapper(module, convert_inputs=_inputs, convert_outputs=_outputs)
    layer.attrs["dropout_rate"] = model.attrs["dropout_rate"]
    model.layers.append(layer)
    model.set_dim("nO", n_classes, force=True)


def dan_module(model: Model) -> DANModule:
    if not model.layers:
        raise ValueError(
            "(greenkd-spacy) The DAN has no weights yet: initialize the component "
            "(nlp.initialize() or `spacy train`) before using it."
        )
    return model.layers[0].shims[0]._model


def init(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Floats2d] = None) -> Model:
    if model.has_dim("nO") is not True and Y is not None:
        model.set_dim("nO", Y.shape[1])
    width = 0
    if model.attrs.get("include_static_vectors"):
        width = _word_vectors(X, "include_static_vectors").shape[1]
    ensure_dan(model, len(model.attrs["ngrams"]), model.get_dim("nO"), width)
    if model.attrs.get("words_from_vectors"):
        seed_from_vectors(dan_module(model).cnn.embed, model.attrs["ngrams"], _word_vectors(X, "words_from_vectors"))
    return model


def _word_vectors(X: Optional[List[Doc]], setting: str):
    """The pipeline's static vectors, for the model setting that reads them; an error
    saying how to load them where there are none, or none by word."""
    vectors = X[0].vocab.vectors if X else None
    if vectors is None or vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise ValueError(
            f"(greenkd-spacy) The text classifier's model has {setting} = true, but the "
            "pipeline has no vectors: load them with [initialize] vectors = DIR (a spaCy pipeline or "
            f"vectors directory, e.g. --paths.vectors en_core_web_md), or set {setting} = false."
        )
    if getattr(vectors, "mode", "default") != "default":
        raise ValueError(
            f"(greenkd-spacy) The text classifier reads static vectors by word, but the pipeline's vectors "
            f"are in '{vectors.mode}' mode (subword hashes, no word table): load vectors in spaCy's "
            f"default mode (e.g. en_core_web_md's) in [initialize] vectors, or set {setting} = false."
        )
    return vectors


# Per model (thinc's model id): the vectors table it last read and that table's keys,
# sorted, with their rows. Not in model.attrs, which are serialized with the model.
_VECTOR_INDEX: Dict[int, Tuple] = {}


def mean_vectors(model: Model, docs: List[Doc]) -> numpy.ndarray:
    """(n_docs, width) mean of the static vectors of each doc's tokens that have one,
    looked up by text, else by lowercase form (zeros for a doc with none). The keys are
    matched against a sorted copy of the table's keys, made once per table: one numpy
    search for the whole batch instead of a dict lookup per token."""
    vectors = docs[0].vocab.vectors
    index = _VECTOR_INDEX.get(model.id)
    # A key can be added to an existing row without the table changing shape: count keys too.
    if index is None or index[0] is not vectors or index[1] != (vectors.shape, len(vectors.key2row)):
        keys = numpy.fromiter(vectors.key2row.keys(), dtype="uint64", count=len(vectors.key2row))
        rows = numpy.fromiter(vectors.key2row.values(), dtype="int64", count=len(vectors.key2row))
        order = numpy.argsort(keys)
        index = (vectors, (vectors.shape, len(keys)), keys[order], rows[order])
        _VECTOR_INDEX[model.id] = index
    _, _, sorted_keys, sorted_rows = index
    n_docs, width = len(docs), model.attrs["vectors_width"]
    lengths = numpy.array([len(doc) for doc in docs], dtype="int64")
    if not lengths.sum() or not len(sorted_keys):
        return numpy.zeros((n_docs, width), dtype="float32")
    tokens = word_keys(docs)
    rows = _find(tokens[:, 0], sorted_keys, sorted_rows)
    missing = rows < 0
    rows[missing] = _find(tokens[missing, 1], sorted_keys, sorted_rows)
    table = torch.as_tensor(numpy.asarray(vectors.data, dtype="float32"))
    doc_of = numpy.repeat(numpy.arange(n_docs), lengths)
    found = rows >= 0
    counts = numpy.bincount(doc_of[found], minlength=n_docs)
    offsets = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]]).astype("int64")
    means = torch.nn.functional.embedding_bag(
        torch.from_numpy(rows[found]), table, torch.from_numpy(offsets), mode="mean"
    )
    return means.numpy()


def _find(keys: numpy.ndarray, sorted_keys: numpy.ndarray, sorted_rows: numpy.ndarray) -> numpy.ndarray:
    """The vectors row of each key, -1 where the table has none."""
    if not len(keys):
        return numpy.zeros(0, dtype="int64")
    at = numpy.minimum(numpy.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return numpy.where(sorted_keys[at] == keys, sorted_rows[at], -1)


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Floats2d, callable]:
    dan_module(model)
    layer = model.layers[0]
    ids, offsets = model.attrs["ngrams"].batch_ids(docs)
    rate = model.attrs.get("ngram_dropout_rate", 0.0)
    if is_train and rate > 0 and len(ids):
        ids, offsets = drop_ngrams(ids, offsets, rate)
    vectors = mean_vectors(model, docs) if model.attrs.get("vectors_width") else None
    words = word_sequence(model.attrs["ngrams"], docs, model.attrs["window"]) if model.attrs.get("conv_width") else None
    logits, backprop_layer = layer((ids, offsets, vectors, words), is_train)

    def backprop(d_logits: Floats2d) -> List[Doc]:
        backprop_layer(d_logits)
        return docs

    return logits, backprop


def word_sequence(
    table: NgramTable, docs: List[Doc], window: int
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The CNN's input (WordCNN.forward): the docs' word rows in one sequence, `window`
    gap rows before, between and after them; the convolution output index of each
    word; and its doc. A word is found by its unigram's key in the n-gram table."""
    keys = word_keys(docs)[:, 1 if table.lowercase else 0]
    lengths = numpy.array([len(doc) for doc in docs], dtype="int64")
    rows = table.key_index().lookup(keys) if len(keys) and len(table) else numpy.full(len(keys), -1)
    rows = numpy.asarray(rows, dtype="int64")
    words = numpy.full(len(keys), UNKNOWN_ROW, dtype="int64")
    found = rows >= 0
    words[found] = table.word_rows()[rows[found]]
    doc_of = numpy.repeat(numpy.arange(len(docs), dtype="int64"), lengths)
    at = numpy.arange(len(keys), dtype="int64") + window * (doc_of + 1)
    sequence = numpy.zeros(len(keys) + window * (len(docs) + 1), dtype="int64")  # 0: the gap row
    sequence[at] = words
    return sequence, at - window, doc_of


def drop_ngrams(ids: numpy.ndarray, offsets: numpy.ndarray, rate: float) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Leave each n-gram out of its doc's bag with probability `rate` (numpy's global
    generator, which spaCy seeds); a doc may end with an empty bag."""
    counts = numpy.diff(numpy.append(offsets, len(ids)))
    doc_of = numpy.repeat(numpy.arange(len(offsets)), counts)
    keep = numpy.random.random(len(ids)) >= rate
    kept = numpy.bincount(doc_of[keep], minlength=len(offsets))
    return ids[keep], numpy.concatenate([[0], numpy.cumsum(kept)[:-1]]).astype("int64")


def _inputs(model: Model, X: Tuple[numpy.ndarray, numpy.ndarray, Optional[numpy.ndarray]], is_train: bool):
    sync_dropout(model)
    ids, offsets, vectors, words = X
    args = (torch.from_numpy(ids), torch.from_numpy(offsets))
    kwargs = {}
    if vectors is not None:
        kwargs["vectors"] = torch.from_numpy(vectors)
    if words is not None:
        kwargs["words"] = tuple(torch.from_numpy(part) for part in words)
    return ArgsKwargs(args=args, kwargs=kwargs), lambda d_inputs: X


def _outputs(model: Model, inputs_outputs: Tuple, is_train: bool):
    _, logits_t = inputs_outputs

    def backprop(d_logits: Floats2d) -> ArgsKwargs:
        return ArgsKwargs(args=(logits_t,), kwargs={"grad_tensors": xp2torch(d_logits)})

    return torch2xp(logits_t), backprop
