"""spaCy's own components under the distillation contract, without new factories.

A student or teacher pipeline made with spaCy's `tagger` is distilled as it is: the
loop asks `distillable(pipe)` for the object that speaks the contract (contract.py) —
the pipe itself for greenkd components, an adapter chosen by the pipe's class for
spaCy's — so the user names no new factory and the saved student is an ordinary spaCy
pipeline. The adapter follows spaCy v4's `Tagger.distill` /
`get_teacher_student_loss`: the teacher's per-token tag distribution is the target and
the gradient is the student's distribution minus the teacher's, summed like spaCy's
own tagger loss (normalize=False), so the tagger's usual learning rates carry over.

Covered so far: `tagger`, `morphologizer` and `senter` teaching and learning soft
targets (per-token class probabilities; codec: targets.encode/decode_tag_marginals); `textcat` and
`textcat_multilabel` learning the class probabilities of any text classifier (codec:
targets.encode/decode_class_probs, the cache shared with greenkd_textcat students of the
same teacher); spaCy's `ner`, `parser`, `trainable_lemmatizer` and `spancat` teaching
and learning silver targets (the teacher's predicted entities / trees / lemmas / spans;
targets.encode/decode_silver); `senter` learning a parser's sentence starts (silver,
from the same records as a parser student's trees).
"""
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.pipeline import (
    DependencyParser,
    EditTreeLemmatizer,
    EntityRecognizer,
    SpanCategorizer,
    Morphologizer,
    MultiLabel_TextCategorizer,
    SentenceRecognizer,
    Tagger,
    TextCategorizer,
)
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Optimizer

from .contract import DistillableMixin, kl_divergence
from .contract_textcat import TextcatDistillMixin
from .copies import CopyCarry
from ..errors import Errors
from .targets import (
    CachedTeacher,
    decode_tag_marginals,
    encode_silver,
    encode_tag_marginals,
    silver_references,
    silver_settings,
    softmax_rows,
)


class SpacyPipeAdapter(DistillableMixin):
    """What every adapter shares: the wrapped spaCy pipe, whose name, cfg and labels it
    answers with. The run's DistillSettings stay on the adapter, which the loop makes
    once per run: the pipe and its cfg are saved with the student."""

    def __init__(self, pipe: Any):
        self.pipe = pipe
        self.name = pipe.name
        self.cfg = pipe.cfg

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.pipe.labels)


class TaggerAdapter(SpacyPipeAdapter):
    """spaCy's softmax taggers — `tagger`, `morphologizer` and `senter` — each as a
    teacher of, and a student of, a component of its own class. The morphologizer's
    classes are its POS+features strings ("POS=NOUN|Number=Sing"); its label data goes
    to the student through a labels file (loop.config_safe_labels), so a student that
    reads only raw text knows every class before it is initialized."""

    takes_teacher_weight = True

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        kind = type(self.pipe).__name__
        if isinstance(self.pipe, SentenceRecognizer):
            # distillable(pipe, teacher) gives a senter of a parser its silver adapter.
            ok = type(teacher_pipe) is type(self.pipe) or SentStartsFromTreesAdapter.teaches(teacher_pipe)
            expected = f"{kind} (spaCy's; soft) or spaCy's parser (silver sentence starts)"
            self.require_teacher_kind(teacher_pipe, ok, expected)
            return
        self.require_teacher_kind(teacher_pipe, type(teacher_pipe) is type(self.pipe), f"{kind} (spaCy's)")

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        """The teacher's labels, in the teacher's order: its distributions are indexed by
        position. A senter's two labels are fixed."""
        data = teacher_pipe.label_data
        if data is None:
            return {}
        if isinstance(data, dict):  # the morphologizer's {"morph": ..., "pos": ...}
            return {"labels": data}
        return {"labels": list(data)}

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
        scores = [teacher_pipe.model.ops.to_numpy(s) for s in teacher_pipe.model.predict(docs)]
        output = teacher_pipe.model.get_ref("softmax") if teacher_pipe.model.has_ref("softmax") else None
        if output is not None and not output.attrs.get("softmax_normalize", True):
            # spaCy's Tagger.v2 (normalize = false, its default) predicts raw scores: the
            # argmax is all a tagger needs, but a student learns the distribution.
            scores = [softmax_rows(s) for s in scores]
        return scores

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
        # The student's bare docs, as the teacher pass gives them (a live teacher's input
        # is then the same as the cached one's).
        teacher = self._teacher_probs(teacher_pipe, docs)
        gold_loss = self._gold_loss(examples) if self.gold_weight > 0 else None
        losses[self.name] += self.soft_step(self.pipe, docs, teacher, drop, sgd, gold_loss)
        return losses

    def has_gold(self, reference: Doc) -> bool:
        """Whether a corpus doc carries this tagger's annotation (a raw-text doc does
        not; its unset sentence starts must not read as "no sentence starts here")."""
        if isinstance(self.pipe, SentenceRecognizer):
            return reference.has_annotation("SENT_START")
        if isinstance(self.pipe, Morphologizer):
            return reference.has_annotation("POS") or reference.has_annotation("MORPH")
        return reference.has_annotation("TAG")

    def _gold_loss(self, examples: List[Example]) -> Optional[Callable[[List[Any]], Tuple[float, List[Any]]]]:
        """The pipe's own loss (spaCy's tagger loss, its label smoothing included) on
        the docs with gold, beside the teacher's distributions, as greenkd_parser takes
        gold trees: a teacher that is worse than the corpus on an attribute (EWT's
        morphology) no longer drags the student below a gold-trained one. Docs without
        gold add nothing. None when the batch has no gold doc."""
        gold = [i for i, eg in enumerate(examples) if self.has_gold(eg.reference)]
        if not gold:
            return None

        def loss(scores: List[Any]) -> Tuple[float, List[Any]]:
            value, d_gold = self.pipe.get_loss([examples[i] for i in gold], [scores[i] for i in gold])
            d_scores = [self.pipe.model.ops.alloc2f(*s.shape) for s in scores]
            for i, d in zip(gold, d_gold):
                d_scores[i] = d
            return float(value), d_scores

        return loss

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
    """spaCy's components without a per-token distribution to match — transition-based
    `ner` and `parser`, `trainable_lemmatizer`, `spancat` — learning from a teacher of
    the same kind through their own `update`, with the teacher's predicted annotation as
    the reference ("silver" targets). spaCy's users distil a transformer NER into the
    CNN pipeline exactly so, treating its output as gold."""

    KINDS = {
        EntityRecognizer: ("ents", "ner"),
        DependencyParser: ("deps", "parser"),
        EditTreeLemmatizer: ("lemmas", "trainable_lemmatizer"),
        SpanCategorizer: ("spans", "spancat"),
    }

    takes_gold_by_copies = True

    def __init__(self, pipe: Any):
        super().__init__(pipe)
        self.kind, self.factory = self.KINDS[type(pipe)]
        # spaCy's `update` takes no per-doc weight: a gold doc's weight is its number of
        # copies in the batch (behind a shared encoder the loop makes them, copies.py).
        self._carry = CopyCarry()
        if self.kind == "spans":
            # The student's own key: the teacher's spans are stored and served under it.
            self.kind = f"spans:{pipe.key}"

    @property
    def task(self) -> str:
        return self.kind.split(":")[0]

    def same_kind(self, teacher_pipe: Any) -> bool:
        return type(teacher_pipe) is type(self.pipe)

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        # spaCy's component of the same kind, or a greenkd component that writes the
        # same annotation (greenkd_ner's entities, greenkd_parser's trees,
        # greenkd_chunker's spans).
        ok = self.same_kind(teacher_pipe) or getattr(teacher_pipe, "silver_kind", None) == self.task
        greenkd = {"ents": " or greenkd_ner", "deps": " or greenkd_parser", "spans": " or greenkd_chunker"}
        self.require_teacher_kind(teacher_pipe, ok, f"{self.factory} (spaCy's){greenkd.get(self.task, '')}")

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        # The transition system's label data has integer keys, which a config cannot
        # hold: ner and parser take their labels in initialize_from_teacher instead.
        # The lemmatizer's edit trees and spancat's labels go through a labels file
        # (loop.config_safe_labels), so a student on raw text knows them all.
        if self.kind in ("ents", "deps"):
            return {}
        return {"labels": teacher_pipe.label_data}

    def initialize_from_teacher(self, teacher_pipe: Any, get_examples: Any, nlp: Any) -> None:
        """Initialize again with the teacher's actions and labels (its label_data, as
        `spacy init labels` writes them), so a student that sees only raw text knows
        every label the teacher can give. A greenkd teacher has labels, not a transition
        system's actions: the student's own transition system makes the actions of
        those labels (every entity type in B/I/L/U; every dependency label as a left
        and a right arc, the root label as spaCy's ROOT)."""
        if self.kind not in ("ents", "deps"):
            return
        if self.same_kind(teacher_pipe):
            labels = teacher_pipe.label_data
        elif self.kind == "ents":
            labels = self.pipe.moves.get_actions(entity_types=list(teacher_pipe.labels))
        else:
            arcs = [label for label in teacher_pipe.labels if label.upper() != "ROOT"]
            labels = self.pipe.moves.get_actions(left_labels=arcs, right_labels=arcs)
        self.pipe.initialize(get_examples, nlp=nlp, labels=labels)

    def check_labels(self, teacher_pipe: Any) -> None:
        """Silver annotation names its labels, it is not indexed by position: the student
        must know every label the teacher can give, and may know more (spaCy's parser
        adds a backoff "dep" and calls the root label ROOT)."""
        if self.same_kind(teacher_pipe):
            super().check_labels(teacher_pipe)
            return
        own = set(self.labels) | ({"root"} if self.task == "deps" and "ROOT" in self.labels else set())
        missing = sorted(set(teacher_pipe.labels) - own)
        if missing:
            raise ValueError(Errors.E011.format(student=self.name, teacher=teacher_pipe.name, missing=missing[:10], extra=[]))

    def teacher_records(self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int) -> Dict[str, Dict]:
        annotated = list(teacher_pipe.pipe(teacher_docs))
        if self.task == "spans":
            # spaCy's spancat keeps its spans under `key`, greenkd_chunker under `spans_key`.
            teacher_key = getattr(teacher_pipe, "key", None) or teacher_pipe.spans_key
            if teacher_key != self.pipe.key:
                for doc in annotated:
                    doc.spans[self.pipe.key] = list(doc.spans.get(teacher_key, []))
        return encode_silver([eg.predicted for eg in examples], annotated, self.kind)

    def teacher_settings(self) -> Dict[str, Any]:
        return silver_settings(self.kind)

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
        silver = silver_references(teacher_pipe, docs, self.kind)
        batch = []
        for eg, doc, ref in zip(examples, docs, silver):
            if self.gold_weight > 0 and self.has_gold(eg.reference):
                # The corpus's own annotation instead of the teacher's, as a greenkd
                # student takes it, `gold_weight` times as often as a silver doc.
                batch.extend(Example(doc, eg.reference) for _ in range(self._carry.take(self.gold_weight)))
            else:
                batch.append(Example(doc, ref))
        if batch:
            self.pipe.update(batch, drop=drop, sgd=sgd, losses=losses)
        return losses

    def has_gold(self, reference: Doc) -> bool:
        """Whether a corpus doc carries this kind's annotation (a raw-text doc does not)."""
        if self.task == "spans":
            return self.pipe.key in reference.spans
        attr = {"ents": "ENT_IOB", "deps": "DEP", "lemmas": "LEMMA"}[self.task]
        return reference.has_annotation(attr)


class SentStartsFromTreesAdapter(SilverAdapter):
    """spaCy's `senter` learning the sentence starts of spaCy's transition `parser`, for
    teachers that have no senter of their own: the teacher's trees are cached as silver
    parser students' records (one record kind, so a pipeline with a silver parser and a
    senter student runs one teacher pass for both), and each tree is a sentence of the
    reference. A greenkd_parser cannot teach it: it parses the sentences it is given
    (a sentencizer's, cut at max_sentence_length), so its trees hold no boundaries of
    its own to learn."""

    def __init__(self, pipe: Any):
        SpacyPipeAdapter.__init__(self, pipe)
        self.kind, self.factory = "deps", "senter"
        self._carry = CopyCarry()

    @staticmethod
    def teaches(teacher_pipe: Any) -> bool:
        """Whether the teacher writes trees (and so sentence starts)."""
        return type(teacher_pipe) is DependencyParser

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        self.require_teacher_kind(
            teacher_pipe, self.teaches(teacher_pipe), "parser (spaCy's transition parser: silver sentence starts)"
        )

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        return {}  # the senter's two classes are its own, not the teacher's labels

    def initialize_from_teacher(self, teacher_pipe: Any, get_examples: Any, nlp: Any) -> None:
        return None

    def check_labels(self, teacher_pipe: Any) -> None:
        return None

    def has_gold(self, reference: Doc) -> bool:
        return reference.has_annotation("SENT_START")


class TextcatAdapter(TextcatDistillMixin, SpacyPipeAdapter):
    """spaCy's `textcat` (BOW, ensemble, CNN) and `textcat_multilabel` learning the class
    probabilities of a text classifier — spaCy's, greenkd's DAN, or a transformer
    textcat — on labeled and unlabeled text, with the teacher and student steps of every
    text classifier (contract_textcat.py). spaCy's textcat outputs probabilities and
    learns from (scores - truths), a squared error on them: the adapter hands it the
    teacher's probabilities as the truths, so the student learns through its own loss
    form, and adds that loss on gold cats (gold_weight) where a doc has them. Without
    logits there is no temperature: it must stay 1."""

    def __init__(self, pipe: Any):
        super().__init__(pipe)
        self.multilabel = isinstance(pipe, MultiLabel_TextCategorizer)

    @property
    def textcat_pipe(self) -> Any:
        return self.pipe

    def check_settings(self) -> None:
        if self.temperature != 1.0:
            raise ValueError(Errors.E046.format(student=self.name, temperature=self.temperature))

    def get_teacher_student_loss(self, teacher_scores: numpy.ndarray, student_scores: Any) -> Tuple[float, Any]:
        """spaCy's textcat loss with the teacher's probabilities as the truths: the
        gradient (student - teacher) and the mean squared difference."""
        ops = self.pipe.model.ops
        teacher = ops.asarray2f(numpy.asarray(teacher_scores, dtype="float32").reshape(student_scores.shape))
        d_scores = student_scores - teacher
        return float((d_scores**2).mean()), d_scores


ADAPTERS = {
    TextCategorizer: TextcatAdapter,
    MultiLabel_TextCategorizer: TextcatAdapter,
    Tagger: TaggerAdapter,
    Morphologizer: TaggerAdapter,
    SentenceRecognizer: TaggerAdapter,
    EntityRecognizer: SilverAdapter,
    DependencyParser: SilverAdapter,
    EditTreeLemmatizer: SilverAdapter,
    SpanCategorizer: SilverAdapter,
}


def distillable(pipe: Any, teacher_pipe: Any = None) -> Optional[Any]:
    """What speaks the distillation contract for a pipe: itself (greenkd components),
    an adapter (spaCy's own components, by exact class), or None (not distillable).
    Given its teacher, the adapter for that pair: a `senter` learns a senter's
    distributions (soft) or a parser's sentence starts (silver)."""
    if getattr(pipe, "is_distillable", False):
        return pipe
    if type(pipe) is SentenceRecognizer and teacher_pipe is not None and SentStartsFromTreesAdapter.teaches(teacher_pipe):
        return SentStartsFromTreesAdapter(pipe)
    adapter = ADAPTERS.get(type(pipe))
    return adapter(pipe) if adapter is not None else None
