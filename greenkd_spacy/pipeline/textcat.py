"""greenkd_textcat and greenkd_textcat_multilabel: text classifiers over sparse n-grams,
by default the linear bag of 1-2-grams (greenkd.NgramLinear.v1), or the n-gram DAN of
sparse-distillation-dan.md (greenkd.DAN.v1 / v2).

Both subclass spaCy's own text categorizers, so labels, `doc.cats`, `positive_label`,
the threshold and the textcat scorers behave exactly as in spaCy. What differs:
- the model outputs logits; predict applies softmax (exclusive classes) or a sigmoid
  (multi-label), and training uses cross-entropy instead of spaCy's squared error;
- the n-gram vocabulary is built at initialize from the training corpus plus an
  optional unlabeled corpus (`[initialize.components.NAME] ngram_corpus`);
- the per-n-gram tables (the DAN's embeddings, the linear bag's weights) get sparse
  gradients and are updated with torch's SparseAdam, the dense layers and biases with the
  training optimizer (the paper's hybrid optimizer, 2.5);
- with `use_averages = true` in [training.optimizer], the running average of every
  weight is what spaCy evaluates and saves (`use_params`): thinc's optimizer averages
  the dense layers, this component the n-gram tables (SparseAdam's), on thinc's schedule;
- `distill()` learns from a teacher text classifier (spaCy's `textcat` over a
  transformer, or another greenkd_textcat): KL on the class distribution at temperature
  T, plus cross-entropy on gold labels where a doc has them. The teacher and student
  steps are those of every text classifier (distillation/contract_textcat.py, shared
  with spaCy's textcat as a student); the loss is this component's own.
"""
import itertools
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy
import torch
from spacy.language import Language
from spacy.pipeline.textcat import TextCategorizer
from spacy.pipeline.textcat_multilabel import MultiLabel_TextCategorizer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from ..errors import Errors
from ..models.dan import dan_module, ensure_dan
from ..models.pytorch.word_cnn import FIRST_WORD_ROW
from ..models.ngrams import NgramTable
from ..data.text_corpus import iter_texts
from ..distillation.contract import binary_kl_divergence, kl_divergence, log_softmax
from ..distillation.contract_textcat import TextcatDistillMixin
from .serialize import ShapedFromCfgMixin

# The factory's default model (a component's default is what wins on CPU, by
# measurement): the linear bag of 1-2-grams (greenkd.NgramLinear.v1: greenkd.DAN.v2 with
# deep = false under its own name, so partial DAN.v2 blocks are not merged into it), which
# trained from scratch scored above the DAN and above spaCy's BOW on SST-2's held-out
# sentences over five seeds (82.94 vs 81.89 and 82.15) and above BOW on TREC, at 1.7-2.3x
# BOW's docs/s (configs/defaults/textcat.cfg, docs/benchmarks.md). The DAN stays what
# configs/students/textcat_dan.cfg names for distillation (the better held-out score as a student
# on SST-2); the paper's 1-4-gram DAN is configs/paper/textcat_dan.cfg.
DEFAULT_TEXTCAT_MODEL_CONFIG = """
[model]
@architectures = "greenkd.NgramLinear.v1"
max_ngrams = 131072
ngram_size = 2
ngram_dropout = 0.0
lowercase = true
"""
DEFAULT_TEXTCAT_MODEL = Config().from_str(DEFAULT_TEXTCAT_MODEL_CONFIG)["model"]
MIN_PROB = 1e-7
# The same score weights as spaCy's text categorizers.
TEXTCAT_SCORE_WEIGHTS = {
    "cats_score": 1.0,
    "cats_score_desc": None,
    "cats_micro_p": None,
    "cats_micro_r": None,
    "cats_micro_f": None,
    "cats_macro_p": None,
    "cats_macro_r": None,
    "cats_macro_f": None,
    "cats_macro_auc": None,
    "cats_f_per_type": None,
}


@Language.factory(
    "greenkd_textcat",
    assigns=["doc.cats"],
    default_config={
        "model": DEFAULT_TEXTCAT_MODEL,
        "threshold": 0.0,
        "scorer": {"@scorers": "spacy.textcat_scorer.v2"},
    },
    default_score_weights=TEXTCAT_SCORE_WEIGHTS,
)
def make_textcat(
    nlp: Language, name: str, model: Model[List[Doc], Floats2d], threshold: float, scorer: Optional[Callable]
) -> "DANTextCategorizer":
    """A text classifier with exclusive classes (one label per doc) over sparse n-grams.

    model (Model[List[Doc], Floats2d]): greenkd.NgramLinear.v1 (the default:
        DEFAULT_TEXTCAT_MODEL_CONFIG says why), greenkd.DAN.v1 or v2; class logits per doc.
    threshold (float): Cutoff for the scorer's P/R/F (as in spaCy's textcat).
    scorer (Optional[Callable]): spaCy's textcat scorer by default.
    """
    return DANTextCategorizer(nlp.vocab, model, name, threshold=threshold, scorer=scorer)


@Language.factory(
    "greenkd_textcat_multilabel",
    assigns=["doc.cats"],
    default_config={
        "model": DEFAULT_TEXTCAT_MODEL,
        "threshold": 0.5,
        "scorer": {"@scorers": "spacy.textcat_multilabel_scorer.v2"},
    },
    default_score_weights=TEXTCAT_SCORE_WEIGHTS,
)
def make_multilabel_textcat(
    nlp: Language, name: str, model: Model[List[Doc], Floats2d], threshold: float, scorer: Optional[Callable]
) -> "DANMultiLabelTextCategorizer":
    """A multi-label text classifier (any number of labels per doc) over sparse n-grams.

    model (Model[List[Doc], Floats2d]): greenkd.NgramLinear.v1 (the default), greenkd.DAN.v1
        or v2; label logits per doc.
    threshold (float): Probability above which a label counts as predicted.
    scorer (Optional[Callable]): spaCy's multi-label textcat scorer by default.
    """
    return DANMultiLabelTextCategorizer(nlp.vocab, model, name, threshold=threshold, scorer=scorer)


# Examples spaCy's initialize sees after the n-gram pass has read them all.
INIT_SAMPLE = 100


class DANMixin(ShapedFromCfgMixin, TextcatDistillMixin):
    """What both DAN text classifiers share; the subclass fixes `multilabel`."""

    multilabel: bool = False
    # Its n-gram vocabulary is built from the whole distillation corpus (paper 2.5).
    init_needs_corpus = True
    model: Model
    vocab: Vocab
    cfg: Dict[str, Any]
    _sparse_optimizer: Optional[torch.optim.SparseAdam] = None
    # Running averages of the DAN's n-gram tables (see _update_averages), aligned with
    # sparse_parameters(); None until the optimizer asks for averages.
    _averages: Optional[List[torch.Tensor]] = None
    _averaged_ids: Optional[List[int]] = None
    _n_averaged: int = 0

    # ------------------------------------------------------------------ predict

    def _probs(self, logits: numpy.ndarray) -> numpy.ndarray:
        logits = numpy.asarray(logits, dtype="float32")
        if self.multilabel:
            return 1.0 / (1.0 + numpy.exp(-logits))
        return numpy.exp(log_softmax(logits))

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Class probabilities, one row per doc. A doc with no known n-gram (empty,
        whitespace only, all out of vocabulary) gets the model's prior from its biases."""
        docs = list(docs)
        if not docs:
            return numpy.zeros((0, len(self.labels)), dtype="float32")
        return self._probs(self.model.predict(docs))

    def set_annotations(self, docs: Iterable[Doc], scores: Floats2d) -> None:
        """doc.cats[label] = score, as spaCy's text categorizers set it, a row at a time:
        the per-element numpy indexing of theirs was a tenth of the DAN's own time."""
        labels = self.labels
        for doc, row in zip(docs, numpy.asarray(scores).tolist()):
            doc.cats.update(zip(labels, row))

    # ------------------------------------------------------------------ train

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Cross-entropy on the gold labels (softmax or per-label sigmoid)."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        self._validate_categories(examples)
        if not examples:
            return losses
        set_dropout_rate(self.model, drop)
        logits, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_logits = self.get_loss(examples, logits)
        backprop(d_logits)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
        """Mean cross-entropy of the logits against gold cats and its gradient.

        Docs without gold cats (unlabeled text) do not count; in the multi-label case
        a label missing from a doc's cats does not count either.
        """
        examples = list(examples)
        truths, known = self._examples_to_truth(examples)
        truths = numpy.asarray(truths, dtype="float32")
        known = numpy.asarray(known, dtype="float32")
        has_cats = numpy.asarray([bool(eg.reference.cats) for eg in examples])
        logits = numpy.asarray(scores, dtype="float32")
        if self.multilabel:
            mask = known * has_cats[:, None]
            n = max(1, int(has_cats.sum()))
            probs = self._probs(logits)
            bce = -(truths * numpy.log(numpy.maximum(probs, MIN_PROB))
                    + (1 - truths) * numpy.log(numpy.maximum(1 - probs, MIN_PROB)))
            loss = float((bce * mask).sum() / n)
            d_logits = (probs - truths) * mask / n
        else:
            gold_rows = has_cats & (truths.sum(axis=1) == 1)
            n = max(1, int(gold_rows.sum()))
            log_probs = log_softmax(logits)
            loss = float(-(log_probs * truths)[gold_rows].sum() / n)
            d_logits = (numpy.exp(log_probs) - truths) * gold_rows[:, None] / n
        return loss, self.model.ops.asarray(d_logits.astype("float32"))

    def finish_update(self, sgd: Optimizer) -> None:
        """Hybrid optimizer (paper 2.5): SparseAdam for the rows of the per-n-gram tables
        this batch touched, the training optimizer for the dense layers."""
        tables = dan_module(self.model).sparse_parameters()
        if any(table.grad is not None for table in tables):
            # A new optimizer only for new tables (after initialize or pruning), so that
            # Adam's moments carry over between steps; SparseAdam skips a table without grad.
            known = self._sparse_optimizer.param_groups[0]["params"] if self._sparse_optimizer else []
            if [id(p) for p in known] != [id(t) for t in tables]:
                self._sparse_optimizer = torch.optim.SparseAdam(
                    tables, lr=float(sgd.learn_rate), betas=(float(sgd.b1), float(sgd.b2)), eps=float(sgd.eps)
                )
            for group in self._sparse_optimizer.param_groups:
                group["lr"] = float(sgd.learn_rate)
            self._sparse_optimizer.step()
            # The dense optimizer must not see (or densify) the sparse gradients.
            for table in tables:
                table.grad = None
        self.model.finish_update(sgd)
        if getattr(sgd, "averages", None) is not None:
            self._update_averages()

    # ------------------------------------------------------------------ averages

    def _update_averages(self) -> None:
        """Keep a running average of the n-gram tables, on the schedule thinc's optimizer
        follows for the dense layers with `use_averages = true`: an average starting at
        zero whose decay grows with the step, (1 + t) / (10 + t), up to 0.9999.

        Why here: SparseAdam updates the tables, and thinc's optimizer never sees them,
        so it keeps no average of them; the dense layers' averages are thinc's own
        (torch_bridge's shim applies them in use_params). The DAN's held-out score
        swings by about a point between evaluations as it overfits SST-2's phrases;
        the average is what spaCy evaluates and saves (use_params).
        """
        tables = dan_module(self.model).sparse_parameters()
        params = [p.detach() for p in tables]
        if self._averages is None or self._averaged_ids != [id(p) for p in tables]:
            # First step, or new tables (initialize, pruning): averaging starts again.
            self._averages = [torch.zeros_like(p) for p in params]
            self._averaged_ids = [id(p) for p in tables]
            self._n_averaged = 0
        self._n_averaged += 1
        t = self._n_averaged
        decay = min((1.0 + t) / (10.0 + t), 0.9999)
        with torch.no_grad():
            torch._foreach_lerp_(self._averages, params, 1.0 - decay)

    def use_params(self, params: dict):
        """Use the averaged weights inside the block (spaCy evaluates and saves its
        checkpoints this way when the optimizer has `use_averages = true`), then go
        back to the trained ones: thinc's averages (``params``) for the dense layers,
        ours for the n-gram tables."""
        with self.model.use_params(params):
            if self._averages is None:
                yield
                return
            tables = dan_module(self.model).sparse_parameters()
            if self._averaged_ids != [id(p) for p in tables]:
                raise ValueError(
                    "(greenkd-spacy) The DAN's tables changed (pruned or re-initialized) since its "
                    "weights were last averaged: run a training step before using the averages."
                )
            with torch.no_grad():
                backup = [p.detach().clone() for p in tables]
                for table, average in zip(tables, self._averages):
                    table.copy_(average)
            try:
                yield
            finally:
                with torch.no_grad():
                    for table, saved in zip(tables, backup):
                        table.copy_(saved)

    # ------------------------------------------------------------------ distill

    def get_teacher_student_loss(
        self, teacher_scores: numpy.ndarray, student_scores: numpy.ndarray
    ) -> Tuple[float, numpy.ndarray]:
        """T^2-scaled KL between teacher probabilities and student logits: the
        contract's KL on the class distribution, or its binary form per label for
        multi-label classes.

        teacher_scores (numpy.ndarray): (n_docs, n_labels) teacher probabilities.
        student_scores (numpy.ndarray): (n_docs, n_labels) student logits.
        RETURNS (Tuple[float, numpy.ndarray]): Loss and gradient w.r.t. the logits.
        """
        p = numpy.clip(numpy.asarray(teacher_scores, dtype="float32"), MIN_PROB, 1 - MIN_PROB)
        z = numpy.asarray(student_scores, dtype="float32")
        T = self.temperature
        mask = numpy.ones(z.shape[0], dtype=bool)
        if not self.multilabel:
            return kl_divergence(numpy.log(p), z, mask, T)
        return binary_kl_divergence(p, z, T)

    # ------------------------------------------------------------------ initialize

    def _build_ngrams(
        self,
        get_examples: Callable[[], Iterable[Example]],
        nlp: Optional[Language],
        ngram_corpus: Optional[Union[str, Path]],
        ngram_corpus_limit: int,
    ) -> List[str]:
        """Build the n-gram table from the examples (and ngram_corpus) and, in the same
        read, check each example's cats and collect their labels, in the order met.
        RETURNS the labels. spaCy's initialize reads every example twice more (to check
        the cats, and for labels when none are given) and its check of the examples'
        types a third: over a distillation corpus of 320,000 texts each read is
        minutes of tokenizing before the first step."""
        method = f"{type(self).__name__}.initialize"
        if not callable(get_examples):
            validate_get_examples(get_examples, method)  # spaCy's own error for it
        if ngram_corpus is not None and not Path(ngram_corpus).exists():
            raise ValueError(Errors.E020.format(path=ngram_corpus, name=self.name))
        make_doc = nlp.make_doc if nlp is not None else (lambda text: Doc(self.vocab, words=text.split()))
        extra = (
            (make_doc(text) for text in iter_texts(ngram_corpus, limit=ngram_corpus_limit))
            if ngram_corpus is not None
            else ()
        )
        labels: Dict[str, None] = {}

        def train() -> Iterable[Doc]:
            for eg in get_examples():
                validate_examples([eg], method)
                self._validate_categories([eg])
                labels.update(dict.fromkeys(eg.reference.cats))
                yield eg.predicted

        old = self.model.attrs["ngrams"]
        table = NgramTable.build(
            train(), extra, size=self.model.attrs["max_ngrams"], ngram_range=old.ngram_range, lowercase=old.lowercase
        )
        if len(table) == 0:
            raise ValueError(Errors.E021.format(name=self.name))
        self.model.attrs["ngrams"] = table
        self.cfg["n_ngrams"] = len(table)
        self._averages = None  # a new model: averaging starts again with its training
        return list(labels)

    def _initialize_sample(self, get_examples: Callable[[], Iterable[Example]]) -> Callable[[], Iterable[Example]]:
        """The first examples, for spaCy's initialize once the whole corpus has been
        read (it sizes the model from a sample; the labels come read already)."""
        return lambda: itertools.islice(get_examples(), INIT_SAMPLE)

    # ------------------------------------------------------------------ prune

    def prune_ngrams(self, keep: int, by: str = "train") -> int:
        """Keep only the `keep` most frequent n-grams (paper 4.2, Fig. 5): their
        embedding rows are copied into a smaller table; the rest become unknown.
        RETURNS (int): The number of n-grams kept."""
        table: NgramTable = self.model.attrs["ngrams"]
        rows = table.select(keep, by=by)
        old_module = dan_module(self.model)
        old_tables = [w.detach() for w in old_module.ngram_tables()]
        old_words = old_module.cnn.embed.weight.detach() if old_module.cnn is not None else None
        old_state = {
            k: v
            for k, v in old_module.state_dict().items()
            if not k.startswith(("embed.", "linear.", "cnn.embed."))
        }
        new_table = table.subset(rows)
        self.model.attrs["ngrams"] = new_table
        ensure_dan(self.model, len(rows), len(self.labels))
        module = dan_module(self.model)
        module.load_state_dict(old_state, strict=False)
        with torch.no_grad():
            for new, old in zip(module.ngram_tables(), old_tables):
                if len(rows):
                    new.copy_(old[torch.from_numpy(rows)])
            if old_words is not None:
                # The kept words' rows move with them; the gap and unknown rows stay.
                new_rows, old_rows = new_table.word_rows(), table.word_rows()[rows]
                words = new_rows >= FIRST_WORD_ROW
                module.cnn.embed.weight[:FIRST_WORD_ROW] = old_words[:FIRST_WORD_ROW]
                module.cnn.embed.weight[torch.from_numpy(new_rows[words])] = old_words[torch.from_numpy(old_rows[words])]
        self.cfg["n_ngrams"] = len(rows)
        self.cfg["n_words"] = self.model.attrs.get("n_words", 0)
        self._sparse_optimizer = None
        self._averages = None  # averages of the old tables do not apply to the kept rows
        return len(rows)

    # ------------------------------------------------------------------ serialize

    def _build_from_cfg(self, cfg: Dict) -> None:
        if cfg.get("labels") and cfg.get("n_ngrams"):
            ensure_dan(
                self.model, cfg["n_ngrams"], len(cfg["labels"]), cfg.get("vectors_width", 0), cfg.get("n_words", 0)
            )


class DANTextCategorizer(DANMixin, TextCategorizer):
    """Exclusive classes: softmax over the labels; doc.cats sums to 1."""

    multilabel = False

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Iterable[str]] = None,
        positive_label: Optional[str] = None,
        ngram_corpus: Optional[Union[str, Path]] = None,
        ngram_corpus_limit: int = 0,
    ) -> None:
        """Build the n-gram vocabulary, collect the labels and create the model.

        labels (Optional[Iterable[str]]): The labels (default: from the examples).
        positive_label (Optional[str]): The positive label of a binary task.
        ngram_corpus (Optional[Union[str, Path]]): Unlabeled text (.txt, .txt.gz: one doc
            per line; .jsonl, .jsonl.gz: a "text" field) whose n-grams count towards
            the vocabulary, as the paper does with its distillation corpus.
        ngram_corpus_limit (int): Read at most this many docs of it (0: all).
        """
        seen = self._build_ngrams(get_examples, nlp, ngram_corpus, ngram_corpus_limit)
        TextCategorizer.initialize(
            self, self._initialize_sample(get_examples), nlp=nlp,
            labels=seen if labels is None else labels, positive_label=positive_label,
        )
        self.cfg["vectors_width"] = self.model.attrs.get("vectors_width", 0)
        self.cfg["n_words"] = self.model.attrs.get("n_words", 0)


class DANMultiLabelTextCategorizer(DANMixin, MultiLabel_TextCategorizer):
    """Multi-label: an independent sigmoid per label."""

    multilabel = True

    def initialize(  # type: ignore[override]
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Iterable[str]] = None,
        ngram_corpus: Optional[Union[str, Path]] = None,
        ngram_corpus_limit: int = 0,
    ) -> None:
        """As DANTextCategorizer.initialize, without positive_label."""
        seen = self._build_ngrams(get_examples, nlp, ngram_corpus, ngram_corpus_limit)
        MultiLabel_TextCategorizer.initialize(
            self, self._initialize_sample(get_examples), nlp=nlp, labels=seen if labels is None else labels
        )
        self.cfg["vectors_width"] = self.model.attrs.get("vectors_width", 0)
        self.cfg["n_words"] = self.model.attrs.get("n_words", 0)

