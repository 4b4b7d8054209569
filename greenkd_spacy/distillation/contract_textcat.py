"""Text classification under the distillation contract, once for every classifier.

greenkd_textcat (pipeline/textcat.py) and spaCy's own `textcat` (adapters.TextcatAdapter)
teach and learn the same targets — one row of class probabilities per doc, in one cache
that a DAN and a BOW student of the same teacher share — and take the same steps to
learn them. Only their losses differ (KL on the DAN's logits; spaCy's squared error on
its probabilities), so each keeps its own `get_teacher_student_loss` and `get_loss`,
and the rest lives here.
"""
from functools import partial
from typing import Any, Dict, Iterable, List, Optional

from spacy.pipeline import MultiLabel_TextCategorizer, TextCategorizer
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Optimizer

from .contract import DistillableMixin
from .targets import class_prob_records, class_probs_of


class TextcatDistillMixin(DistillableMixin):
    """The teacher and student side of a text classifier; the class using it sets
    `multilabel` and says which pipe learns (`textcat_pipe`)."""

    multilabel: bool = False
    takes_teacher_weight = True

    @property
    def textcat_pipe(self) -> Any:
        """The text classifier whose model, `get_loss` and `finish_update` learn: the
        component itself, or the spaCy pipe an adapter wraps."""
        return self

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        """The teacher must be a text classifier (spaCy's or greenkd's) with the same
        exclusivity: exclusive classes and independent labels are different targets."""
        teacher_multilabel = isinstance(teacher_pipe, MultiLabel_TextCategorizer) or getattr(
            teacher_pipe, "multilabel", False
        )
        expected = ("textcat_multilabel" if self.multilabel else "textcat") + " (spaCy's or greenkd's)"
        ok = isinstance(teacher_pipe, TextCategorizer) and bool(teacher_multilabel) == self.multilabel
        self.require_teacher_kind(teacher_pipe, ok, expected)

    def settings_from_teacher(self, teacher_pipe: Any) -> Dict[str, Any]:
        """The teacher's labels and, for exclusive classes, its positive label (which
        spaCy's textcat scorer reports for a binary task). A multi-label classifier has
        none: spaCy's textcat_multilabel keeps no positive label and its initialize
        takes none."""
        settings = DistillableMixin.settings_from_teacher(self, teacher_pipe)
        positive_label = getattr(teacher_pipe, "cfg", {}).get("positive_label")
        if positive_label and not self.multilabel:
            settings["positive_label"] = positive_label
        return settings

    def teacher_settings(self) -> Dict[str, Any]:
        """What, besides the teacher and the corpus, shapes the cached targets: the same
        for every text classifier, so a DAN and a BOW student of one teacher on one
        corpus share one teacher pass."""
        return {"kind": "textcat", "multilabel": self.multilabel}

    def teacher_records(
        self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int
    ) -> Dict[str, Dict]:
        """The teacher's class probabilities for a batch, one cache record per doc."""
        return class_prob_records(teacher_pipe, teacher_docs, [eg.predicted for eg in examples])

    def distill(
        self,
        teacher_pipe: Any,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from the teacher on a batch: `get_teacher_student_loss` on the class
        scores, plus gold_weight x the classifier's own loss where a doc has gold cats.

        teacher_pipe: A trained text classifier whose docs (the examples' references)
            went through the teacher pipeline's earlier components, or the cached
            stand-in the distillation loop passes.
        """
        examples, losses = self.begin_distill(examples, losses)
        if not examples:
            return losses
        pipe = self.textcat_pipe
        docs = [eg.predicted for eg in examples]
        teacher_probs = class_probs_of(teacher_pipe, docs)
        gold_loss = None
        if self.gold_weight > 0 and any(eg.reference.cats for eg in examples):
            # Docs without cats add nothing: each classifier's get_loss masks them.
            gold_loss = partial(pipe.get_loss, examples)
        losses[self.name] += self.soft_step(pipe, docs, teacher_probs, drop, sgd, gold_loss)
        return losses
