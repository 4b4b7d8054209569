"""greenkd_parser: a biaffine dependency parser with Chu-Liu/Edmonds decoding."""
import warnings
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.pipeline import DependencyParser, TrainablePipe
from spacy.pipeline.dep_parser import parser_score
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats3d, Ints2d

from ..errors import Errors, Warnings
from ..models.parser import ensure_head
from ..distillation.contract import DistillableMixin, kl_divergence, log_softmax
from ..distillation.targets import (
    CachedTeacher,
    decode_head_distributions,
    encode_head_distributions,
    encode_silver,
    silver_references,
    silver_settings,
)
from ..types import ParserInput, ParserScores, ParserTargets, Segment
from .serialize import ShapedFromCfgMixin
from .segments import doc_segments

# The CPU-first default (docs/benchmarks.md): the biaffine scorer over a 1 x 64
# BiLSTM of the parser's own, over spaCy's hash-embedding CNN (2 layers, width 64) whose
# embeddings add hashed character 3-5-grams and drop a fifth of the words in training
# (greenkd.SubwordHashEmbed.v1: rare words are read from their n-grams), no POS input, so
# `nlp.add_pipe("greenkd_parser")` parses raw text faster than spaCy's CNN parser.
# configs/defaults/parser.cfg shares that CNN, as a `tok2vec` component, with spaCy's
# tagger (the parser reads it through a listener); here it is the parser's own.
# The paper's Table 7 model (3 x 400, 100-d POS) is configs/paper/parser_bilstm_goldpos.cfg; the
# first default (a shared 2 x 128 BiLSTM) projects/parser/configs/parser_bilstm_tagger.cfg.
DEFAULT_PARSER_MODEL_CONFIG = """
[model]
@architectures = "greenkd.BiaffineParser.v1"
arc_mlp_size = 128
label_mlp_size = 64
mlp_dropout = 0.33

[model.tok2vec]
@architectures = "greenkd.BiLSTMContext.v1"
hidden_width = 64
depth = 1
dropout = 0.33

[model.tok2vec.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.tok2vec.embed]
@architectures = "greenkd.SubwordHashEmbed.v1"
width = 64
attrs = ["NORM","PREFIX","SUFFIX","SHAPE"]
rows = [5000,1000,2500,2500]
include_static_vectors = false
subword_rows = 10000
min_n = 3
max_n = 5
word_dropout = 0.2

[model.tok2vec.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 64
depth = 2
window_size = 1
maxout_pieces = 3
"""
DEFAULT_PARSER_MODEL = Config().from_str(DEFAULT_PARSER_MODEL_CONFIG)["model"]

# (heads, labels) per segment, padded like the scores; -1 where there is no gold.
GoldArrays = Tuple[Ints2d, Ints2d]


@Language.factory(
    "greenkd_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": DEFAULT_PARSER_MODEL,
        "max_sentence_length": 256,
        "normalize_loss": True,
        "scorer": {"@scorers": "spacy.parser_scorer.v1"},
    },
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
    },
)
def make_parser(
    nlp: Language,
    name: str,
    model: Model[ParserInput, ParserScores],
    max_sentence_length: int,
    normalize_loss: bool,
    scorer: Optional[Callable],
) -> "BiaffineParser":
    """Create a biaffine dependency parser (Dozat & Manning 2017).

    model (Model[ParserInput, ParserScores]): The biaffine model over an encoder.
    max_sentence_length (int): Longer sentences are parsed in chunks of this many tokens.
    normalize_loss (bool): Average the loss (gold, the teacher's trees or its
        distributions) and its gradient over the batch's tokens (the paper's setting).
        False sums them, as spaCy's tagger and parser do:
        set it when the encoder is a tok2vec shared with spaCy components through
        listeners, or their per-token gradients outweigh the parser's hundreds to 1.
    scorer (Optional[Callable]): The scoring method; spaCy's parser scorer by default.
    """
    return BiaffineParser(
        nlp.vocab,
        model,
        name,
        max_sentence_length=max_sentence_length,
        normalize_loss=normalize_loss,
        scorer=scorer,
    )


class BiaffineParser(ShapedFromCfgMixin, DistillableMixin, TrainablePipe):
    """Predict a head and a dependency label for every token, one tree per sentence.

    Sentences come from the doc (gold, a senter, a sentencizer), else from punctuation
    rules; see greenkd_spacy.pipeline.segments for the full rule. The output of every
    sentence is a well-formed tree with exactly one root.
    """

    silver_kind = "deps"  # spaCy's parser can learn its trees

    def __init__(
        self,
        vocab: Vocab,
        model: Model[ParserInput, ParserScores],
        name: str = "greenkd_parser",
        *,
        max_sentence_length: int = 256,
        normalize_loss: bool = True,
        scorer: Optional[Callable] = parser_score,
    ) -> None:
        if max_sentence_length < 1:
            raise ValueError(Errors.E006.format(value=max_sentence_length, name=name))
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict = {
            "labels": [],
            "root_label": "ROOT",
            "encoder_width": None,
            "max_sentence_length": max_sentence_length,
            "normalize_loss": normalize_loss,
        }

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if label in self.cfg["labels"]:
            return 0
        self._allow_extra_label()
        self.cfg["labels"] = sorted(self.cfg["labels"] + [label])
        self.vocab.strings.add(label)
        return 1

    # ------------------------------------------------------------------ predict

    def segments(self, docs: Sequence[Doc]) -> List[Segment]:
        return doc_segments(docs, self.cfg["max_sentence_length"])

    def predict(self, docs: Iterable[Doc]) -> ParserScores:
        """Score and decode the docs; never touches them.

        RETURNS (ParserScores): The decoded trees and the label scores at their heads;
            arc_logits is empty (the teacher pass asks the model for them).
        """
        docs = list(docs)
        if len(self.model.layers) < 2:  # the biaffine head is added at initialize
            raise ValueError(Errors.E042.format(name=self.name))
        self._warn_if_pos_missing(docs)
        segments = self.segments(docs)
        if not segments:
            return self._empty_scores()
        # set_annotations reads the trees and labels only: no padded arc scores.
        return self.model.predict(ParserInput(docs, segments, None, arc_scores=False))

    def _warn_if_pos_missing(self, docs: List[Doc]) -> None:
        """W003, once per pipe: an encoder that reads UPOS gets docs without any."""
        if getattr(self, "_pos_warned", False) or not self.model.layers[0].attrs.get("reads_pos"):
            return
        words = [doc for doc in docs if len(doc)]
        if words and not any(doc.has_annotation("POS") for doc in words):
            self._pos_warned = True
            warnings.warn(Warnings.W003.format(name=self.name))

    def _empty_scores(self) -> ParserScores:
        n_labels = len(self.labels)
        return ParserScores(
            numpy.zeros((0, 0, 1), dtype="f"),
            numpy.zeros((0, 0, n_labels), dtype="f"),
            numpy.zeros((0, 0), dtype="int64"),
            numpy.zeros((0,), dtype="int64"),
            [],
        )

    def set_annotations(self, docs: Iterable[Doc], scores: ParserScores) -> None:
        """Write heads and labels, one tree per segment; sentences follow the trees.

        Labels are chosen and heads made absolute for the whole batch in array
        operations, then written with one `Doc.from_array` per doc."""
        docs = list(docs)
        if not scores.segments:
            return
        segments = numpy.asarray(scores.segments, dtype="int64").reshape(-1, 3)
        doc_index, starts = segments[:, 0], segments[:, 1]
        lengths = segments[:, 2] - starts
        heads = numpy.asarray(scores.heads)
        in_segment = numpy.arange(heads.shape[1])[None, :] < lengths[:, None]
        # One entry per segment token, in segment order (the padding is never copied).
        token_heads = heads[in_segment]
        token_logits = numpy.asarray(scores.label_logits)[in_segment]
        labels = self._choose_labels(token_logits, token_heads == 0, self._root_index())
        token_labels = self._label_ids()[labels]
        token_doc = numpy.repeat(doc_index, lengths)
        token_start = numpy.repeat(starts, lengths)
        token_position = token_start + (numpy.arange(token_heads.shape[0]) - numpy.repeat(numpy.cumsum(lengths) - lengths, lengths))
        token_head = numpy.where(token_heads == 0, token_position, token_start + token_heads - 1)
        order = numpy.argsort(token_doc, kind="stable")
        bounds = numpy.searchsorted(token_doc[order], numpy.arange(len(docs) + 1))
        for d, doc in enumerate(docs):
            tokens = order[bounds[d] : bounds[d + 1]]
            if not tokens.shape[0]:
                continue
            positions = numpy.arange(len(doc), dtype="int64")
            abs_heads = positions.copy()
            deps = numpy.zeros(len(doc), dtype="uint64")
            abs_heads[token_position[tokens]] = token_head[tokens]
            deps[token_position[tokens]] = token_labels[tokens]
            values = numpy.empty((len(doc), 2), dtype="uint64")
            values[:, 0] = (abs_heads - positions).astype("int64").view("uint64")
            values[:, 1] = deps
            doc.from_array([HEAD, DEP], values)

    def _choose_labels(
        self, label_logits: numpy.ndarray, is_root: numpy.ndarray, root_index: int
    ) -> numpy.ndarray:
        """The best label of each token (any leading shape, labels last)."""
        if root_index < 0 or label_logits.size == 0:
            return label_logits.argmax(axis=-1)
        # The root label goes to the root's child and to no other token.
        constrained = label_logits.copy()
        constrained[..., root_index] = -numpy.inf
        labels = constrained.argmax(axis=-1)
        labels[is_root] = root_index
        return labels

    def _label_ids(self) -> numpy.ndarray:
        return numpy.asarray([self.vocab.strings.add(label) for label in self.labels], dtype="uint64")

    def _root_index(self) -> int:
        root = self.cfg.get("root_label")
        return self.labels.index(root) if root in self.labels else -1

    # ------------------------------------------------------------------ train

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch: cross-entropy over heads and over labels at the gold head."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "BiaffineParser.update")
        docs = [eg.predicted for eg in examples]
        segments, gold = self._gold(examples)
        if not segments or not (gold[0] >= 0).any():
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(ParserInput(docs, segments, gold[0]))
        loss, d_scores = self._loss(scores, gold)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(
        self, examples: Iterable[Example], scores: ParserScores
    ) -> Tuple[float, Tuple[Floats3d, Floats3d]]:
        """Cross-entropy of the scores against the gold heads and labels (paper eq. 2).

        RETURNS (Tuple[float, Tuple[Floats3d, Floats3d]]): The loss and its gradient
            with respect to the arc and label logits.
        """
        _, gold = self._gold(list(examples), segments=scores.segments)
        return self._loss(scores, gold)

    def _loss(
        self, scores: ParserScores, gold: GoldArrays
    ) -> Tuple[float, Tuple[Floats3d, Floats3d]]:
        gold_heads, gold_labels = gold
        normalize = self._normalize_loss
        arc_loss, d_arc = softmax_cross_entropy(
            self.model.ops, scores.arc_logits, gold_heads, normalize=normalize
        )
        label_targets = numpy.where(gold_heads >= 0, gold_labels, -1)
        label_loss, d_label = softmax_cross_entropy(
            self.model.ops, scores.label_logits, label_targets, normalize=normalize
        )
        return arc_loss + label_loss, (d_arc, d_label)

    def _gold(
        self, examples: List[Example], segments: Optional[List[Segment]] = None
    ) -> Tuple[List[Segment], GoldArrays]:
        """Segments (gold sentences where known) and padded gold arrays for a batch."""
        label_index = {label: i for i, label in enumerate(self.labels)}
        aligned = []
        starts = []
        for eg in examples:
            n = len(eg.predicted)
            if eg.reference.has_annotation("DEP"):
                heads, deps = eg.get_aligned_parse(projectivize=False)
            else:
                heads, deps = [None] * n, [None] * n
            aligned.append((heads, deps))
            if eg.reference.has_annotation("SENT_START") and n:
                sent_starts = eg.get_aligned_sent_starts()
                starts.append([i for i, flag in enumerate(sent_starts) if i == 0 or flag])
            else:
                starts.append(None)
        if segments is None:
            docs = [eg.predicted for eg in examples]
            segments = doc_segments(docs, self.cfg["max_sentence_length"], starts)
        max_len = max((end - start for _, start, end in segments), default=0)
        gold_heads = numpy.full((len(segments), max_len), -1, dtype="int64")
        gold_labels = numpy.full((len(segments), max_len), -1, dtype="int64")
        for s, (d, start, end) in enumerate(segments):
            heads, deps = aligned[d]
            for k in range(end - start):
                i = start + k
                head = heads[i]
                if head is None:
                    continue
                if head == i:
                    gold_heads[s, k] = 0
                elif start <= head < end:
                    gold_heads[s, k] = head - start + 1
                else:
                    continue
                gold_labels[s, k] = label_index.get(deps[i], -1)
        return segments, (gold_heads, gold_labels)

    # ------------------------------------------------------------------ distill

    def teacher_targets(
        self, docs: List[Doc], segments: List[Segment], gold_heads: Ints2d
    ) -> ParserTargets:
        """As a teacher: head and label distributions for the student's segments.

        Labels are scored at the gold head where the corpus has one, else at this
        parser's own decoded head, so teacher and student compare the same arcs.
        docs (List[Doc]): The docs, processed by the teacher's earlier components.
        segments (List[Segment]): The student's segments (same tokens).
        gold_heads (Ints2d): (S, L) gold heads, -1 where unknown.
        RETURNS (ParserTargets): Log-probabilities at temperature 1.
        """
        lengths = numpy.asarray([end - start for _, start, end in segments])
        is_token = numpy.arange(gold_heads.shape[1])[None, :] < lengths[:, None]
        if (gold_heads[is_token] >= 0).all():
            # Every token has a gold head: one pass scores labels there.
            scores = self.model.predict(ParserInput(docs, segments, gold_heads))
            label_heads = gold_heads
        else:
            scores = self.model.predict(ParserInput(docs, segments, None))
            label_heads = numpy.where(gold_heads >= 0, gold_heads, scores.heads)
            if (gold_heads >= 0).any():
                scores = self.model.predict(ParserInput(docs, segments, label_heads))
        return ParserTargets(
            log_softmax(numpy.asarray(scores.arc_logits, dtype="float32")),
            log_softmax(numpy.asarray(scores.label_logits, dtype="float32")),
            label_heads,
        )

    def distill(
        self,
        teacher_pipe: "BiaffineParser",
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Train on the teacher's distributions (paper eq. 3).

        Loss: T^2 KL on head distributions + T^2 KL on label distributions, plus
        gold_weight x cross-entropy on gold heads and labels where the reference has
        them (unlabeled text: KL only).
        teacher_pipe: A greenkd_parser, or the CachedTeacher the distillation loop
            passes (its head distributions come from the teacher pass).
        examples (Iterable[Example]): predicted = the student's docs; reference = the
            same tokens, with gold annotation where available.
        RETURNS (Dict[str, float]): The updated losses.
        """
        examples, losses = self.begin_distill(examples, losses)
        segments, gold = self._gold(examples)
        if not segments:
            return losses
        docs = [eg.predicted for eg in examples]
        if self._silver_teacher:
            loss = self._distill_silver(teacher_pipe, examples, segments, gold, drop)
        else:
            if isinstance(teacher_pipe, CachedTeacher):
                targets = decode_head_distributions(teacher_pipe, docs, segments, gold[0])
            else:
                targets = teacher_pipe.teacher_targets(docs, segments, gold[0])
            set_dropout_rate(self.model, drop)
            scores, backprop = self.model.begin_update(
                ParserInput(docs, segments, targets.label_heads)
            )
            loss, (d_arc, d_label) = self.get_teacher_student_loss(targets, scores)
            if self.gold_weight and (gold[0] >= 0).any():
                gold_loss, (g_arc, g_label) = self._loss(scores, gold)
                loss += self.gold_weight * gold_loss
                d_arc = d_arc + self.gold_weight * g_arc
                d_label = d_label + self.gold_weight * g_label
            backprop((d_arc, d_label))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    @property
    def _silver_teacher(self) -> bool:
        return self.distill_settings.targets == "silver"

    def _distill_silver(
        self, teacher_pipe: Any, examples: List[Example], segments: List[Segment], gold: GoldArrays, drop: float
    ) -> float:
        """Learn a transition parser's predicted trees as if they were gold: the
        cross-entropy of the paper's eq. 2 on the teacher's heads and labels. Where the
        corpus has gold (and gold_weight > 0), the gold head and label replace the
        teacher's for that token."""
        docs = [eg.predicted for eg in examples]
        silver_docs = silver_references(teacher_pipe, docs, "deps")
        silver_examples = [Example(doc, silver) for doc, silver in zip(docs, silver_docs)]
        _, (heads, labels) = self._gold(silver_examples, segments=segments)
        if self.gold_weight:
            known = gold[0] >= 0
            heads = numpy.where(known, gold[0], heads)
            labels = numpy.where(known, gold[1], labels)
        if not (heads >= 0).any():
            return 0.0
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(ParserInput(docs, segments, heads))
        loss, d_scores = self._loss(scores, (heads, labels))
        backprop(d_scores)
        return loss

    def get_teacher_student_loss(
        self, teacher_scores: ParserTargets, student_scores: ParserScores
    ) -> Tuple[float, Tuple[Floats3d, Floats3d]]:
        """KL(teacher || student) on head and on label distributions at temperature T,
        averaged over the tokens, or summed with normalize_loss = false.

        RETURNS (Tuple[float, Tuple[Floats3d, Floats3d]]): The loss and its gradient
            with respect to the student's arc and label logits.
        """
        lengths = student_scores.lengths
        max_len = student_scores.arc_logits.shape[1]
        mask = numpy.arange(max_len)[None, :] < numpy.asarray(lengths)[:, None]
        arc_loss, d_arc = kl_divergence(
            teacher_scores.arc_logprobs, student_scores.arc_logits, mask, self.temperature
        )
        label_loss, d_label = kl_divergence(
            teacher_scores.label_logprobs, student_scores.label_logits, mask, self.temperature
        )
        scale = 1.0 if self._normalize_loss else float(mask.sum())
        return (arc_loss + label_loss) * scale, (d_arc * scale, d_label * scale)

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        """A greenkd_parser teaches head and label distributions (soft targets); spaCy's
        transition `parser` teaches its predicted trees (silver targets); anything else
        is E010. Checked before the student is initialized with the teacher's labels."""
        silver = type(teacher_pipe) is DependencyParser
        self.require_teacher_kind(
            teacher_pipe,
            isinstance(teacher_pipe, BiaffineParser) or silver,
            "greenkd_parser (soft targets) or spaCy's parser (silver targets)",
        )
        # Held in the run's settings, not cfg: the choice belongs to this run's teacher.
        self.update_distill_settings(targets="silver" if silver else "soft")

    def teacher_settings(self) -> Dict:
        """What, besides the teacher and the corpus, shapes the cached targets."""
        if self._silver_teacher:
            return silver_settings("deps")
        return {"kind": "parser", "max_sentence_length": self.cfg["max_sentence_length"]}

    def teacher_records(
        self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int
    ) -> Dict[str, Dict]:
        """The teacher's head and label distributions for a batch, compressed to the
        top-k heads per token, one cache record per doc (distillation/targets.py)."""
        if self._silver_teacher:
            annotated = list(teacher_pipe.pipe(teacher_docs))
            return encode_silver([eg.predicted for eg in examples], annotated, "deps")
        segments, gold = self._gold(examples)
        if not segments:
            return {}
        targets = teacher_pipe.teacher_targets(teacher_docs, segments, gold[0])
        return encode_head_distributions(teacher_docs, segments, targets, top_k)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Collect the label set and build the model for it.

        get_examples (Callable[[], Iterable[Example]]): Training examples, some with
            dependency annotation.
        labels (Optional[List[str]]): The labels, e.g. from `spacy init labels`.
        """
        validate_get_examples(get_examples, "BiaffineParser.initialize")
        root_counts: Counter = Counter()
        if labels is None:
            found = set()
            for eg in get_examples():
                if not eg.reference.has_annotation("DEP"):
                    continue
                for token in eg.reference:
                    if token.dep_:
                        found.add(token.dep_)
                        if token.head.i == token.i:
                            root_counts[token.dep_] += 1
            labels = sorted(found)
        if not labels:
            raise ValueError(Errors.E003.format(name=self.name))
        for label in labels:
            self.vocab.strings.add(label)
        self.cfg["labels"] = sorted(labels)
        if root_counts:
            self.cfg["root_label"] = root_counts.most_common(1)[0][0]
        elif "ROOT" in labels:
            self.cfg["root_label"] = "ROOT"
        self.model.set_dim("nO", len(self.labels), force=True)
        sample = [eg.predicted for _, eg in zip(range(10), get_examples())]
        self.model.initialize(X=ParserInput(sample, self.segments(sample), None))
        self.cfg["encoder_width"] = self.model.get_dim("nI")

    # ------------------------------------------------------------------ serialize

    def _build_from_cfg(self, cfg: Dict) -> None:
        if cfg.get("encoder_width") and cfg.get("labels"):
            self.model.set_dim("nO", len(cfg["labels"]), force=True)
            ensure_head(self.model, cfg["encoder_width"], len(cfg["labels"]))


def softmax_cross_entropy(
    ops, logits: Floats3d, targets: Ints2d, normalize: bool = True
) -> Tuple[float, Floats3d]:
    """Cross-entropy over positions with a target (>= 0) and its gradient: the mean,
    or with normalize=False the sum."""
    probs = ops.softmax(logits, axis=-1)
    mask = targets >= 0
    n = int(mask.sum())
    d_logits = probs * mask[..., None]
    if n == 0:
        return 0.0, ops.alloc(logits.shape, dtype=logits.dtype)
    rows, cols = numpy.nonzero(mask)
    gold_probs = probs[rows, cols, targets[rows, cols]]
    d_logits[rows, cols, targets[rows, cols]] -= 1.0
    total = float(-numpy.log(numpy.maximum(gold_probs, 1e-12)).sum())
    if not normalize:
        return total, d_logits
    return total / n, d_logits / n
