"""thinc side of the LD-Net labeller: `greenkd.LDNetEncoder.v1` and `greenkd.CRFLabeller.v1`.

Docs are cut into chunks of at most ``max_length`` tokens (the same rule in the encoder
and the head), so time and memory stay linear in a doc's length and a padded batch is
never as wide as its longest document.

The encoder's torch module is built at initialize (or from the component's saved cfg
before loading weights), because its shape depends on the pretrained LM it is given:
its vocabulary, widths and, after pruning, which layers are left.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d

from .pytorch.crf import biluo_constraints
from .pytorch.dense_lm import DenseLM
from .pytorch.ldnet import CRFHead, LDNetEncoder
from .torch_bridge import flatten_list, module_of, sync_dropout, torch_wrapper

Chunk = Tuple[int, int, int]  # (doc index, start, end)
PAD, SPACE = 0, 1


def chunks_of(docs: Sequence[Doc], max_length: int) -> List[Chunk]:
    """Consecutive token ranges of at most max_length per doc; an empty doc has none."""
    return [(i, start, min(start + max_length, len(doc))) for i, doc in enumerate(docs) for start in range(0, len(doc), max_length)]


def build_lm(config: Dict[str, Any]) -> DenseLM:
    """A DenseLM of the shape an LM config describes (pruned layers left out)."""
    lm = DenseLM(
        vocab_size=len(config["vocab"]),
        embed_width=config["embed_width"],
        hidden_width=config["hidden_width"],
        depth=config["depth"],
        proj_width=config["proj_width"],
        cutoffs=config["cutoffs"],
        layer_dropout=config["layer_dropout"],
        dropout=config["dropout"],
    )
    kept = config.get("kept_layers")
    if kept is not None:
        lm.prune_layers(kept)
    return lm


@registry.architectures("greenkd.LDNetEncoder.v1")
def build_ldnet_encoder(
    word_width: int = 100,
    word_rows: int = 50000,
    char_width: int = 30,
    char_rows: int = 1000,
    char_hidden: int = 150,
    hidden_width: int = 150,
    dropout: float = 0.5,
    max_length: int = 256,
) -> Model[List[Doc], List[Floats2d]]:
    """LD-Net's token encoder (paper section 3): context-aware char LSTM + hashed word
    embeddings + (once a pretrained LM is given at initialize) the LM's contextual
    representation, then a word-level BiLSTM. Without an LM it is the NoLM baseline.

    word_width (int): Width of word embeddings (and of the projected char and LM parts).
    word_rows (int): Rows of the hashed word (NORM) table.
    char_width (int): Character embedding width (paper: 30).
    char_rows (int): Rows of the hashed character table.
    char_hidden (int): Hidden width of each character LSTM (paper: 150).
    hidden_width (int): Hidden width of each direction of the word BiLSTM (paper: 150).
    dropout (float): Dropout on the inputs and outputs of the LSTMs.
    max_length (int): Longest token chunk fed to the LSTMs at once.
    RETURNS (Model[List[Doc], List[Floats2d]]): One vector of width 2 * hidden_width per token.
    """
    model = Model(
        "greenkd_ldnet_encoder",
        encoder_forward,
        init=encoder_init,
        dims={"nO": 2 * hidden_width},
        attrs={
            "word_width": word_width,
            "word_rows": word_rows,
            "char_width": char_width,
            "char_rows": char_rows,
            "char_hidden": char_hidden,
            "hidden_width": hidden_width,
            "dropout_rate": dropout,
            "max_length": max_length,
            "lm_config": None,
        },
    )
    return model


def is_ldnet_encoder(model: Model) -> bool:
    return model.name == "greenkd_ldnet_encoder"


def ensure_encoder(model: Model, lm_config: Optional[Dict[str, Any]], lm_state: Optional[Dict] = None) -> None:
    """(Re)build the encoder's torch module for this LM config (None: NoLM); load the
    LM's pretrained weights when given."""
    attrs = model.attrs
    lm = build_lm(lm_config) if lm_config is not None else None
    if lm is not None:
        if lm_state is not None:
            lm.load_state_dict(lm_state, strict=False)
        lm.heads = torch.nn.ModuleDict()  # the labeller reads h_t; the word predictors stay behind
    module = LDNetEncoder(
        attrs["word_rows"], attrs["word_width"], attrs["char_rows"], attrs["char_width"],
        attrs["char_hidden"], attrs["hidden_width"], attrs["dropout_rate"], lm=lm,
    )
    wrapper = torch_wrapper(module, convert_inputs=_encoder_inputs, convert_outputs=_flat_outputs)
    wrapper.attrs["dropout_rate"] = attrs["dropout_rate"]
    wrapper.attrs["max_length"] = attrs["max_length"]
    # A plain attribute of the module (not a thinc attr), so it is not serialised twice:
    # the vocabulary is saved once, in the component's cfg.
    module.lm_index = {word: i for i, word in enumerate(lm_config["vocab"])} if lm_config else {}
    wrapper.attrs["word_rows"] = attrs["word_rows"]
    wrapper.attrs["char_rows"] = attrs["char_rows"]
    model.layers[:] = [wrapper]
    attrs["lm_config"] = lm_config


def encoder_module(model: Model) -> LDNetEncoder:
    return module_of(model.layers[0])


def encoder_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    if not model.layers:
        ensure_encoder(model, model.attrs["lm_config"])
    return model


def encoder_forward(model: Model, docs: List[Doc], is_train: bool):
    if not model.layers:
        ensure_encoder(model, model.attrs["lm_config"])
    return model.layers[0](docs, is_train)


def _encoder_inputs(model: Model, docs: List[Doc], is_train: bool):
    sync_dropout(model)
    chunks = chunks_of(docs, model.attrs["max_length"])
    index = module_of(model).lm_index
    word_rows, char_rows = model.attrs["word_rows"], model.attrs["char_rows"]
    lengths = [end - start for _, start, end in chunks]
    max_len = max(lengths, default=0)
    texts = [[t.text for t in docs[d][start:end]] for d, start, end in chunks]
    char_lengths = [sum(len(w) + 1 for w in words) + 1 for words in texts]
    max_chars = max(char_lengths, default=1)
    n = len(chunks)
    word_ids = numpy.zeros((n, max_len), dtype="int64")
    lm_ids = numpy.zeros((n, max_len), dtype="int64")
    fwd_pos = numpy.zeros((n, max_len), dtype="int64")
    bwd_pos = numpy.zeros((n, max_len), dtype="int64")
    char_ids = numpy.zeros((n, max_chars), dtype="int64")
    for row, ((d, start, end), words) in enumerate(zip(chunks, texts)):
        norms = [t.norm for t in docs[d][start:end]]
        word_ids[row, : len(norms)] = numpy.asarray(norms, dtype="uint64") % numpy.uint64(word_rows)
        lm_ids[row, : len(words)] = [index.get(w, 0) for w in words]
        # " w1 w2 ... wn ": the forward char LSTM is read at the space after a word,
        # the backward one at the space before it.
        pos = 0
        char_ids[row, 0] = SPACE
        for t, word in enumerate(words):
            bwd_pos[row, t] = pos
            codes = [ord(c) % (char_rows - 2) + 2 for c in word]
            char_ids[row, pos + 1 : pos + 1 + len(codes)] = codes
            pos += len(codes) + 1
            char_ids[row, pos] = SPACE
            fwd_pos[row, t] = pos
    args = tuple(
        torch.from_numpy(a)
        for a in (word_ids, char_ids, numpy.asarray(char_lengths, dtype="int64"), fwd_pos, bwd_pos, lm_ids, numpy.asarray(lengths, dtype="int64"))
    )

    def backprop(_: Any) -> List[Doc]:
        return docs

    return ArgsKwargs(args=args, kwargs={}), backprop


def _flat_outputs(model: Model, inputs_outputs: Tuple, is_train: bool):
    docs, Y_t = inputs_outputs
    lengths = [len(doc) for doc in docs]
    width = Y_t.shape[1]
    Y = model.ops.unflatten(torch2xp(Y_t), lengths) if sum(lengths) else [model.ops.alloc2f(0, width) for _ in lengths]

    def backprop(dY: List[Floats2d]) -> ArgsKwargs:
        d_flat = model.ops.flatten(dY) if sum(lengths) else model.ops.alloc2f(0, width)
        return ArgsKwargs(args=(Y_t,), kwargs={"grad_tensors": xp2torch(d_flat)})

    return Y, backprop


# ---------------------------------------------------------------------------- head


@registry.architectures("greenkd.CRFLabeller.v1")
def build_crf_labeller(
    tok2vec: Model[List[Doc], List[Floats2d]],
    dropout: float = 0.5,
    max_length: int = 256,
    nO: Optional[int] = None,
) -> Model:
    """A linear-chain CRF over BILUO tags on top of any token encoder: LD-Net's
    (greenkd.LDNetEncoder.v1), spaCy's Tok2Vec, a listener or a TransformerListener.

    dropout (float): Dropout on the token vectors before the emission layer.
    max_length (int): Longest token chunk decoded as one sequence.
    nO (Optional[int]): Number of tags; set by the component at initialize.
    """
    return Model(
        "greenkd_crf_labeller",
        head_forward,
        init=head_init,
        layers=[tok2vec],
        dims={"nI": None, "nO": nO},
        attrs={"dropout_rate": dropout, "max_length": max_length, "tags": None},
    )


def ensure_head(model: Model, n_in: int, tags: Sequence[str]) -> None:
    """Create the CRF head for this encoder width and tag set (unless it exists)."""
    tags = list(tags)
    if len(model.layers) > 1:
        if model.get_dim("nI") == n_in and model.attrs["tags"] == tags:
            return
        model.layers.pop()
    module = CRFHead(n_in, len(tags), biluo_constraints(tags), model.attrs["dropout_rate"])
    head = torch_wrapper(module, convert_inputs=_head_inputs, convert_outputs=_head_outputs)
    head.attrs["dropout_rate"] = model.attrs["dropout_rate"]
    head.attrs["max_length"] = model.attrs["max_length"]
    model.set_dim("nI", n_in, force=True)
    model.set_dim("nO", len(tags), force=True)
    model.attrs["tags"] = tags
    model.layers.append(head)


def encoder_width(model: Model, docs: Optional[List[Doc]] = None) -> int:
    tok2vec = model.layers[0]
    if tok2vec.has_dim("nO") and tok2vec.get_dim("nO"):
        return tok2vec.get_dim("nO")
    if docs:
        return tok2vec.predict(docs[:1])[0].shape[1]
    return model.get_dim("nI") if model.has_dim("nI") else 0


def head_init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    model.layers[0].initialize(X=X)
    if model.attrs["tags"]:
        ensure_head(model, encoder_width(model, X), model.attrs["tags"])
    return model


def head_module(model: Model) -> CRFHead:
    return module_of(model.layers[1])


def head_forward(model: Model, X: Tuple[List[Doc], Optional[Dict[str, Any]]], is_train: bool):
    """X: (docs, targets). Without gold or teacher targets: per doc (tag indices,
    marginals if targets is {"marginals": True}, else None). With them (see
    CRFHead.forward): the loss as a float, backprop takes d_loss."""
    docs, targets = X
    tok2vec, head = model.layers
    tokvecs, backprop_tok2vec = tok2vec(docs, is_train)
    output, backprop_head = head((docs, tokvecs, targets), is_train)

    def backprop(d_output: Any) -> List[Doc]:
        backprop_tok2vec(backprop_head(d_output))
        return docs

    return output, backprop


def _head_inputs(model: Model, X: Tuple, is_train: bool):
    docs, tokvecs, targets = X
    sync_dropout(model)
    chunks = chunks_of(docs, model.attrs["max_length"])
    flat_t, _, unflatten_grad = flatten_list(model, tokvecs, is_train)
    lengths = torch.tensor([end - start for _, start, end in chunks], dtype=torch.long)
    kwargs: Dict[str, Any] = {}
    if is_training_target(targets):
        kwargs = {k: v for k, v in targets.items() if k in ("temperature", "gold_weight", "normalize")}
        if targets.get("gold") is not None:
            gold, rows = pad_chunk_targets(docs, chunks, targets["gold"], targets["has_gold"])
            kwargs["gold"], kwargs["gold_rows"] = gold, rows
            if targets.get("doc_weights") is not None:
                # A doc's weight for each of its chunks.
                weights = targets["doc_weights"]
                kwargs["gold_row_weights"] = torch.tensor([float(weights[d]) for d, _, _ in chunks])
        if targets.get("teacher") is not None:
            kwargs["teacher"] = pad_chunk_marginals(chunks, targets["teacher"], int(lengths.max()) if len(chunks) else 0)
    elif targets:
        kwargs["marginals"] = bool(targets.get("marginals"))
    model.attrs["_chunks"] = chunks

    def backprop(d_inputs: ArgsKwargs) -> List[Floats2d]:
        return unflatten_grad(d_inputs.args[0])

    return ArgsKwargs(args=(flat_t, lengths), kwargs=kwargs), backprop


def is_training_target(targets: Optional[Dict[str, Any]]) -> bool:
    """Targets with gold tags or teacher marginals ask for a loss; {"marginals": bool}
    (or None) asks for a prediction."""
    return bool(targets) and (targets.get("gold") is not None or targets.get("teacher") is not None)


def pad_chunk_targets(docs, chunks: List[Chunk], gold: List[numpy.ndarray], has_gold: List[bool]):
    max_len = max((end - start for _, start, end in chunks), default=0)
    out = torch.zeros((len(chunks), max_len), dtype=torch.long)
    rows = torch.zeros(len(chunks), dtype=torch.bool)
    for row, (d, start, end) in enumerate(chunks):
        if has_gold[d]:
            out[row, : end - start] = torch.from_numpy(numpy.asarray(gold[d][start:end], dtype="int64"))
            rows[row] = True
    return out, rows


def pad_chunk_marginals(chunks: List[Chunk], teacher: List[numpy.ndarray], max_len: int) -> torch.Tensor:
    n_tags = teacher[0].shape[1] if teacher else 0
    out = torch.zeros((len(chunks), max_len, n_tags))
    for row, (d, start, end) in enumerate(chunks):
        out[row, : end - start] = torch.from_numpy(numpy.asarray(teacher[d][start:end], dtype="float32"))
    return out


def _head_outputs(model: Model, inputs_outputs: Tuple, is_train: bool):
    (docs, _, targets), result = inputs_outputs
    chunks = model.attrs.pop("_chunks")
    if is_training_target(targets):
        loss_t = result

        def backprop_loss(d_loss: float) -> ArgsKwargs:
            return ArgsKwargs(args=(loss_t,), kwargs={"grad_tensors": torch.tensor(float(d_loss))})

        return float(loss_t.detach()), backprop_loss
    paths, marginals = result
    # The chunks run through the docs in order, so the rows' tokens, read row by row,
    # are the batch's tokens in order: one mask and one split give every doc's tags.
    lengths = torch.tensor([end - start for _, start, end in chunks], dtype=torch.long)
    valid = torch.arange(paths.shape[1])[None, :] < lengths[:, None]
    bounds = numpy.cumsum([len(doc) for doc in docs])[:-1]
    tags = numpy.split(paths[valid].numpy(), bounds)
    probs = None
    if marginals is not None:
        probs = numpy.split(marginals[valid].detach().numpy().astype("float32", copy=False), bounds)

    def backprop(_: Any) -> ArgsKwargs:  # prediction only
        raise ValueError("(greenkd-spacy) The CRF labeller's predictions cannot be backpropagated; pass targets.")

    return (tags, probs), backprop
