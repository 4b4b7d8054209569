"""The teacher's encoder output as a target for the student's shared encoder.

A student's heads learn the teacher's distributions over tags, heads and labels: a few
numbers per token. The teacher's encoder says far more per token (384 numbers for
MiniLM-L6) about what the heads read. With `[distillation] hidden_weight` > 0 the
student's shared `tok2vec` also learns to predict that vector for each token: a linear
map of its output (trained with it, not saved: inference is unchanged) is pulled
towards the teacher's vector by a cosine loss, summed over tokens as spaCy's tagger
sums its loss, and weighted by `hidden_weight` against the heads' losses.

What the teacher pass caches per doc is each token's encoder vector (a transformer's
word pieces averaged per token, a tok2vec's doc.tensor) times a fixed random
orthonormal matrix down to `hidden_dims` columns: cosines between such projections stay
close to the originals' (Johnson-Lindenstrauss), no fit over the corpus is needed before
the pass, and 1.4M tokens at 128 float16 columns take 360 MB instead of a gigabyte.
"""
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import Tok2Vec
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam, Linear, Model, Optimizer, set_dropout_rate

from ..errors import Errors
from .contract import DistillableMixin
from .static_vectors import ENCODER_FACTORIES, token_vectors
from .targets import CachedTeacher, doc_key

HIDDEN_KIND = "hidden_states"
# The learned map's own optimizer: it is not part of the student, so the loop's
# optimizer (which steps the student's pipes) never sees it.
PROJECTION_LEARN_RATE = 0.001


@dataclass(frozen=True)
class HiddenSettings:
    """[distillation] hidden_weight and hidden_dims, and the projection's seed: fixed,
    not the run's, so runs of several seeds read one teacher cache."""

    weight: float
    dims: int
    seed: int = 0


@lru_cache(maxsize=8)
def projection_matrix(width: int, dims: int, seed: int) -> numpy.ndarray:
    """(width, min(width, dims)) with orthonormal columns, the same for a seed and width
    in every process (the teacher pass may run on Ray workers). Made once per process:
    its QR cost more than the transformer's pass over a short doc."""
    rng = numpy.random.default_rng(seed)
    q, _ = numpy.linalg.qr(rng.normal(size=(width, min(width, dims))))
    return q.astype("float32")


def encode_hidden(docs: List[Doc], teacher_docs: List[Doc], dims: int, seed: int) -> Dict[str, Dict]:
    """One record per (student) doc: its tokens' teacher vectors, projected, float16."""
    records = {}
    for doc, teacher_doc in zip(docs, teacher_docs):
        vectors = token_vectors(teacher_doc)
        projected = vectors @ projection_matrix(vectors.shape[1], dims, seed) if len(vectors) else numpy.zeros((0, dims), "float32")
        records[doc_key(doc)] = {"hidden": projected.astype("float16")}
    return records


def decode_hidden(teacher: CachedTeacher, docs: List[Doc]) -> List[numpy.ndarray]:
    return [numpy.asarray(teacher.record(doc)["hidden"], dtype="float32") for doc in docs]


def cosine_loss(predicted: numpy.ndarray, target: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
    """Sum over rows of 1 - cos(predicted, target), and its gradient with respect to
    `predicted`. A row whose target is zero (a token the teacher gave no vector, e.g. a
    space without word pieces) adds nothing."""
    p_norm = numpy.linalg.norm(predicted, axis=1, keepdims=True)
    t_norm = numpy.linalg.norm(target, axis=1, keepdims=True)
    live = (t_norm[:, 0] > 0) & (p_norm[:, 0] > 0)
    p_hat = predicted / numpy.maximum(p_norm, 1e-12)
    t_hat = target / numpy.maximum(t_norm, 1e-12)
    cos = (p_hat * t_hat).sum(axis=1)
    loss = float((1.0 - cos)[live].sum())
    grad = -(t_hat - cos[:, None] * p_hat) / numpy.maximum(p_norm, 1e-12)
    grad[~live] = 0.0
    return loss, grad.astype("float32")


class HiddenStateAdapter(DistillableMixin):
    """spaCy's `tok2vec`, shared by the student's heads, learning its teacher encoder's
    per-token output beside what its listeners teach it.

    The loop hands it each batch before the listening heads (pipeline order): it runs
    the encoder, adds hidden_weight x the cosine loss's gradient to the gradient its
    listeners will send, and passes its output to them as spaCy's Tok2Vec.update does,
    so the encoder still runs once per batch."""

    reads_teacher_output = True

    def __init__(self, pipe: Tok2Vec, settings: HiddenSettings):
        self.pipe = pipe
        self.name = pipe.name
        self.cfg = pipe.cfg
        self.hidden = settings
        self.projection: Optional[Model] = None
        self._optimizer: Optional[Optimizer] = None

    @property
    def labels(self) -> Tuple[str, ...]:
        return ()

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        ok = type(teacher_pipe) is Tok2Vec or type(teacher_pipe).__name__ == "Transformer"
        self.require_teacher_kind(teacher_pipe, ok, "tok2vec or transformer (the teacher's encoder)")

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        return {}

    def check_labels(self, teacher_pipe: Any) -> None:
        return None

    def teacher_settings(self) -> Dict[str, Any]:
        return {"kind": HIDDEN_KIND, "dims": self.hidden.dims, "seed": self.hidden.seed}

    def teacher_records(self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int) -> Dict[str, Dict]:
        return encode_hidden([eg.predicted for eg in examples], teacher_docs, self.hidden.dims, self.hidden.seed)

    def _targets(self, teacher_pipe: Any, docs: List[Doc]) -> List[numpy.ndarray]:
        if isinstance(teacher_pipe, CachedTeacher):
            return decode_hidden(teacher_pipe, docs)
        # A live teacher encoder (the first component of its pipeline) over copies.
        teacher_docs = list(teacher_pipe.pipe([doc.copy() for doc in docs]))
        records = encode_hidden(docs, teacher_docs, self.hidden.dims, self.hidden.seed)
        return [numpy.asarray(record["hidden"], dtype="float32") for record in records.values()]

    def _project(self, tokvecs: List[Any], targets: List[numpy.ndarray]) -> Tuple[float, List[numpy.ndarray]]:
        """The cosine loss of the learned map of the encoder's output against the
        targets; steps the map; RETURNS the loss and its gradient at the encoder's
        output."""
        ops = self.pipe.model.ops
        X = ops.to_numpy(ops.flatten(tokvecs)) if tokvecs else numpy.zeros((0, 0), "float32")
        T = numpy.concatenate(targets) if targets else numpy.zeros((0, self.hidden.dims), "float32")
        if X.shape[0] != T.shape[0]:
            raise ValueError(Errors.E077.format(tokens=X.shape[0], targets=T.shape[0]))
        if self.projection is None:
            self.projection = Linear(nO=T.shape[1], nI=X.shape[1])
            self.projection.initialize(X=ops.asarray2f(X[:2]))
            self._optimizer = Adam(PROJECTION_LEARN_RATE)
        Y, backprop = self.projection.begin_update(ops.asarray2f(X))
        loss, d_Y = cosine_loss(ops.to_numpy(Y), T)
        d_X = ops.to_numpy(backprop(ops.asarray2f(d_Y)))
        self.projection.finish_update(self._optimizer)
        lengths = [len(t) for t in tokvecs]
        return loss, numpy.split(d_X, numpy.cumsum(lengths)[:-1])

    def distill(
        self,
        teacher_pipe: Any,
        examples: Any,
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        examples, losses = self.begin_distill(examples, losses)
        docs = [eg.predicted for eg in examples]
        tok2vec = self.pipe
        ops = tok2vec.model.ops
        set_dropout_rate(tok2vec.model, drop)
        tokvecs, bp_tokvecs = tok2vec.model.begin_update(docs)
        loss, d_hidden = self._project(tokvecs, self._targets(teacher_pipe, docs))
        losses[self.name] += self.hidden.weight * loss
        d_tokvecs = [ops.asarray2f(self.hidden.weight * d) for d in d_hidden]

        # From here as spaCy's Tok2Vec.update: each listener adds its gradient, the last
        # one's triggers the encoder's backward pass.
        def accumulate_gradient(one_d_tokvecs: List[Any]) -> List[Any]:
            for i, d in enumerate(one_d_tokvecs):
                d_tokvecs[i] += d
            return [ops.alloc2f(*t.shape) for t in tokvecs]

        def backprop(one_d_tokvecs: List[Any]) -> Any:
            accumulate_gradient(one_d_tokvecs)
            d_docs = bp_tokvecs(d_tokvecs)
            if sgd is not None:
                tok2vec.finish_update(sgd)
            return d_docs

        listeners = tok2vec.listeners
        batch_id = listeners[0].get_batch_id(docs) if listeners else None
        for listener in listeners[:-1]:
            listener.receive(batch_id, tokvecs, accumulate_gradient)
        if listeners:
            listeners[-1].receive(batch_id, tokvecs, backprop)
        else:
            backprop([ops.alloc2f(*t.shape) for t in tokvecs])
        return losses


def hidden_state_pair(student: Language, teacher: Language, D: Dict[str, Any]) -> Optional[Tuple[str, HiddenStateAdapter, Any]]:
    """(student encoder name, its adapter, the teacher's encoder) when [distillation]
    hidden_weight > 0, else None. The student's encoder: `hidden_encoder`, or its one
    `tok2vec` that components listen to; the teacher's: `student_to_teacher` for that
    name, or its first transformer or tok2vec."""
    if not D.get("hidden_weight"):
        return None
    name = D.get("hidden_encoder")
    if name is None:
        shared = [n for n, proc in student.pipeline if isinstance(proc, Tok2Vec) and proc.listening_components]
        if len(shared) != 1:
            raise ValueError(Errors.E078.format(found=shared, pipes=student.pipe_names))
        name = shared[0]
    if name not in student.pipe_names or not isinstance(student.get_pipe(name), Tok2Vec):
        raise ValueError(Errors.E078.format(found=[name], pipes=student.pipe_names))
    teacher_name = D.get("student_to_teacher", {}).get(name)
    if teacher_name is None:
        encoders = [n for n in teacher.pipe_names if teacher.get_pipe_meta(n).factory in ENCODER_FACTORIES]
        if not encoders:
            raise ValueError(Errors.E079.format(pipes=teacher.pipe_names))
        teacher_name = encoders[0]
    if teacher_name not in teacher.pipe_names:
        raise ValueError(Errors.E015.format(teacher=teacher_name, student=name, available=teacher.pipe_names))
    settings = HiddenSettings(float(D["hidden_weight"]), int(D["hidden_dims"]))
    return name, HiddenStateAdapter(student.get_pipe(name), settings), teacher.get_pipe(teacher_name)


def adapter_from_settings(pipe: Any, settings: Dict[str, Any], weight: float = 1.0) -> Optional[HiddenStateAdapter]:
    """In a teacher-pass worker: the adapter that made records of these settings (only
    `teacher_records` is called there, so the weight does not matter)."""
    if settings.get("kind") != HIDDEN_KIND:
        return None
    return HiddenStateAdapter(pipe, HiddenSettings(weight, int(settings["dims"]), int(settings["seed"])))
