"""greenkd.BiLSTMEncoder.v1: the encoder of the biaffine parser paper.

Hashed word embeddings (NORM), affix embeddings (PREFIX, SUFFIX), an optional word-shape
embedding (SHAPE: capitalisation and digits, which NORM lowercases away; for NER), an
optional UPOS embedding, optional static vectors and an optional mean of the word's
hashed character n-grams (subwords.subword_embed: a vector for a word met in no
training text) are concatenated and fed to a stacked BiLSTM. Optional word dropout (Lample et al. 2016) hides a token's word
embedding during training, so the model learns to label unseen words from their
affixes, shape and context: a hashed row of a word never seen in training is noise.
Every width is a config value, so the 20/40/60/80 % students are one override away.
Defaults follow Table 7 of the paper (100-d words and POS, 3 x 400 BiLSTM, dropout 0.33).
"""
from typing import List

from spacy.attrs import NORM, POS, PREFIX, SHAPE, SUFFIX
from spacy.ml.featureextractor import FeatureExtractor
from spacy.ml.staticvectors import StaticVectors
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import (
    Dropout,
    HashEmbed,
    Model,
    chain,
    concatenate,
    list2ragged,
    ragged2list,
    with_array,
)
from thinc.types import Floats2d

from .pytorch.bilstm import StackedBiLSTM
from .subwords import subword_embed
from .torch_bridge import flat_to_list_outputs, list_to_flat_inputs, torch_wrapper


@registry.architectures("greenkd.BiLSTMEncoder.v1")
def build_bilstm_encoder(
    word_width: int = 100,
    word_rows: int = 20000,
    affix_width: int = 50,
    affix_rows: int = 5000,
    pos_width: int = 100,
    include_static_vectors: bool = False,
    hidden_width: int = 400,
    depth: int = 3,
    dropout: float = 0.33,
    shape_width: int = 0,
    shape_rows: int = 1000,
    word_dropout: float = 0.0,
    subword_width: int = 0,
    subword_rows: int = 20000,
) -> Model[List[Doc], List[Floats2d]]:
    """Build the paper's token encoder: embeddings -> stacked BiLSTM.

    word_width (int): Width of the hashed NORM embedding.
    word_rows (int): Rows of the hashed NORM table.
    affix_width (int): Width of each of the PREFIX and SUFFIX embeddings (0 to disable).
    affix_rows (int): Rows of each affix table.
    pos_width (int): Width of the UPOS embedding (0 to disable). UPOS comes from the doc:
        gold (paper setting, see greenkd.Corpus.v1) or from an earlier tagger.
    include_static_vectors (bool): Also use the pipeline's static vectors, projected to
        word_width; the vectors must be loaded in [initialize] vectors.
    hidden_width (int): Hidden width of each LSTM direction; the output is twice this.
    depth (int): Number of stacked BiLSTM layers.
    dropout (float): Dropout on embeddings and between LSTM layers; spaCy's
        [training] dropout overrides it during training, as for its own layers.
    shape_width (int): Width of the word-shape (SHAPE) embedding (0 to disable, the
        paper's setting).
    shape_rows (int): Rows of the shape table.
    word_dropout (float): Probability of zeroing a token's word (NORM) embedding during
        training (0: off, the paper's setting). Not overridden by [training] dropout.
    subword_width (int): Width of the mean of the word's hashed character 3- to
        5-gram rows (0 to disable, the paper's setting): unseen words get a vector
        from their spelling, where a hashed NORM row of theirs is noise.
    subword_rows (int): Rows of the character n-gram table.
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of width 2 * hidden_width per token.
    """
    if not 0.0 <= word_dropout < 1.0:
        raise ValueError(
            f"(greenkd-spacy) greenkd.BiLSTMEncoder.v1: word_dropout must be in [0, 1), got {word_dropout}."
        )
    attrs = [NORM]
    word_embed: Model = HashEmbed(word_width, word_rows, column=0, seed=11)
    if word_dropout:
        word_embed = chain(word_embed, row_dropout(word_dropout, word_width))
    embeds = [word_embed]
    if affix_width:
        attrs += [PREFIX, SUFFIX]
        embeds += [
            HashEmbed(affix_width, affix_rows, column=1, seed=12),
            HashEmbed(affix_width, affix_rows, column=2, seed=13),
        ]
    if shape_width:
        embeds.append(HashEmbed(shape_width, shape_rows, column=len(attrs), seed=15))
        attrs.append(SHAPE)
    if pos_width:
        embeds.append(HashEmbed(pos_width, 64, column=len(attrs), seed=14))
        attrs.append(POS)
    width = word_width + (2 * affix_width if affix_width else 0) + shape_width + pos_width
    embed = chain(
        FeatureExtractor(attrs), list2ragged(), with_array(concatenate(*embeds))
    )
    if include_static_vectors:
        embed = concatenate(embed, StaticVectors(nO=word_width, dropout=0.0))
        width += word_width
    if subword_width:
        embed = concatenate(embed, chain(subword_embed(subword_width, subword_rows), list2ragged()))
        width += subword_width
    lstm = bilstm_layer(width, hidden_width, depth, dropout)
    model: Model[List[Doc], List[Floats2d]] = chain(
        embed, with_array(Dropout(dropout)), ragged2list(), lstm
    )
    model.set_dim("nO", 2 * hidden_width)
    model.name = "greenkd_bilstm_encoder"
    # Read by the parser, which warns when the docs it gets carry no POS (W003).
    model.attrs["reads_pos"] = bool(pos_width)
    return model


@registry.architectures("greenkd.BiLSTMContext.v1")
def build_bilstm_context(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.33,
    window: int = 0,
) -> Model[List[Doc], List[Floats2d]]:
    """A stacked BiLSTM over another token encoder's output (e.g. a listener of spaCy's
    CNN tok2vec), so one component reads sentence-wide context while the others
    sharing that tok2vec keep its local features: a tagger does well on a CNN's
    affix-driven windows, a biaffine parser needs the long-range context a window
    encoder lacks.

    tok2vec (Model[List[Doc], List[Floats2d]]): The encoder below; its width (nO)
        must be known when the model is built, as a Tok2VecListener's is.
    hidden_width (int): Hidden width of each LSTM direction; the output is twice this.
    depth (int): Number of stacked BiLSTM layers.
    dropout (float): Dropout between LSTM layers (overridden by [training] dropout).
    window (int): Read docs longer than this as overlapping windows of this many tokens
        (each token from a window giving it a quarter window of context on both sides);
        0 reads whole docs. On CPU an LSTM batch costs as many time steps as its
        longest doc: with multi-paragraph texts, 128 makes training steps several
        times cheaper.
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of width 2 * hidden_width per token.
    """
    if not tok2vec.has_dim("nO") or tok2vec.get_dim("nO") is None:
        raise ValueError(
            "(greenkd-spacy) greenkd.BiLSTMContext.v1: the tok2vec below has no output "
            "width yet; give it one (a spacy.Tok2VecListener.v1 block needs `width`, "
            "equal to the upstream tok2vec's width)."
        )
    width = tok2vec.get_dim("nO")
    if window < 0 or 0 < window < 4:
        raise ValueError(
            f"(greenkd-spacy) greenkd.BiLSTMContext.v1: window = {window}; give 0 (whole docs) "
            "or a window of 4 tokens or more (e.g. 128)."
        )
    lstm = bilstm_layer(width, hidden_width, depth, dropout, window)
    model: Model[List[Doc], List[Floats2d]] = chain(tok2vec, lstm)
    model.set_dim("nO", 2 * hidden_width)
    model.name = "greenkd_bilstm_context"
    model.attrs["reads_pos"] = bool(tok2vec.attrs.get("reads_pos", False))
    return model


def bilstm_layer(
    width: int, hidden_width: int, depth: int, dropout: float, window: int = 0
) -> Model[List[Floats2d], List[Floats2d]]:
    """The stacked BiLSTM as a thinc layer over one (n_tokens, width) array per doc;
    its dropout follows spaCy's [training] dropout (torch_bridge.sync_dropout)."""
    lstm = torch_wrapper(
        StackedBiLSTM(width, hidden_width, depth, dropout, window),
        convert_inputs=list_to_flat_inputs,
        convert_outputs=flat_to_list_outputs,
    )
    lstm.attrs["dropout_rate"] = dropout
    lstm.set_dim("nI", width)
    lstm.set_dim("nO", 2 * hidden_width)
    return lstm


def row_dropout(rate: float, width: int) -> Model[Floats2d, Floats2d]:
    """Zero whole rows (tokens) with probability `rate` while training, unscaled: the
    word embedding is missing, as for an unseen word, not amplified elsewhere. Its rate
    lives in attrs["word_dropout_rate"], so spaCy's [training] dropout leaves it alone."""
    return Model(
        "greenkd_word_dropout", _row_dropout_forward, dims={"nI": width, "nO": width}, attrs={"word_dropout_rate": rate}
    )


def _row_dropout_forward(model: Model, X: Floats2d, is_train: bool):
    rate = model.attrs["word_dropout_rate"]
    if not is_train or not rate or X.shape[0] == 0:
        return X, lambda dY: dY
    keep = model.ops.xp.asarray(model.ops.xp.random.uniform(size=(X.shape[0], 1)) >= rate, dtype=X.dtype)
    return X * keep, lambda dY: dY * keep
