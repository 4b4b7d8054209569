"""greenkd.WordDropoutEmbed.v1: spaCy's hash embeddings with word dropout on NORM.

Why: in a treebank of a few hundred sentences most test words are rare or unseen, and
an unseen word's NORM rows are hash collisions: noise the model never learned to
distrust. Hiding a random share of the training tokens' words (Iyyer et al. 2015;
Kiperwasser and Goldberg 2016; Lample et al. 2016 for the same reason) makes the
encoder label a word from its affixes, shape and neighbours as well. The BiLSTM
encoder has this as `word_dropout` (greenkd.BiLSTMEncoder.v1); spaCy's MultiHashEmbed,
under the CNN default, has no such option, so this wraps it.

How: the hidden tokens' NORM ids are replaced by one reserved id before the lookup, so
they share one learned "unknown word" vector instead of a zero one, while their other
attributes (PREFIX, SUFFIX, SHAPE) are read as usual. Only in training; at prediction
time the model is spaCy's MultiHashEmbed, row for row and weight for weight.
"""
from typing import Callable, List, Tuple, Union

from spacy.attrs import NORM
from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.strings import get_string_id
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d, Ints2d

from ..errors import Errors

# The id a hidden word is looked up as: no token's NORM can hash to this string's id
# unless a text contains it verbatim.
UNKNOWN_WORD = "<greenkd-unknown-word>"


@registry.architectures("greenkd.WordDropoutEmbed.v1")
def build_word_dropout_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    include_static_vectors: bool,
    word_dropout: float = 0.2,
) -> Model[List[Doc], List[Floats2d]]:
    """Build spaCy's MultiHashEmbed (the same four arguments) whose NORM attribute is
    hidden for a random `word_dropout` share of the tokens while training.

    width (int): Output width (spaCy's).
    attrs (List[Union[str, int]]): Token attributes of the hash embeddings; must
        include NORM, the word that is dropped.
    rows (List[int]): Rows of each of those tables.
    include_static_vectors (bool): Must be false when word_dropout > 0: static vectors
        are a word's identity too, and this layer does not hide them.
    word_dropout (float): Probability, per training token, of looking its NORM up as
        the unknown word (0: spaCy's MultiHashEmbed). spaCy's [training] dropout does
        not change it.
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of `width` per token.
    """
    # spaCy accepts attribute names in any case or their integer ids.
    is_norm = [attr == NORM if isinstance(attr, int) else attr.upper() == "NORM" for attr in attrs]
    if not 0.0 <= word_dropout < 1.0 or (word_dropout and (not any(is_norm) or include_static_vectors)):
        raise ValueError(
            Errors.E051.format(rate=word_dropout, attrs=attrs, vectors=include_static_vectors)
        )
    embed = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    if not word_dropout:
        return embed
    extract, *rest = embed.layers
    if extract.name != "extract_features":
        # spaCy changed MultiHashEmbed's layout; fail loudly rather than drop the wrong thing.
        raise ValueError(Errors.E052.format(layers=[layer.name for layer in embed.layers]))
    model = chain(extract, id_dropout(word_dropout, is_norm.index(True)), *rest)
    model.set_dim("nO", width)
    model.name = "greenkd_word_dropout_embed"
    return model


def id_dropout(rate: float, column: int) -> Model[List[Ints2d], List[Ints2d]]:
    """While training, replace column `column` of a random `rate` share of the rows of
    each doc's feature array by UNKNOWN_WORD's id. The rate lives in
    attrs["word_dropout_rate"], so spaCy's [training] dropout leaves it alone."""
    return Model(
        "greenkd_id_dropout",
        _id_dropout_forward,
        attrs={"word_dropout_rate": rate, "column": column, "unknown_id": get_string_id(UNKNOWN_WORD)},
    )


def _id_dropout_forward(model: Model, Xs: List[Ints2d], is_train: bool) -> Tuple[List[Ints2d], Callable]:
    rate = model.attrs["word_dropout_rate"]
    if not is_train or not rate:
        return Xs, lambda dYs: dYs
    xp = model.ops.xp
    column = model.attrs["column"]
    unknown = model.attrs["unknown_id"]
    Ys = []
    for X in Xs:
        hide = xp.random.uniform(size=(X.shape[0],)) < rate
        if hide.any():
            X = X.copy()
            X[hide, column] = unknown
        Ys.append(X)
    # Ids carry no gradient; the lookup tables below get theirs from the hash layers.
    return Ys, lambda dYs: dYs
