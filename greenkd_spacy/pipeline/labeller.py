"""greenkd_ner and greenkd_chunker: LD-Net sequence labelling (ld-net-lm-pruning.md).

Both are the same CRF labeller; they differ only in where spans come from and go to:
`greenkd_ner` reads and writes `doc.ents`, `greenkd_chunker` `doc.spans[spans_key]`.
Tags are BILUO (spaCy's name for BIOES) inside; users only ever see spans.

Layer selection (paper 2.4): with `lm_lambda0 > 0` every update adds lambda_0 * R3(z) on
the LM's layer gates and projects them into [0, 1] after the optimizer step; then
`prune_lm()` (or `spacy greenkd-prune-lm`) deletes the layers whose gate is 0.
"""
import itertools
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
import torch
from spacy.language import Language
from spacy.pipeline import EntityRecognizer, TrainablePipe
from spacy.scorer import Scorer
from spacy.tokens import Doc, Span
from spacy.training import Example, offsets_to_biluo_tags, validate_examples, validate_get_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..decoding.biluo import BiluoDecoder
from ..errors import Errors
from ..models.labeller import encoder_module, encoder_width, ensure_encoder, ensure_head, is_ldnet_encoder
from ..distillation.contract import DistillableMixin
from ..distillation.targets import CachedTeacher, decode_tag_marginals, encode_silver, encode_tag_marginals, silver_references, silver_settings
from .serialize import ShapedFromCfgMixin

# The CPU-first defaults (configs/defaults/ner.cfg and chunk.cfg, each chosen by
# measurement against spaCy's own ner): the paper's CRF over a small BiLSTM on hashed
# words, affixes and word shapes, with word dropout, no per-character LSTM and no LM.
# The NER default's BiLSTM is 96 a direction (as accurate as 128 in its 10-minute pair,
# and 1.4x as fast), the chunker's stays at 128, the width its own pair was measured
# with. The paper's LD-Net (greenkd.LDNetEncoder.v1, which a pretrained LM needs) is
# configs/paper/ner_ldnet.cfg.
DEFAULT_LABELLER_MODEL_CONFIG = """
[model]
@architectures = "greenkd.CRFLabeller.v1"
dropout = 0.5
max_length = 256

[model.tok2vec]
@architectures = "greenkd.BiLSTMEncoder.v1"
word_width = 64
word_rows = 50000
affix_width = 32
affix_rows = 5000
shape_width = 16
shape_rows = 1000
word_dropout = 0.2
pos_width = 0
include_static_vectors = false
hidden_width = {hidden_width}
depth = 1
dropout = 0.5
"""
DEFAULT_NER_MODEL = Config().from_str(DEFAULT_LABELLER_MODEL_CONFIG.format(hidden_width=96))["model"]
DEFAULT_CHUNKER_MODEL = Config().from_str(DEFAULT_LABELLER_MODEL_CONFIG.format(hidden_width=128))["model"]
PREFIXES = ("B", "I", "L", "U")


def tags_for(labels: Sequence[str]) -> List[str]:
    """The BILUO tag set of a label set: "O", then B/I/L/U for each label."""
    return ["O"] + [f"{p}-{label}" for label in labels for p in PREFIXES]


class SpansScorer:
    """P/R/F of doc.spans[spans_key] (scores named spans_KEY_p/r/f and per type). A
    module-level class, not a closure, so that a pipeline holding it pickles (as
    `nlp.pipe(n_process=2)` needs under the spawn start method of macOS and Windows)."""

    def __init__(self, spans_key: str):
        self.spans_key = spans_key

    def __call__(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        return Scorer.score_spans(
            examples,
            attr=f"spans_{self.spans_key}",
            getter=self.spans_of,
            has_annotation=self.has_spans,
            allow_overlap=False,
        )

    def spans_of(self, doc: Doc, attr: str) -> Any:
        return doc.spans.get(self.spans_key, [])

    def has_spans(self, doc: Doc) -> bool:
        return self.spans_key in doc.spans


@registry.scorers("greenkd.spans_scorer.v1")
def make_spans_scorer(spans_key: str = "chunks") -> Callable:
    """P/R/F of doc.spans[spans_key] (scores named spans_KEY_p/r/f and per type)."""
    return SpansScorer(spans_key)


@registry.callbacks("greenkd.layer_selection.v1")
def make_layer_selection(lambda0: float = 0.05, target_layers: int = 4, gate_lr: float = 0.05) -> Callable[[Language], Language]:
    """[initialize] before_init callback that switches on layer selection (paper 2.4) for
    every greenkd labeller of a pipeline, typically one sourced from a trained LD-Net:
    lambda0 x R3 on the LM gates, at most target_layers (lambda_1) kept before the L1
    part switches off, gates on SGD with momentum at gate_lr."""

    def before_init(nlp: Language) -> Language:
        # nlp.components, not nlp.pipeline: spacy train disables sourced components
        # while it initializes the others.
        for _, pipe in nlp.components:
            if isinstance(pipe, SequenceLabeller):
                pipe.cfg.update(lm_lambda0=lambda0, lm_target_layers=target_layers, lm_gate_lr=gate_lr)
        return nlp

    return before_init


@Language.factory(
    "greenkd_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config={
        "model": DEFAULT_NER_MODEL,
        "lm_lambda0": 0.0,
        "lm_target_layers": 0,
        "lm_gate_lr": 0.05,
        "normalize_loss": True,
        "scorer": {"@scorers": "spacy.ner_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_ner(
    nlp: Language, name: str, model: Model, lm_lambda0: float, lm_target_layers: int, lm_gate_lr: float,
    normalize_loss: bool, scorer: Optional[Callable],
) -> "NERLabeller":
    """A named-entity recognizer: a CRF over a BiLSTM encoder (LD-Net's, with a
    character LSTM and an optional pruned LM, in the paper's configs), writing doc.ents.

    model (Model): greenkd.CRFLabeller.v1 over an encoder (default: the CPU-first
        BiLSTM over hashed words, affixes and shapes; the paper's LD-Net encoder, NoLM
        until a pretrained LM is given at initialize with `lm_path`, is
        configs/paper/ner_ldnet.cfg).
    lm_lambda0 (float): Weight of the R3 layer-selection regulariser (0: off; the
        paper uses 0.05 for NER while pruning).
    lm_target_layers (int): lambda_1, how many LM layers (both directions together)
        may stay before the L1 part of R3 switches off.
    lm_gate_lr (float): Learning rate of the gates' SGD with momentum (0.9).
    normalize_loss (bool): Average the loss over the batch: the CRF loss (gold or the
        teacher's entities) over its sequences, the KL on a teacher's marginals over its
        tokens; false sums them, the scale of spaCy's own tagger, parser and ner losses.
        Sum them when the labeller listens to an encoder those components also train:
        averaged, its gradient into the shared layers is drowned by theirs.
    """
    return NERLabeller(
        nlp.vocab, model, name, lm_lambda0=lm_lambda0, lm_target_layers=lm_target_layers, lm_gate_lr=lm_gate_lr,
        normalize_loss=normalize_loss, scorer=scorer,
    )


@Language.factory(
    "greenkd_chunker",
    assigns=["doc.spans"],
    default_config={
        "model": DEFAULT_CHUNKER_MODEL,
        "spans_key": "chunks",
        "lm_lambda0": 0.0,
        "lm_target_layers": 0,
        "lm_gate_lr": 0.05,
        "normalize_loss": True,
        "scorer": {"@scorers": "greenkd.spans_scorer.v1", "spans_key": "chunks"},
    },
    default_score_weights={"spans_chunks_f": 1.0, "spans_chunks_p": 0.0, "spans_chunks_r": 0.0, "spans_chunks_per_type": None},
)
def make_chunker(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    lm_lambda0: float,
    lm_target_layers: int,
    lm_gate_lr: float,
    normalize_loss: bool,
    scorer: Optional[Callable],
) -> "ChunkLabeller":
    """A chunker (e.g. CoNLL-2000 NP/VP/PP chunks): the same labeller, writing
    doc.spans[spans_key]. Set the scorer's spans_key to the same key (and the score
    weights' names, spans_KEY_f) when you change it. The other settings are
    greenkd_ner's."""
    return ChunkLabeller(
        nlp.vocab, model, name, spans_key=spans_key, lm_lambda0=lm_lambda0, lm_target_layers=lm_target_layers,
        lm_gate_lr=lm_gate_lr, normalize_loss=normalize_loss, scorer=scorer,
    )


class SequenceLabeller(ShapedFromCfgMixin, DistillableMixin, TrainablePipe):
    """What the NER and the chunker share; subclasses say where spans live."""

    _gate_optimizer: Optional[torch.optim.SGD] = None
    # Spans from tag indices, made again when the tag set changes.
    _decoder: Optional[BiluoDecoder] = None

    def __init__(
        self, vocab: Vocab, model: Model, name: str, *, lm_lambda0: float = 0.0, lm_target_layers: int = 0,
        lm_gate_lr: float = 0.05, normalize_loss: bool = True, scorer=None, **cfg,
    ):
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {
            "labels": [], "lm_lambda0": lm_lambda0, "lm_target_layers": lm_target_layers,
            "lm_gate_lr": lm_gate_lr, "normalize_loss": normalize_loss, "lm_config": None, "encoder_width": None,
            **cfg,
        }

    # ------------------------------------------------------------------ labels

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    @property
    def tags(self) -> List[str]:
        return tags_for(self.labels)

    def add_label(self, label: str) -> int:
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        return 1

    # ------------------------------------------------------------------ spans (subclass)

    def gold_spans(self, doc: Doc) -> Optional[List[Span]]:
        raise NotImplementedError

    def write_spans(self, doc: Doc, spans: List[Span]) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ predict

    def predict(self, docs: Iterable[Doc]):
        """Viterbi tags per doc, (tags, None): what set_annotations needs. The tag
        marginals cost a forward-backward pass more; `predict_marginals` gives them."""
        return self._predict(list(docs), marginals=False)

    def predict_marginals(self, docs: Iterable[Doc]):
        """(Viterbi tags, per-token tag marginals (n_tokens, n_tags)) per doc: what a
        teacher hands its students."""
        return self._predict(list(docs), marginals=True)

    def _predict(self, docs: List[Doc], marginals: bool):
        if len(self.model.layers) < 2:  # the CRF head is added at initialize
            raise ValueError(Errors.E042.format(name=self.name))
        if not docs or not any(len(doc) for doc in docs):
            tags = [numpy.zeros(len(doc), dtype="int64") for doc in docs]
            probs = [numpy.zeros((len(doc), len(self.tags)), dtype="float32") for doc in docs]
            return tags, probs if marginals else None
        return self.model.predict((docs, {"marginals": marginals}))

    def set_annotations(self, docs: Iterable[Doc], scores) -> None:
        tags, _ = scores
        decoder = self._decoder
        if decoder is None or decoder.tags != self.tags:
            decoder = self._decoder = BiluoDecoder(self.tags)
        self.write_paths(list(docs), tags, decoder)

    def write_paths(self, docs: List[Doc], tags: Sequence[Sequence[int]], decoder: BiluoDecoder) -> None:
        """Annotate the docs with their Viterbi paths' spans."""
        for doc, doc_tags in zip(docs, tags):
            self.write_spans(doc, decoder.spans(doc, doc_tags) if len(doc) else [])

    # ------------------------------------------------------------------ train

    def _gold_tags(self, examples: Sequence[Example]) -> Tuple[List[numpy.ndarray], List[bool]]:
        """Tag indices per predicted doc, from the reference spans aligned to the
        predicted tokens; a doc whose gold is incomplete (tokens without annotation,
        spans that do not align) is left out of the CRF loss."""
        index = {tag: i for i, tag in enumerate(self.tags)}
        gold, has_gold = [], []
        for eg in examples:
            spans = self.gold_spans(eg.reference)
            tags: Optional[List[str]] = None
            if spans is not None:
                aligned = eg.get_aligned_spans_y2x(spans, allow_overlap=False)
                if len(aligned) == len(spans):
                    offsets = [(s.start_char, s.end_char, s.label_) for s in aligned]
                    tags = offsets_to_biluo_tags(eg.predicted, offsets)
            ok = tags is not None and all(t in index for t in tags)
            gold.append(numpy.asarray([index[t] for t in tags], dtype="int64") if ok else numpy.zeros(len(eg.predicted), dtype="int64"))
            has_gold.append(ok)
        return gold, has_gold

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None, losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """CRF negative log-likelihood of the gold tags (+ lambda_0 R3 on the LM gates)."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        gold, has_gold = self._gold_tags(examples)
        if not any(has_gold):
            return losses
        targets = {"gold": gold, "has_gold": has_gold, "gold_weight": 1.0}
        losses[self.name] += self._step([eg.predicted for eg in examples], targets, drop, sgd)
        return losses

    @property
    def _selecting_layers(self) -> bool:
        """Layer selection is on (lambda_0 > 0): the gates learn under R3."""
        return float(self.cfg.get("lm_lambda0", 0.0)) > 0

    def _step(self, docs: List[Doc], targets: Dict[str, Any], drop: float, sgd: Optional[Optimizer]) -> float:
        set_dropout_rate(self.model, drop)
        targets = {**targets, "normalize": self._normalize_loss}
        encoder = self._ldnet_module()
        if encoder is not None:
            encoder.train_gates(self._selecting_layers)
        loss, backprop = self.model.begin_update((docs, targets))
        backprop(1.0)
        loss += self._regularise_gates()
        if sgd is not None:
            self.finish_update(sgd)
        return loss

    def _regularise_gates(self) -> float:
        lambda0 = float(self.cfg.get("lm_lambda0", 0.0))
        encoder = self._ldnet_module()
        if lambda0 <= 0 or encoder is None or encoder.lm is None:
            return 0.0
        penalty = lambda0 * encoder.r3(float(self.cfg.get("lm_target_layers", 0)))
        penalty.backward()
        return float(penalty.detach())

    def finish_update(self, sgd: Optimizer) -> None:
        """Optimizer step. The LM gates are not the training optimizer's: they stay at 1
        while lm_lambda0 = 0, and during layer selection they take a step of their own
        SGD with momentum (the paper's projected gradient descent), then are projected
        into [0, 1]."""
        encoder = self._ldnet_module()
        gates = list(encoder.gates.values()) if encoder is not None and encoder.lm is not None else []
        if gates and self._selecting_layers:
            if self._gate_optimizer is None or self._gate_optimizer.param_groups[0]["params"][0] is not gates[0]:
                self._gate_optimizer = torch.optim.SGD(gates, lr=float(self.cfg.get("lm_gate_lr", 0.05)), momentum=0.9)
            self._gate_optimizer.step()
        for gate in gates:
            gate.grad = None
        self.model.finish_update(sgd)
        if encoder is not None:
            encoder.project()

    def get_loss(self, examples: Iterable[Example], scores: Any) -> Tuple[float, Any]:
        """The CRF loss is computed inside the model (see update); this gives the NLL
        of the gold tags without gradients, for monitoring."""
        examples = list(examples)
        gold, has_gold = self._gold_tags(examples)
        targets = {"gold": gold, "has_gold": has_gold, "normalize": self._normalize_loss}
        loss = self.model.predict(([eg.predicted for eg in examples], targets))
        return float(loss), None

    # ------------------------------------------------------------------ distill

    def check_teacher_kind(self, teacher_pipe: Any) -> None:
        """A greenkd labeller teaches per-token tag marginals (soft targets); for
        greenkd_ner, spaCy's transition `ner` teaches its predicted entities (silver
        targets). Anything else is E010, before the teacher pass."""
        silver = isinstance(self, NERLabeller) and type(teacher_pipe) is EntityRecognizer
        expected = "greenkd_ner or greenkd_chunker" + (" (soft), or spaCy's ner (silver)" if isinstance(self, NERLabeller) else "")
        self.require_teacher_kind(teacher_pipe, isinstance(teacher_pipe, SequenceLabeller) or silver, expected)
        # Held in the run's settings, not cfg: the choice belongs to this run's teacher.
        self.update_distill_settings(targets="silver" if silver else "soft")

    @property
    def _silver_teacher(self) -> bool:
        return self.distill_settings.targets == "silver"

    def teacher_settings(self) -> Dict[str, Any]:
        if self._silver_teacher:
            return silver_settings("ents")
        return {"kind": "labeller", "tags": self.tags}

    def teacher_records(self, teacher_pipe: Any, teacher_docs: List[Doc], examples: List[Example], top_k: int) -> Dict[str, Dict]:
        """The teacher's per-token tag marginals (float16), one record per doc; from
        spaCy's ner, its predicted entities."""
        if self._silver_teacher:
            return encode_silver([eg.predicted for eg in examples], list(teacher_pipe.pipe(teacher_docs)), "ents")
        _, marginals = teacher_pipe.predict_marginals(teacher_docs)
        return encode_tag_marginals([eg.predicted for eg in examples], marginals)

    def distill(self, teacher_pipe: Any, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None, losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """T^2 KL(teacher || student) on per-token tag marginals, + gold_weight x CRF NLL
        where the reference has gold spans (paper's labeller + DESIGN's distill contract)."""
        examples, losses = self.begin_distill(examples, losses)
        if not examples:
            return losses
        docs = [eg.predicted for eg in examples]
        if self._silver_teacher:
            # The teacher's entities as the gold of the CRF; where the corpus has gold
            # entities (and gold_weight > 0), those instead, weighted by gold_weight.
            silver_docs = silver_references(teacher_pipe, docs, "ents")
            silver, has_silver = self._gold_tags([Example(doc, ref) for doc, ref in zip(docs, silver_docs)])
            weights = None
            if self.gold_weight > 0:
                gold, has_gold = self._gold_tags(examples)
                silver = [g if ok else t for g, t, ok in zip(gold, silver, has_gold)]
                has_silver = [ok or ok_s for ok, ok_s in zip(has_gold, has_silver)]
                # A gold doc weighs gold_weight against a teacher-annotated one's 1: with
                # much more silver than gold text, its errors can outweigh the gold.
                if self.gold_weight != 1.0:
                    weights = [self.gold_weight if ok else 1.0 for ok in has_gold]
            if any(has_silver):
                targets = {"gold": silver, "has_gold": has_silver, "gold_weight": 1.0, "doc_weights": weights}
                losses[self.name] += self._step(docs, targets, drop, sgd)
            return losses
        if isinstance(teacher_pipe, CachedTeacher):
            teacher = decode_tag_marginals(teacher_pipe, docs)
        else:
            _, teacher = teacher_pipe.predict_marginals(docs)  # bare docs, as the teacher pass
        targets: Dict[str, Any] = {"teacher": teacher, "temperature": self.temperature, "gold_weight": self.gold_weight}
        if self.gold_weight > 0:
            gold, has_gold = self._gold_tags(examples)
            if any(has_gold):
                targets.update(gold=gold, has_gold=has_gold)
        losses[self.name] += self._step(docs, targets, drop, sgd)
        return losses

    # ------------------------------------------------------------------ initialize

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None, labels: Optional[Iterable[str]] = None, lm_path: Optional[str] = None) -> None:
        """Collect the labels, attach a pretrained LM (LD-Net encoder only) and build
        the CRF for the tag set.

        labels (Optional[Iterable[str]]): The span labels (default: from the examples).
        lm_path (Optional[str]): Directory written by `spacy greenkd-pretrain-lm`
            (model-best or model-last). Without it the encoder is the NoLM baseline.
        """
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        if labels is not None:
            self.cfg["labels"] = list(labels)
        else:
            found = set()
            for eg in get_examples():
                found.update(span.label_ for span in (self.gold_spans(eg.reference) or []))
            self.cfg["labels"] = sorted(found)
        if not self.cfg["labels"]:
            raise ValueError(Errors.E030.format(name=self.name))
        tok2vec = self.model.layers[0]
        if lm_path is not None:
            if not is_ldnet_encoder(tok2vec):
                raise ValueError(Errors.E031.format(name=self.name, arch=tok2vec.name))
            lm_config, lm_state = load_pretrained_lm(lm_path)
            ensure_encoder(tok2vec, lm_config, lm_state)
            self.cfg["lm_config"] = lm_config
        elif is_ldnet_encoder(tok2vec):
            ensure_encoder(tok2vec, None)
        self.model.attrs["tags"] = self.tags
        # Two docs for the shapes; not a list of the whole (possibly streamed) corpus.
        docs = [eg.predicted for eg in itertools.islice(get_examples(), 2)]
        self.model.initialize(X=docs or None)
        ensure_head(self.model, encoder_width(self.model, docs), self.tags)
        # Loading rebuilds the head before any weights are read, when an encoder such
        # as a TransformerListener cannot tell its width yet: keep it with the cfg.
        self.cfg["encoder_width"] = self.model.get_dim("nI")

    def _build_from_cfg(self, cfg: Dict) -> None:
        tok2vec = self.model.layers[0]
        if is_ldnet_encoder(tok2vec):
            ensure_encoder(tok2vec, cfg.get("lm_config"))
        if cfg.get("labels"):
            self.model.attrs["tags"] = tags_for(cfg["labels"])
            width = cfg.get("encoder_width") or encoder_width(self.model)
            if not width:
                raise ValueError(Errors.E041.format(name=self.name, arch=tok2vec.name))
            ensure_head(self.model, width, tags_for(cfg["labels"]))

    # ------------------------------------------------------------------ pruning

    def _ldnet_module(self):
        tok2vec = self.model.layers[0]
        if is_ldnet_encoder(tok2vec) and tok2vec.layers:
            return encoder_module(tok2vec)
        return None

    def lm_gates(self) -> Dict[str, List[float]]:
        encoder = self._ldnet_module()
        return encoder.gate_values() if encoder is not None else {}

    def lm_flops_per_token(self) -> int:
        encoder = self._ldnet_module()
        return encoder.lm_flops_per_token() if encoder is not None else 0

    def prune_lm(self) -> Tuple[int, int]:
        """Delete the LM layers whose gate is 0; RETURNS LM FLOPs/token before, after."""
        encoder = self._ldnet_module()
        if encoder is None or encoder.lm is None:
            raise ValueError(Errors.E032.format(name=self.name))
        kept = {name: [i for i, z in enumerate(gate.tolist()) if z > 0] for name, gate in encoder.gates.items()}
        before, after = encoder.prune()
        config = dict(self.cfg["lm_config"])
        previous = config.get("kept_layers") or {name: list(range(config["depth"])) for name in kept}
        config["kept_layers"] = {name: [previous[name][i] for i in kept[name]] for name in kept}
        self.cfg["lm_config"] = config
        self.model.layers[0].attrs["lm_config"] = config
        # The torch module changed shape: thinc must see the new parameters.
        ensure_encoder_state = {k: v.clone() for k, v in encoder.state_dict().items()}
        ensure_encoder(self.model.layers[0], config)
        encoder_module(self.model.layers[0]).load_state_dict(ensure_encoder_state)
        return before, after


class NERLabeller(SequenceLabeller):
    silver_kind = "ents"  # spaCy's ner can learn its entities

    def gold_spans(self, doc: Doc) -> Optional[List[Span]]:
        if not doc.has_annotation("ENT_IOB"):
            return None
        if any(token.ent_iob == 0 for token in doc):  # "-": missing annotation
            return None
        return list(doc.ents)

    def write_paths(self, docs: List[Doc], tags: Sequence[Sequence[int]], decoder: BiluoDecoder) -> None:
        # Token entity states straight from the tags, a batch at a time, replacing the
        # docs' entities (decoding/biluo.py); no Span per entity is made.
        decoder.write_entities(docs, tags)


class ChunkLabeller(SequenceLabeller):
    silver_kind = "spans"  # spaCy's spancat can learn its chunks

    @property
    def spans_key(self) -> str:
        return self.cfg["spans_key"]

    def gold_spans(self, doc: Doc) -> Optional[List[Span]]:
        if self.spans_key not in doc.spans:
            return None
        return list(doc.spans[self.spans_key])

    def write_spans(self, doc: Doc, spans: List[Span]) -> None:
        doc.spans[self.spans_key] = spans

    def write_paths(self, docs: List[Doc], tags: Sequence[Sequence[int]], decoder: BiluoDecoder) -> None:
        # The batch's spans bounded in one go (decoding/biluo.py), not doc by doc.
        for doc, spans in zip(docs, decoder.batch_spans(docs, tags)):
            doc.spans[self.spans_key] = spans


def load_pretrained_lm(path) -> Tuple[Dict[str, Any], Dict[str, torch.Tensor]]:
    """Read an LM directory: lm_config.json (shapes + vocabulary) and weights.pt."""
    from pathlib import Path

    path = Path(path)
    config_path, weights_path = path / "lm_config.json", path / "weights.pt"
    if not config_path.exists() or not weights_path.exists():
        raise ValueError(Errors.E033.format(path=path))
    config = srsly.read_json(config_path)
    state = torch.load(weights_path, map_location="cpu", weights_only=True)
    return config, state
