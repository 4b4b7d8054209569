"""spaCy's own components under the distillation contract, without new factories.

A student or teacher pipeline made with spaCy's `tagger` is distilled as it is: the
loop asks `distillable(pipe)` for the object that speaks the contract (contract.py) —
the pipe itself for greenkd components, an adapter chosen by the pipe's class for
spaCy's — so the user names no new factory and the saved student is an ordinary spaCy
pipeline. The adapter follows spaCy v4's `Tagger.distill` /
`get_teacher_student_loss`: the teacher's per-token tag distribution is the target and
the gradient is the student's distribution minus the teacher's, summed like spaCy's
own tagger loss (normalize=False), so the tagger's usual learning rates carry over.

Covered so far: `tagger` and `senter` teaching and learning soft targets (per-token class
probabilities; codec: targets.encode/decode_tag_marginals); spaCy's `ner` and `parser`
teaching and learning silver targets (the teacher's predicted entities / trees;
targets.encode/decode_silver). Other kinds are the open part of issue 21.
"""
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.pipeline import DependencyParser, EntityRecognizer, SentenceRecognizer, Tagger
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Optimizer, set_dropout_rate

from .contract import DistillableMixin, kl_divergence
from .targets import CachedTeacher, decode_silver, decode_tag_marginals, encode_silver, encode_tag_marginals


class SpacyPipeAdapter(DistillableMixin):
    """What every adapter shares: the wrapped spaCy pipe, whose name, cfg (where the
    loop puts temperature and gold weight) and labels it answers with."""

    def __init__(self, pipe: Any):
        self.pipe = pipe
        self.name = pipe.name
        self.cfg = pipe.cfg

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.pipe.labels)


class TaggerAdapter(SpacyPipeAdapter):
    """spaCy's softmax taggers — `tagger` and `senter` — each as a teacher of, and a
    student of, a component of its own class. (The morphologizer is not yet: its label
    data, keys like "POS=NOUN|Number=Sing", cannot go through a config, and it refuses
    to initialize from raw text without labels.)"""

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        kind = type(self.pipe).__name__
        self.require_teacher_kind(teacher_pipe, type(teacher_pipe) is type(self.pipe), f"{kind} (spaCy's)")

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        """The teacher's labels, in the teacher's order: its distributions are indexed by
        position. A senter's two labels are fixed."""
        data = teacher_pipe.label_data
        if data is None:
            return {}
        return {"labels": list(data) if isinstance(data, tuple) else data}

    def teacher_settings(self) -> Dict[str, Any]:
        return {"kind": "tag_distributions", "component": type(self.pipe).__name__}

    def teacher_records(self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int) -> Dict[str, Dict]:
        """The teacher tagger's per-token class probabilities, one record per doc."""
        return encode_tag_marginals([eg.predicted for eg in examples], self._teacher_probs(teacher_pipe, teacher_docs))

    @staticmethod
    def _teacher_probs(teacher_pipe: Any, docs: List[Doc]) -> List[numpy.ndarray]:
        if isinstance(teacher_pipe, CachedTeacher):
            return decode_tag_marginals(teacher_pipe, docs)
        if not any(len(doc) for doc in docs):
            return [numpy.zeros((len(doc), len(teacher_pipe.labels)), dtype="float32") for doc in docs]
        return [teacher_pipe.model.ops.to_numpy(s) for s in teacher_pipe.model.predict(docs)]

    def distill(
        self,
        teacher_pipe: Any,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        examples, losses = self.begin_distill(examples, losses)
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        teacher = self._teacher_probs(teacher_pipe, [eg.reference for eg in examples])
        set_dropout_rate(self.pipe.model, drop)
        scores, backprop = self.pipe.model.begin_update(docs)
        loss, d_scores = self.get_teacher_student_loss(teacher, scores)
        backprop(d_scores)
        if sgd is not None:
            self.pipe.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_teacher_student_loss(
        self, teacher_scores: Sequence[numpy.ndarray], student_scores: Sequence[Any]
    ) -> Tuple[float, List[Any]]:
        """T^2 x summed KL(teacher_T || student_T) over tokens, and its gradient at the
        softmax's input, T x (student_T - teacher_T) per token (spaCy's tagger loss
        hands its softmax the same form, student - gold): the contract's kl_divergence
        on log-probabilities, summed over a doc's tokens (normalize=False, as spaCy's
        tagger) instead of averaged."""
        ops = self.pipe.model.ops
        loss, grads = 0.0, []
        for p, q in zip(teacher_scores, student_scores):
            q_np = ops.to_numpy(q)
            p_np = numpy.asarray(p, dtype="float32").reshape(q_np.shape)
            n = q_np.shape[0]
            doc_loss, grad = kl_divergence(
                numpy.log(numpy.clip(p_np, 1e-8, 1.0)),
                numpy.log(numpy.clip(q_np, 1e-8, 1.0)),
                numpy.ones(n, dtype=bool),
                self.temperature,
            )
            loss += doc_loss * n
            grads.append(ops.asarray2f(grad * n))
        return loss, grads


class SilverAdapter(SpacyPipeAdapter):
    """spaCy's transition-based `ner` and `parser` learning from a teacher of the same
    kind through their own `update`, with the teacher's predicted annotation as the
    reference ("silver" targets): the transition system has no per-token distribution
    to match, and spaCy's users distil a transformer NER into the CNN pipeline exactly
    so, treating its output as gold."""

    def __init__(self, pipe: Any):
        super().__init__(pipe)
        self.kind = "ents" if isinstance(pipe, EntityRecognizer) else "deps"

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        expected = "ner (spaCy's)" if self.kind == "ents" else "parser (spaCy's)"
        self.require_teacher_kind(teacher_pipe, type(teacher_pipe) is type(self.pipe), expected)

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        # The transition system's label data has integer keys, which a config cannot
        # hold: the labels are set in initialize_from_teacher instead.
        return {}

    def initialize_from_teacher(self, teacher_pipe: Any, get_examples: Any, nlp: Any) -> None:
        """Initialize again with the teacher's actions and labels (its label_data, as
        `spacy init labels` writes them), so a student that sees only raw text knows
        every label the teacher can give."""
        self.pipe.initialize(get_examples, nlp=nlp, labels=teacher_pipe.label_data)

    def teacher_settings(self) -> Dict[str, Any]:
        return {"kind": f"silver_{self.kind}"}

    def teacher_records(self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int) -> Dict[str, Dict]:
        annotated = list(teacher_pipe.pipe(teacher_docs))
        return encode_silver([eg.predicted for eg in examples], annotated, self.kind)

    def distill(
        self,
        teacher_pipe: Any,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        examples, losses = self.begin_distill(examples, losses)
        docs = [eg.predicted for eg in examples]
        if isinstance(teacher_pipe, CachedTeacher):
            silver = decode_silver(teacher_pipe, docs, self.kind)
        else:
            silver = list(teacher_pipe.pipe([eg.reference.copy() for eg in examples]))
        self.pipe.update([Example(doc, ref) for doc, ref in zip(docs, silver)], drop=drop, sgd=sgd, losses=losses)
        return losses


ADAPTERS = {
    Tagger: TaggerAdapter,
    SentenceRecognizer: TaggerAdapter,
    EntityRecognizer: SilverAdapter,
    DependencyParser: SilverAdapter,
}


def distillable(pipe: Any) -> Optional[Any]:
    """What speaks the distillation contract for a pipe: itself (greenkd components),
    an adapter (spaCy's own components, by exact class), or None (not distillable)."""
    if getattr(pipe, "is_distillable", False):
        return pipe
    adapter = ADAPTERS.get(type(pipe))
    return adapter(pipe) if adapter is not None else None
