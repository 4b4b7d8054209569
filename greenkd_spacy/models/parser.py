"""greenkd.BiaffineParser.v1: biaffine arc and label scoring over any token encoder."""
from typing import List, Optional, Sequence, Tuple

import numpy
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d, Floats3d

from ..decoding.mst import decode_batch
from ..errors import Errors
from ..types import ParserInput, ParserScores, Segment
from .pytorch.biaffine import BiaffineParserModule
from .torch_bridge import flatten_list, sync_dropout, torch_wrapper


def decode_trees(arc_logits: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Chu-Liu/Edmonds over a padded batch; called inside the module at inference."""
    heads = decode_batch(arc_logits.numpy(), lengths.tolist())
    return torch.from_numpy(heads)


@registry.architectures("greenkd.BiaffineParser.v1")
def build_biaffine_parser(
    tok2vec: Model[List[Doc], List[Floats2d]],
    arc_mlp_size: int = 500,
    label_mlp_size: int = 100,
    mlp_dropout: float = 0.33,
    nO: Optional[int] = None,
) -> Model[ParserInput, ParserScores]:
    """Build the biaffine parser of Dozat & Manning (2017) over a token encoder.

    tok2vec (Model[List[Doc], List[Floats2d]]): Any encoder with one vector per token:
        greenkd.BiLSTMEncoder.v1, spaCy's Tok2Vec, a Tok2VecListener or a
        spacy-transformers TransformerListener.
    arc_mlp_size (int): Width of the arc MLPs (dependent and head roles).
    label_mlp_size (int): Width of the label MLPs.
    mlp_dropout (float): Dropout after each MLP; [training] dropout overrides it.
    nO (Optional[int]): Number of labels; set by the component at initialize.
    RETURNS (Model[ParserInput, ParserScores]): The parser model. The torch head is
        created once the encoder width and the label count are known.
    """
    return Model(
        "greenkd_biaffine_parser",
        forward,
        init=init,
        layers=[tok2vec],
        dims={"nI": None, "nO": nO},
        attrs={
            "arc_mlp_size": arc_mlp_size,
            "label_mlp_size": label_mlp_size,
            "mlp_dropout": mlp_dropout,
        },
    )


def has_head(model: Model) -> bool:
    return len(model.layers) > 1


def ensure_head(model: Model, n_in: int, n_labels: int) -> None:
    """Create the torch head for these widths, unless one of that shape exists.

    The component calls this at initialize and, from its saved cfg, before loading
    weights, since thinc can only load weights into a model of the right shape.
    """
    if has_head(model):
        if model.get_dim("nI") == n_in and model.get_dim("nO") == n_labels:
            return
        model.layers.pop()
    module = BiaffineParserModule(
        n_in,
        model.attrs["arc_mlp_size"],
        model.attrs["label_mlp_size"],
        n_labels,
        model.attrs["mlp_dropout"],
        decoder=decode_trees,
    )
    head = torch_wrapper(
        module, convert_inputs=_head_inputs, convert_outputs=_head_outputs
    )
    head.attrs["dropout_rate"] = model.attrs["mlp_dropout"]
    head.set_dim("nI", n_in)
    head.set_dim("nO", n_labels)
    model.set_dim("nI", n_in, force=True)
    model.set_dim("nO", n_labels, force=True)
    model.layers.append(head)


def init(
    model: Model, X: Optional[ParserInput] = None, Y: Optional[ParserScores] = None
) -> Model:
    tok2vec = model.layers[0]
    docs = X.docs if X is not None else None
    tok2vec.initialize(X=docs)
    if tok2vec.has_dim("nO"):
        n_in = tok2vec.get_dim("nO")
    elif docs:
        n_in = tok2vec.predict(docs)[0].shape[1]
    else:
        n_in = model.get_dim("nI")
    ensure_head(model, n_in, model.get_dim("nO"))
    return model


def segment_index(
    docs: Sequence[Doc], segments: Sequence[Segment]
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Rows of the flattened token matrix for each padded segment position.

    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): index (S, L) with -1 on padding,
        and the segment lengths (S,).
    """
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    lengths = numpy.asarray([end - start for _, start, end in segments], dtype="int64")
    max_len = int(lengths.max()) if len(segments) else 0
    positions = numpy.arange(max_len)
    starts = numpy.asarray(
        [offsets[d] + start for d, start, _ in segments], dtype="int64"
    ).reshape(-1, 1)
    index = numpy.where(positions < lengths[:, None], starts + positions, -1)
    return index.astype("int64"), lengths


def forward(model: Model, X: ParserInput, is_train: bool):
    tok2vec, head = model.layers
    tokvecs, backprop_tok2vec = tok2vec(X.docs, is_train)
    if tokvecs and tokvecs[0].shape[1] != head.get_dim("nI"):
        raise ValueError(
            Errors.E002.format(
                name=model.name, got=tokvecs[0].shape[1], expected=head.get_dim("nI")
            )
        )
    index, lengths = segment_index(X.docs, X.segments)
    scores, backprop_head = head((tokvecs, index, X.heads, X.arc_scores), is_train)
    scores = ParserScores(*scores, lengths=lengths, segments=list(X.segments))

    def backprop(d_scores: Tuple[Floats3d, Floats3d]) -> List[Doc]:
        d_tokvecs = backprop_head(d_scores)
        backprop_tok2vec(d_tokvecs)
        return X.docs

    return scores, backprop


def _head_inputs(model: Model, X: Tuple, is_train: bool):
    tokvecs, index, heads, arc_scores = X
    sync_dropout(model)
    flat_t, _, unflatten_grad = flatten_list(model, tokvecs, is_train)
    heads_t = None if heads is None else torch.from_numpy(numpy.asarray(heads, dtype="int64"))
    args = (flat_t, torch.from_numpy(index), heads_t, arc_scores)

    def backprop(d_inputs: ArgsKwargs) -> List[Floats2d]:
        return unflatten_grad(d_inputs.args[0])

    return ArgsKwargs(args=args, kwargs={}), backprop


def _head_outputs(model: Model, inputs_outputs: Tuple, is_train: bool):
    _, (arc_t, label_t, heads_t) = inputs_outputs
    Y = (torch2xp(arc_t), torch2xp(label_t), heads_t.numpy())

    def backprop(dY: Tuple[Floats3d, Floats3d]) -> ArgsKwargs:
        d_arc, d_label = dY
        return ArgsKwargs(
            args=((arc_t, label_t),),
            kwargs={"grad_tensors": (xp2torch(d_arc), xp2torch(d_label))},
        )

    return Y, backprop
