"""The distillation contract every greenkd component follows.

Names and argument order are those of spaCy's v4 development line
(`TrainablePipe.distill`, `get_teacher_student_loss`, `is_distillable`), so code
written against it carries over. What the papers need on top: a temperature applied to
both distributions (the loss is scaled by T^2 so its gradient does not shrink with T),
and a gold cross-entropy term added where the corpus has gold annotation.
"""
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.training import Example

from ..errors import Errors


def log_softmax(logits: numpy.ndarray, axis: int = -1) -> numpy.ndarray:
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=axis, keepdims=True))


def kl_divergence(
    teacher_logprobs: numpy.ndarray,
    student_logits: numpy.ndarray,
    mask: numpy.ndarray,
    temperature: float = 1.0,
) -> Tuple[float, numpy.ndarray]:
    """T^2 * KL(teacher_T || student_T), averaged over the positions in mask.

    teacher_logprobs (numpy.ndarray): (..., C) teacher log-probabilities at T = 1; -inf
        (or very negative) where the teacher gives no mass (e.g. outside its top-k).
    student_logits (numpy.ndarray): (..., C) student logits.
    mask (numpy.ndarray): (...) bool, positions that count.
    temperature (float): T, applied to both sides.
    RETURNS (Tuple[float, numpy.ndarray]): The loss and its gradient with respect to the
        student logits, T * (q_T - p_T) / n.
    """
    n = int(mask.sum())
    if n == 0:
        return 0.0, numpy.zeros_like(student_logits)
    p_log = log_softmax(teacher_logprobs / temperature)
    q_log = log_softmax(student_logits / temperature)
    p = numpy.exp(p_log)
    terms = numpy.where(p > 0, p * (p_log - q_log), 0.0)
    kl = terms.sum(axis=-1)
    loss = float((temperature**2) * kl[mask].sum() / n)
    grad = temperature * (numpy.exp(q_log) - p) * mask[..., None] / n
    return loss, grad.astype(student_logits.dtype)


class DistillableMixin:
    """The component side of distillation, the same for every greenkd component.

    What a component implements (the loop calls nothing else, and names no component):
    - `check_teacher_kind(teacher_pipe)`: stop before the teacher pass if that teacher
      cannot teach this student (E010);
    - `teacher_settings()`: what, besides teacher and corpus, shapes the cached targets
      (part of the cache fingerprint);
    - `teacher_records(teacher_pipe, teacher_docs, examples, top_k)`: the teacher's
      targets for a batch, encoded by the codec of this component's kind (targets.py);
    - `distill(teacher_pipe, examples, *, drop, sgd, losses)` with spaCy v4's name and
      arguments; `teacher_pipe` is a live teacher component or the loop's
      `CachedTeacher`. Where the loss is on the component's own scores (parser,
      textcat) it is v4's `get_teacher_student_loss(teacher_scores, student_scores)`;
      the labeller's KL on tag marginals is differentiated through its CRF in `distill`.
    Shared here: the temperature and gold weight the loop copies into cfg from
    [distillation], the label check and the initialize settings taken from the teacher.
    """

    name: str
    cfg: dict
    # The annotation this component writes that spaCy's component of the same task can
    # learn as silver targets ("ents", "deps", "spans"; adapters.SilverAdapter), so a
    # greenkd teacher also teaches spaCy's ner, parser or spancat. None: no such student.
    silver_kind: Optional[str] = None
    # Whether initialize must read the whole distillation corpus: the DAN builds its
    # n-gram vocabulary from it. Every other student takes its labels from the teacher
    # and initializes from a sample (loop.INIT_SAMPLE), since each spaCy component's
    # initialize reads all it is given (validate_get_examples) and a streamed corpus of
    # a million texts was tokenized again for every component.
    init_needs_corpus: bool = False
    # Whether this component weighs gold docs by copies in its batch (spaCy's silver
    # students: their `update` takes no per-doc weight). Behind a shared encoder the
    # loop makes the copies for the whole group (copies.py).
    takes_gold_by_copies: bool = False

    @property
    def is_distillable(self) -> bool:
        return True

    @property
    def temperature(self) -> float:
        return float(self.cfg.get("distill_temperature", 1.0))

    @property
    def gold_weight(self) -> float:
        """[distillation] gold_weight; 1 where the loop already put that many copies of
        each gold doc in the batch (copies.py), so a copy is not weighted twice."""
        weight = float(self.cfg.get("distill_gold_weight", 1.0))
        if weight > 0 and self.cfg.get("distill_gold_copies"):
            return 1.0
        return weight

    def check_settings(self) -> None:
        """After the loop has put [distillation]'s temperature and gold weight into cfg,
        before the teacher pass: raise if this component cannot honour them."""

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        """[initialize.components.NAME] settings the student takes from its teacher: its
        labels, in the teacher's order (cached distributions are indexed by position)."""
        return {"labels": list(teacher_pipe.labels)}

    def require_teacher_kind(self, teacher_pipe: Any, ok: bool, expected: str) -> None:
        """Raise E010 (the teacher cannot teach this student) unless `ok`."""
        if not ok:
            raise ValueError(
                Errors.E010.format(
                    teacher=getattr(teacher_pipe, "name", type(teacher_pipe).__name__),
                    kind=type(teacher_pipe).__name__,
                    student=self.name,
                    expected=expected,
                )
            )

    def begin_distill(
        self, examples: Iterable[Example], losses: Optional[Dict[str, float]]
    ) -> Tuple[List[Example], Dict[str, float]]:
        """The start of every `distill`: the batch as a checked list, and the losses dict
        with this component's entry."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_distillation_examples(examples, f"{type(self).__name__}.distill")
        return examples, losses

    def initialize_from_teacher(self, teacher_pipe: Any, get_examples: Any, nlp: Any) -> None:
        """After the student pipeline is initialized: anything the teacher must set that
        a config cannot carry. Nothing for greenkd components (their labels come
        through settings_from_teacher)."""

    def check_labels(self, teacher_pipe: Any) -> None:
        """Student and teacher must have the same labels in the same order: the cached
        teacher distributions are indexed by label position."""
        teacher_labels = tuple(getattr(teacher_pipe, "labels", ()))
        own_labels = tuple(getattr(self, "labels", ()))
        if teacher_labels != own_labels:
            missing = sorted(set(teacher_labels) - set(own_labels))
            extra = sorted(set(own_labels) - set(teacher_labels))
            raise ValueError(
                Errors.E011.format(
                    student=self.name,
                    teacher=teacher_pipe.name,
                    missing=missing[:10],
                    extra=extra[:10],
                )
            )


def validate_distillation_examples(examples: Sequence[Example], method: str) -> None:
    """Teacher (reference) and student (predicted) docs must have the same tokens."""
    for i, eg in enumerate(examples):
        if not isinstance(eg, Example):
            raise TypeError(Errors.E012.format(method=method, type=type(eg).__name__))
        if len(eg.reference) != len(eg.predicted) or [t.text for t in eg.reference] != [
            t.text for t in eg.predicted
        ]:
            raise ValueError(Errors.E013.format(method=method, index=i))


