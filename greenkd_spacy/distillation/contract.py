"""The distillation contract every greenkd component follows.

Names and argument order are those of spaCy's v4 development line
(`TrainablePipe.distill`, `get_teacher_student_loss`, `is_distillable`), so code
written against it carries over. What the papers need on top: a temperature applied to
both distributions (the loss is scaled by T^2 so its gradient does not shrink with T),
and a gold cross-entropy term added where the corpus has gold annotation.

The contract holds the one temperature-scaled KL every component learns through,
`kl_divergence` (its binary form for multi-label classes and contract_torch.py's torch
node both call it), and `DistillSettings`, what the runner hands each student component
for a run.
"""
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Optimizer, set_dropout_rate

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


def binary_kl_divergence(
    teacher_probs: numpy.ndarray, student_logits: numpy.ndarray, temperature: float = 1.0
) -> Tuple[float, numpy.ndarray]:
    """T^2 * KL(teacher_T || student_T) of independent binary labels (multi-label
    classes), summed over the labels and averaged over the rows.

    Each label is kl_divergence's two-class case: sigmoid(z) is softmax([z, 0])[0], so a
    probability tempered in logit space is the categorical temperature, and there is one
    formula for exclusive and for multi-label classes.

    teacher_probs (numpy.ndarray): (n, L) teacher probabilities, strictly inside (0, 1).
    student_logits (numpy.ndarray): (n, L) student logits.
    temperature (float): T, applied to both sides.
    RETURNS (Tuple[float, numpy.ndarray]): The loss and its gradient with respect to the
        student logits, T * (q_T - p_T) / n.
    """
    n_labels = student_logits.shape[-1]
    teacher_logprobs = numpy.stack([numpy.log(teacher_probs), numpy.log1p(-teacher_probs)], axis=-1)
    two_class = numpy.stack([student_logits, numpy.zeros_like(student_logits)], axis=-1)
    mask = numpy.ones(student_logits.shape, dtype=bool)
    # kl_divergence averages over (row, label) pairs; a row's loss is the sum over its labels.
    loss, grad = kl_divergence(teacher_logprobs, two_class, mask, temperature)
    return loss * n_labels, grad[..., 0] * n_labels


TARGET_KINDS = ("soft", "silver")


@dataclass(frozen=True)
class DistillSettings:
    """What one distillation run asks of a student component.

    The runner hands it to each student for the run (`set_distill_settings`); it lives
    on the Python object only. spaCy saves a pipe's `cfg` with the pipe, so settings
    kept there made every saved student carry the run that made it. A component
    outside a run, or loaded from disk, has the defaults.

    temperature (float): T, applied to teacher and student distributions ([distillation]).
    gold_weight (float): Weight of the gold loss where a doc has gold ([distillation]
        gold_weight, or this component's entry in [distillation.gold_weights]).
    targets (Optional[str]): "soft" (the teacher's distributions) or "silver" (its
        predicted annotation), as the component decided from its teacher's kind in
        `check_teacher_kind`; None before that (soft).
    gold_copies (float): Copies of each gold doc the runner already puts in this
        component's batch (copies.py; 0: none made). The component's gold weight is
        divided by it, so a copy is not weighted twice.
    teacher_weight (float): Weight of the teacher's targets ([distillation.teacher_weights];
        0: the component learns from gold alone). Only components whose update is
        `soft_step` can take another weight than 1 (`takes_teacher_weight`).
    """

    temperature: float = 1.0
    gold_weight: float = 1.0
    targets: Optional[str] = None
    gold_copies: float = 0.0
    teacher_weight: float = 1.0

    def __post_init__(self) -> None:
        if self.targets is not None and self.targets not in TARGET_KINDS:
            raise ValueError(Errors.E053.format(targets=self.targets, kinds=TARGET_KINDS))


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
    Shared here: the run's DistillSettings (temperature and gold weight from
    [distillation], the soft or silver choice, gold copies), the label check and the
    initialize settings taken from the teacher.
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
    # Whether the teacher pass makes this component's records from the docs after its
    # teacher component ran (an encoder's output, hidden.py) instead of before (a head
    # reads what the earlier components set).
    reads_teacher_output: bool = False
    # The defaults until a run hands over its own (frozen, so one instance can serve as
    # every component's default).
    distill_settings: DistillSettings = DistillSettings()

    @property
    def is_distillable(self) -> bool:
        return True

    def set_distill_settings(self, settings: DistillSettings) -> None:
        """Use `settings` for this run (the runner calls it; nothing goes into cfg)."""
        if not isinstance(settings, DistillSettings):
            raise TypeError(Errors.E054.format(name=self.name, type=type(settings).__name__))
        self.distill_settings = settings

    def update_distill_settings(self, **changes: Any) -> None:
        """Change some of this run's settings and keep the others (the runner sets
        temperature and gold weight after the component chose its targets)."""
        self.set_distill_settings(replace(self.distill_settings, **changes))

    @property
    def temperature(self) -> float:
        return float(self.distill_settings.temperature)

    @property
    def _normalize_loss(self) -> bool:
        """Average a loss over the batch's tokens (true) or sum it: the factory's
        `normalize_loss`, read by the gold and the distillation losses alike; pipelines
        saved before the setting existed averaged."""
        return bool(self.cfg.get("normalize_loss", True))

    @property
    def gold_weight(self) -> float:
        """This component's gold weight per gold doc in its batch: the run's weight,
        divided by the copies of each gold doc the loop already put there (copies.py),
        so a copy is not weighted twice (1 for the silver students that made them)."""
        weight = float(self.distill_settings.gold_weight)
        copies = float(self.distill_settings.gold_copies)
        if weight > 0 and copies > 0:
            return weight / copies
        return weight

    # Whether this component's update scales its teacher's loss by teacher_weight
    # (those whose update is soft_step).
    takes_teacher_weight: bool = False

    @property
    def teacher_weight(self) -> float:
        return float(self.distill_settings.teacher_weight)

    def check_settings(self) -> None:
        """After the loop has handed over [distillation]'s temperature and gold weight,
        before the teacher pass: raise if this component cannot honour them."""

    def check_teacher_weight(self) -> None:
        """Raise if [distillation.teacher_weights] asks this component for a weight it
        cannot take, or leaves it nothing to learn from. The loop calls it for every
        student (it is not a hook: `takes_teacher_weight` says what a component can do)."""
        if self.teacher_weight != 1.0 and not self.takes_teacher_weight:
            raise ValueError(Errors.E083.format(name=self.name, kind=type(self).__name__, weight=self.teacher_weight))
        if self.teacher_weight == 0.0 and self.distill_settings.gold_weight == 0.0:
            raise ValueError(Errors.E084.format(name=self.name))

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

    def soft_step(
        self,
        pipe: Any,
        docs: List[Doc],
        teacher_scores: Any,
        drop: float,
        sgd: Optional[Optimizer],
        gold_loss: Optional[Callable[[Any], Tuple[float, Any]]] = None,
    ) -> float:
        """One update of `pipe`'s model on soft targets, where the loss is on the
        model's output alone (spaCy's taggers, every text classifier):
        teacher_weight x `get_teacher_student_loss` on its scores for `docs`, plus
        gold_weight x `gold_loss(scores)` where given.

        pipe (Any): The pipe whose model learns and whose finish_update applies `sgd`
            (the component itself, or the spaCy pipe an adapter wraps).
        RETURNS (float): The batch's loss.
        """
        set_dropout_rate(pipe.model, drop)
        scores, backprop = pipe.model.begin_update(docs)
        loss, d_scores = self.get_teacher_student_loss(teacher_scores, scores)
        loss *= self.teacher_weight
        d_gold = None
        if gold_loss is not None:
            gold, d_gold = gold_loss(scores)
            loss += self.gold_weight * gold
        d_scores = _weighted_gradient(pipe.model.ops, d_scores, self.teacher_weight, d_gold, self.gold_weight)
        backprop(d_scores)
        if sgd is not None:
            pipe.finish_update(sgd)
        return loss

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


def _weighted_gradient(ops: Any, d_teacher: Any, teacher_weight: float, d_gold: Any, gold_weight: float) -> Any:
    """teacher_weight x d_teacher + gold_weight x d_gold (d_gold None: the first term
    alone), for the scores' gradient as one array or as one array per doc (a
    tagger's scores)."""

    def one(d: Any, g: Any) -> Any:
        d = d if teacher_weight == 1.0 else d * teacher_weight
        return d if g is None else d + gold_weight * ops.asarray(g)

    if isinstance(d_teacher, list):
        golds = d_gold if d_gold is not None else [None] * len(d_teacher)
        return [one(d, g) for d, g in zip(d_teacher, golds)]
    return one(d_teacher, d_gold)
