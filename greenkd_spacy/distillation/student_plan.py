"""Which student learns each teacher component: the plan `greenkd-init-student` writes
out (student_config.py turns it into a config).

A user arrives with a pipeline, not a study. Writing its student by hand meant splicing
a parser config, an ner block and a [distillation] section (230 lines). Here the
teacher's components are read and each gets the CPU-first student of its kind:

- one shared encoder (spaCy's CNN tok2vec over greenkd's subword hash embeddings, the
  encoder of our parser default) that every student component listens to, so its cost
  is paid once per doc, whatever the number of components;
- a parser: greenkd_parser (biaffine + MST) over a small BiLSTM on the shared encoder,
  learning the teacher's trees; it parses the sentences it is given, so a `senter`
  learns the teacher's sentence starts in front of it (unless the teacher's parser is
  handed a rule sentencizer's sentences: the student then copies that sentencizer);
- tagger, morphologizer, senter, trainable_lemmatizer: spaCy's own, on the shared
  encoder (soft targets where the teacher has distributions);
- ner (spaCy's or greenkd's): greenkd_ner's CRF over a small BiLSTM of its own on the
  shared encoder (the CNN's window of four tokens a side alone left the entities of an
  hour's student of en_core_web_md 10 F behind spaCy's `ner` student on text of another
  source). spaCy's transition `ner` checks every action's validity at every token,
  which for a teacher with 18 entity types (74 actions) cost 61 us/word on one thread
  against 10-26 for the CRF's emission layer and Viterbi;
- text classifiers: greenkd_textcat's linear bag of n-grams plus a convolution over the
  words (greenkd.NgramCNN.v1), which a bag cannot give word order;
- components that cannot be trained (attribute_ruler, a rule lemmatizer, entity_ruler)
  are copied from the teacher by `spacy distill` as they are; the teacher's encoders
  (tok2vec, transformer) are replaced by the student's; disabled components stay out;
  anything else has no student and is named, with what happens to it (dropped).

Student components keep the teacher's names, so code that asks for `nlp.get_pipe("parser")`
works on the student too.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.pipeline import AttributeRuler, TrainablePipe

from ..errors import Errors
from ..tokenization.rules import rule_tokenizer

PRESETS = ("small", "fast", "accurate", "teacher")

# Teacher factory -> student factory.
STUDENT_FACTORY = {
    "tagger": "tagger",
    "morphologizer": "morphologizer",
    "senter": "senter",
    "trainable_lemmatizer": "trainable_lemmatizer",
    "parser": "greenkd_parser",
    "beam_parser": "greenkd_parser",
    "greenkd_parser": "greenkd_parser",
    "ner": "greenkd_ner",
    "beam_ner": "greenkd_ner",
    "greenkd_ner": "greenkd_ner",
    "greenkd_chunker": "greenkd_chunker",
    "spancat": "spancat",
    "textcat": "greenkd_textcat",
    "greenkd_textcat": "greenkd_textcat",
    "textcat_multilabel": "greenkd_textcat_multilabel",
    "greenkd_textcat_multilabel": "greenkd_textcat_multilabel",
}
# The teacher's encoders: the student has its own.
ENCODERS = ("tok2vec", "transformer", "curated_transformer")
# Student factories whose model listens to the shared encoder (the others embed their own).
LISTENERS = ("tagger", "morphologizer", "senter", "trainable_lemmatizer", "greenkd_parser", "greenkd_ner", "spancat")
# What each student learns from its teacher (for the config's comments and the table).
TARGETS = {
    "tagger": "soft: the teacher's tag distributions",
    "morphologizer": "soft: the teacher's POS + feature distributions",
    "senter": "soft: the teacher's sentence-start distributions",
    "trainable_lemmatizer": "silver: the teacher's lemmas",
    "greenkd_parser": "soft: the teacher's head and label distributions",
    "ner": "silver: the teacher's entities",
    "greenkd_ner": "soft: the teacher's per-token tag marginals",
    "greenkd_chunker": "soft: the teacher's per-token tag marginals",
    "spancat": "silver: the teacher's spans",
    "greenkd_textcat": "soft: the teacher's class probabilities",
    "greenkd_textcat_multilabel": "soft: the teacher's class probabilities",
}
# Where the teacher's kind changes what a student learns.
SILVER_FROM = {
    ("greenkd_parser", "parser"): "silver: the teacher's trees",
    ("greenkd_parser", "beam_parser"): "silver: the teacher's trees",
    ("senter", "parser"): "silver: the sentence starts of the teacher's trees",
    ("senter", "beam_parser"): "silver: the sentence starts of the teacher's trees",
    ("greenkd_ner", "ner"): "silver: the teacher's entities",
    ("greenkd_ner", "beam_ner"): "silver: the teacher's entities",
}


# Widths of the shared encoder and the parser's BiLSTM per preset. The fast encoder has
# the depth of spaCy's CNN pipelines (4 window layers: +/-4 tokens of context), which
# every component shares; the parser's own BiLSTM adds the rest of the sentence.
# The small encoder is the parser pipeline default's (width 64, depth 2: +/-2 tokens),
# for a teacher so slow that the student's encoder is most of the speed-up (a
# transformer): about a fifth of the fast encoder's work per word. Its label scorer is
# half as wide: the biaffine label scorer costs labels x width^2 per token (51 x 65 x 65
# for EWT's relations at width 64), which was over half of the parser's time once the
# encoder was this small; at 32 it is a quarter of that.
SIZES = {
    "small": {"width": 64, "depth": 2, "rows": [5000, 1000, 2500, 2500], "subword_rows": 10000, "lstm": 64, "arc": 128, "label": 32},
    "fast": {"width": 96, "depth": 4, "rows": [5000, 1000, 2500, 2500], "subword_rows": 10000, "lstm": 64, "arc": 128, "label": 64},
    "accurate": {"width": 128, "depth": 4, "rows": [10000, 2000, 5000, 5000], "subword_rows": 20000, "lstm": 128, "arc": 256, "label": 64},
}


def copies_as_batch_ruler(proc: object) -> bool:
    """Whether `spacy distill` copies this teacher component as greenkd_attribute_ruler
    (with `[distillation] batch_attribute_ruler`): spaCy's own attribute_ruler, not a
    subclass, whose behaviour may differ."""
    return type(proc) is AttributeRuler


@dataclass
class StudentComponent:
    """One student component: its name (the teacher's where it has one), its factory
    and the teacher component it learns from."""

    name: str
    factory: str
    teacher: str


@dataclass
class StudentPlan:
    """What the student of a teacher is made of; `config_text` writes it out."""

    lang: str
    preset: str
    components: List[StudentComponent]
    copied: List[str] = field(default_factory=list)
    # (teacher component, factory, what happens to it)
    left_out: List[Tuple[str, str, str]] = field(default_factory=list)
    vectors: Optional[str] = None
    # Teacher component -> its factory.
    teacher_factories: Dict[str, str] = field(default_factory=dict)
    # The teacher's tokenizer is spaCy's rule tokenizer: the student's is the same behind
    # a chunk cache (greenkd.CachedTokenizer.v1), with the teacher's rules at distill time.
    cached_tokenizer: bool = False

    def targets(self, component: StudentComponent) -> str:
        """What `component` learns from its teacher component, e.g. "silver: the
        teacher's trees"."""
        teacher_factory = self.teacher_factories.get(component.teacher, "")
        return SILVER_FROM.get((component.factory, teacher_factory), TARGETS[component.factory])

    @property
    def pipeline(self) -> List[str]:
        return ["tok2vec"] * self.shared_encoder + [c.name for c in self.components]

    @property
    def shared_encoder(self) -> bool:
        return any(c.factory in LISTENERS for c in self.components)


def plan_student(
    teacher: Language,
    preset: str = "fast",
    keep: Optional[Sequence[str]] = None,
    drop: Sequence[str] = (),
    vectors: Optional[str] = None,
) -> StudentPlan:
    """Choose the student of each teacher component.

    teacher (Language): The teacher pipeline (loaded).
    preset (str): "fast" (the CPU-first sizes of our defaults), "small" (a narrower,
        shallower encoder and a text classifier of n-grams alone, for the most speed) or "accurate" (a wider encoder and parser).
    keep (Optional[Sequence[str]]): Teacher components to give students (default: all).
    drop (Sequence[str]): Teacher components to leave out.
    vectors (Optional[str]): A pipeline whose static vectors the student's encoder
        reads (the teacher, where it has vectors).
    RETURNS (StudentPlan): The plan; a teacher component with no student is in
        `left_out` with what happens to it.
    """
    if preset not in SIZES:
        raise ValueError(Errors.E057.format(preset=preset, presets=PRESETS))
    for option, names in (("keep", keep or []), ("drop", drop)):
        for name in names:
            if name not in teacher.component_names:
                raise ValueError(Errors.E059.format(option=option, name=name, available=teacher.component_names))
    plan = StudentPlan(
        lang=teacher.lang, preset=preset, components=[], vectors=vectors,
        teacher_factories={name: teacher.get_pipe_meta(name).factory for name in teacher.component_names},
        cached_tokenizer=rule_tokenizer(teacher.tokenizer) is not None,
    )
    for name in teacher.component_names:
        factory = teacher.get_pipe_meta(name).factory
        proc = teacher.get_pipe(name)
        if name in drop or (keep is not None and name not in keep):
            plan.left_out.append((name, factory, "dropped (asked for)"))
        elif name in teacher.disabled:
            plan.left_out.append((name, factory, "left out: disabled in the teacher"))
        elif factory in ENCODERS:
            plan.left_out.append((name, factory, "replaced by the student's own encoder"))
        elif factory in STUDENT_FACTORY:
            plan.components.append(StudentComponent(name, STUDENT_FACTORY[factory], name))
        elif not isinstance(proc, TrainablePipe):
            plan.copied.append(name)
        else:
            plan.left_out.append((name, factory, "dropped: no student learns it (train it on the student's output afterwards)"))
    _add_senter(teacher, plan)
    if not plan.components:
        raise ValueError(Errors.E058.format(components=teacher.component_names))
    return plan


def _add_senter(teacher: Language, plan: StudentPlan) -> None:
    """A senter in front of a greenkd_parser: greenkd_parser parses the sentences it is
    given and sets none of its own. The teacher's senter teaches it where enabled, else
    the sentence starts of the teacher's parser's trees."""
    parsers = [c for c in plan.components if c.factory == "greenkd_parser"]
    if not parsers:
        return
    senters = [c for c in plan.components if c.factory == "senter"]
    if senters:
        senter = senters[0]
        plan.components.remove(senter)
    elif teacher.get_pipe_meta(parsers[0].teacher).factory == "greenkd_parser":
        # A greenkd_parser teacher parses given sentences too: nothing to learn from it.
        return
    elif _rule_segmenter_before(teacher, parsers[0].teacher) in plan.copied:
        # The teacher's parser is handed a rule sentencizer's sentences; the student
        # gets a copy of that sentencizer, so it parses the very same sentences, exactly
        # and for almost nothing, where a learned senter would only approximate them.
        return
    else:
        taken = {c.name for c in plan.components}
        senter = StudentComponent("senter" if "senter" not in taken else "student_senter", "senter", parsers[0].teacher)
    plan.components.insert(plan.components.index(parsers[0]), senter)


def _rule_segmenter_before(teacher: Language, parser: str) -> Optional[str]:
    """The enabled rule `sentencizer` that runs before the teacher's `parser`, if any:
    a teacher trained on gold sentences does not segment raw text itself, and such a
    pipeline is made to by a sentencizer in front of its parser."""
    for name in teacher.pipe_names[: teacher.pipe_names.index(parser)]:
        if teacher.get_pipe_meta(name).factory == "sentencizer":
            return name
    return None
