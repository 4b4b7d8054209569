"""A student config made from a teacher pipeline: what `greenkd-init-student` writes.

A user arrives with a pipeline, not a study. Writing its student by hand meant splicing
a parser config, an ner block and a [distillation] section (230 lines). Here the
teacher's components are read and each gets the CPU-first student of its kind:

- one shared encoder (spaCy's CNN tok2vec over greenkd's subword hash embeddings, the
  encoder of our parser default) that every student component listens to, so its cost
  is paid once per doc, whatever the number of components;
- a parser: greenkd_parser (biaffine + MST) over a small BiLSTM on the shared encoder,
  learning the teacher's trees; it parses the sentences it is given, so a `senter`
  learns the teacher's sentence starts in front of it;
- tagger, morphologizer, senter, trainable_lemmatizer: spaCy's own, on the shared
  encoder (soft targets where the teacher has distributions);
- ner (spaCy's or greenkd's): greenkd_ner's CRF straight on the shared encoder. spaCy's
  transition `ner` checks every action's validity at every token, which for a teacher
  with 18 entity types (74 actions) cost 61 us/word on one thread against 10-26 for
  the CRF's emission layer and Viterbi;
- text classifiers: greenkd_textcat's linear bag of n-grams;
- components that cannot be trained (attribute_ruler, a rule lemmatizer, entity_ruler)
  are copied from the teacher by `spacy distill` as they are; the teacher's encoders
  (tok2vec, transformer) are replaced by the student's; disabled components stay out;
  anything else has no student and is named, with what happens to it (dropped).

Student components keep the teacher's names, so code that asks for `nlp.get_pipe("parser")`
works on the student too.
"""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.util import load_model_from_config
from thinc.api import Config

from ..errors import Errors
from .schema import DEFAULTS

PRESETS = ("fast", "accurate", "teacher")

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
SIZES = {
    "fast": {"width": 96, "depth": 4, "rows": [5000, 1000, 2500, 2500], "subword_rows": 10000, "lstm": 64, "arc": 128, "label": 64},
    "accurate": {"width": 128, "depth": 4, "rows": [10000, 2000, 5000, 5000], "subword_rows": 20000, "lstm": 128, "arc": 256, "label": 64},
}


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
    preset (str): "fast" (the CPU-first sizes of our defaults) or "accurate" (a wider,
        deeper encoder and parser).
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
    else:
        taken = {c.name for c in plan.components}
        senter = StudentComponent("senter" if "senter" not in taken else "student_senter", "senter", parsers[0].teacher)
    plan.components.insert(plan.components.index(parsers[0]), senter)


def config_text(plan: StudentPlan, teacher_ref: str) -> str:
    """The student config of a plan, commented for a spaCy user."""
    size = SIZES[plan.preset]
    lines: List[str] = [
        f"# A student of {teacher_ref}, written by `spacy greenkd-init-student` (preset {plan.preset}).",
        "# Distil it from raw text alone (the teacher labels the first [distillation] heldout",
        "# texts as the dev set), then compare it with its teacher:",
        f"#   python -m spacy distill {teacher_ref} THIS.cfg OUTPUT --paths.text TEXT_FILE",
        "# With gold or teacher-labelled dev data: --paths.dev DEV.spacy.",
        "#",
        "# Student components (each learns from the teacher component named):",
    ]
    for c in plan.components:
        lines.append(f"#   {c.name} ({c.factory}) <- {c.teacher}: {plan.targets(c)}")
    if plan.copied:
        lines.append(f"# Copied from the teacher as they are (not trainable): {', '.join(plan.copied)}")
    for name, factory, what in plan.left_out:
        lines.append(f"# Teacher component {name} ({factory}): {what}")
    lines += [
        "",
        "[paths]",
        "# One text per line (.txt, .txt.gz) or JSONL with a \"text\" field.",
        "text = null",
        "# Optional: a .spacy dev set; null holds out the first texts instead.",
        "dev = null",
        f"vectors = {_string(plan.vectors) if plan.vectors else 'null'}",
        "",
        "[system]",
        "seed = 0",
        "gpu_allocator = null",
        "",
        "[nlp]",
        f'lang = "{plan.lang}"',
        "pipeline = [" + ", ".join(f'"{name}"' for name in plan.pipeline) + "]",
        "batch_size = 256",
        "",
        "[components]",
    ]
    if plan.shared_encoder:
        lines += _encoder(size, plan.vectors is not None)
    for c in plan.components:
        lines += _component(c, size)
    pairs = ", ".join(f'"{c.name}": "{c.teacher}"' for c in plan.components)
    lines += [
        "",
        "[corpora]",
        "",
        "[corpora.text]",
        '@readers = "greenkd.TextFile.v1"',
        "path = ${paths.text}",
        "",
        "# spaCy's Corpus of paths.dev; null: `spacy distill` holds out texts instead.",
        "[corpora.dev]",
        '@readers = "greenkd.DevCorpus.v1"',
        "path = ${paths.dev}",
        "",
        "[training]",
        "# spaCy's loop is not used (`spacy distill` trains from [distillation]); these name",
        "# the dev set and what model-best is chosen on.",
        'train_corpus = "corpora.text"',
        'dev_corpus = "corpora.dev"',
        "",
        "# A time budget for the student's training, the teacher pass not counted (0: none),",
        "# e.g. --training.before_update.minutes 60; the run then ends at the next step.",
        "[training.before_update]",
        '@callbacks = "greenkd.train_budget.v1"',
        "minutes = 0",
        "",
        *_distillation_text(pairs).splitlines(),
        "[initialize]",
        "vectors = ${paths.vectors}",
        "",
    ]
    return "\n".join(lines)


def _distillation_text(pairs: str = "") -> str:
    """The [distillation] section of a generated student: raw text, a held-out dev set,
    the parser default's optimizer and schedule, spaCy's patience."""
    lines = [
        "[distillation]",
        'corpus = "corpora.text"',
        "# The first texts of the corpus, labelled by the teacher, are the dev set when",
        "# paths.dev is null (agreement with the teacher).",
        "heldout = 500",
        "dropout = 0.1",
        "max_steps = 20000",
        "eval_frequency = 500",
        "# Stop after this many steps without a better dev score.",
        "patience = 3000",
        "# 0: the corpus in memory, shuffled each epoch; -1 streams it (memory flat, for",
        "# files of millions of sentences).",
        "max_epochs = 0",
        "gold_weight = 1.0",
        "temperature = 1.0",
        'cache_dir = "teacher_cache"',
        f"student_to_teacher = {{{pairs}}}",
        "",
        "[distillation.batcher]",
        '@batchers = "spacy.batch_by_words.v1"',
        "size = 2000",
        "tolerance = 0.2",
        "discard_oversize = false",
        "",
        "[distillation.optimizer]",
        '@optimizers = "Adam.v1"',
        "beta1 = 0.9",
        "beta2 = 0.9",
        "grad_clip = 5.0",
        "",
        "[distillation.optimizer.learn_rate]",
        '@schedules = "greenkd.exponential_decay.v1"',
        "base_rate = 0.002",
        "decay = 0.75",
        "decay_steps = 5000",
        "",
    ]
    return "\n".join(lines)


def teacher_architecture_text(teacher: Language, teacher_ref: str) -> str:
    """The teacher's own config as its student's (preset "teacher"): every trainable
    component with the teacher's architecture and sizes, learning from the same targets
    as our students. What distillation in spaCy's own v4 line gives, a baseline for the
    generated students. Rule components are copied from the teacher by `spacy distill`;
    disabled ones stay out; the teacher's static vectors are read at initialize."""
    config = teacher.config.copy()
    trainable = [name for name in teacher.pipe_names if isinstance(teacher.get_pipe(name), TrainablePipe)]
    factories = {name: teacher.get_pipe_meta(name).factory for name in trainable}
    # A trainable component no student learns would be left untrained in the student.
    unlearnable = [name for name in trainable if factories[name] not in STUDENT_FACTORY and factories[name] not in ENCODERS]
    trainable = [name for name in trainable if name not in unlearnable]
    for name in list(config["components"]):
        if name not in trainable:
            del config["components"][name]
    config["nlp"]["pipeline"] = trainable
    config["nlp"]["disabled"] = []
    vectors = teacher_ref if teacher.vocab.vectors.shape[0] > 0 else None
    config["paths"] = {"text": None, "dev": None, "vectors": vectors, "init_tok2vec": None}
    config["initialize"]["components"] = {}
    config["initialize"]["lookups"] = None
    config["initialize"]["vectors"] = "${paths.vectors}"
    config["initialize"]["init_tok2vec"] = "${paths.init_tok2vec}"
    config["corpora"] = {
        "text": {"@readers": "greenkd.TextFile.v1", "path": "${paths.text}"},
        "dev": {"@readers": "greenkd.DevCorpus.v1", "path": "${paths.dev}"},
    }
    config["training"]["train_corpus"] = "corpora.text"
    config["training"]["dev_corpus"] = "corpora.dev"
    config["training"]["before_update"] = {"@callbacks": "greenkd.train_budget.v1", "minutes": 0}
    pairs = ", ".join(f'"{name}": "{name}"' for name in trainable)
    distillation = Config().from_str(_distillation_text(pairs), interpolate=False)["distillation"]
    # Trained as spaCy trains this architecture: the teacher's own optimizer and batches.
    distillation["optimizer"] = config["training"]["optimizer"]
    distillation["batcher"] = config["training"]["batcher"]
    config["distillation"] = distillation
    head = [
        f"# A student of {teacher_ref} with the teacher's own architecture, written by",
        "# `spacy greenkd-init-student --preset teacher`: what distillation into the same",
        "# components gives, the baseline of the generated students. Distil it as they are:",
        f"#   python -m spacy distill {teacher_ref} THIS.cfg OUTPUT --paths.text TEXT_FILE",
        f"# Student components: {', '.join(trainable)}; copied from the teacher: "
        + (", ".join(n for n in teacher.pipe_names if n not in trainable and n not in unlearnable) or "none"),
        *[f"# Teacher component {name} ({factories[name]}): dropped: no student learns it" for name in unlearnable],
        "",
    ]
    return "\n".join(head) + config.to_str() + "\n"


def filled_config_text(text: str) -> str:
    """`text` as spaCy fills a config (`spacy init fill-config`): every setting written
    out, so the file passes `spacy debug config` and says what the student will be; the
    [distillation] section with its defaults too. The comments of `text` stay before
    the section or setting they preceded."""
    config = Config().from_str(text, interpolate=False)
    nlp = load_model_from_config(config, auto_fill=True, validate=False)
    filled = nlp.config
    filled["distillation"] = {**DEFAULTS, "seed": "${system.seed}", **config["distillation"]}
    # spaCy's defaults bring a [corpora.train] over paths.train, which a student of raw
    # text does not read: left in, it would have to be set (or `debug config` fails).
    for corpus in set(filled["corpora"]) - set(config["corpora"]):
        del filled["corpora"][corpus]
    if "train" not in config["paths"]:
        filled["paths"].pop("train", None)
    notes = _comments(text)
    out: List[str] = notes.get(("", ""), [])
    section = ""
    for line in filled.to_str().splitlines():
        header = re.match(r"^\[(.+)\]$", line)
        key = re.match(r"^([A-Za-z_@][^ =]*) =", line)
        if header:
            section = header.group(1)
            if notes.get((section, "")):
                out += [""] + notes[(section, "")] if out and out[-1] != "" else notes[(section, "")]
        elif key and notes.get((section, key.group(1))):
            out += notes[(section, key.group(1))]
        out.append(line)
    return "\n".join(out) + "\n"


def _comments(text: str) -> Dict[Tuple[str, str], List[str]]:
    """The comment lines of a config text, by the (section, key) they precede (key ""
    for a section header; ("", "") for the file's head)."""
    notes: Dict[Tuple[str, str], List[str]] = {}
    pending: List[str] = []
    section = ""
    head_done = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(line)
            continue
        if not stripped:
            if pending and not head_done:
                notes[("", "")] = pending
                pending, head_done = [], True
            continue
        head_done = True
        header = re.match(r"^\[(.+)\]$", stripped)
        if header:
            section = header.group(1)
            target = (section, "")
        else:
            target = (section, stripped.split("=")[0].strip())
        if pending:
            notes[target] = pending
            pending = []
    return notes


def _string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _encoder(size: Dict, vectors: bool) -> List[str]:
    return [
        "",
        "# The shared encoder every student component listens to: spaCy's CNN over hashed",
        "# NORM / PREFIX / SUFFIX / SHAPE and character n-gram embeddings.",
        "[components.tok2vec]",
        'factory = "tok2vec"',
        "",
        "[components.tok2vec.model]",
        '@architectures = "spacy.Tok2Vec.v2"',
        "",
        "[components.tok2vec.model.embed]",
        '@architectures = "greenkd.SubwordHashEmbed.v1"',
        f"width = {size['width']}",
        'attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]',
        f"rows = {size['rows']}",
        f"include_static_vectors = {'true' if vectors else 'false'}",
        f"subword_rows = {size['subword_rows']}",
        "min_n = 3",
        "max_n = 5",
        f"word_dropout = {0.0 if vectors else 0.2}",
        "",
        "[components.tok2vec.model.encode]",
        '@architectures = "spacy.MaxoutWindowEncoder.v2"',
        f"width = {size['width']}",
        f"depth = {size['depth']}",
        "window_size = 1",
        "maxout_pieces = 3",
    ]


def _listener(section: str) -> List[str]:
    return [
        "",
        f"[{section}]",
        '@architectures = "spacy.Tok2VecListener.v1"',
        "width = ${components.tok2vec.model.encode.width}",
        'upstream = "tok2vec"',
    ]


def _component(c: StudentComponent, size: Dict) -> List[str]:
    block = f"components.{c.name}"
    lines = ["", f"[{block}]", f'factory = "{c.factory}"']
    if c.factory in ("tagger", "morphologizer", "senter", "trainable_lemmatizer"):
        lines += ["", f"[{block}.model]", '@architectures = "spacy.Tagger.v2"', "nO = null", "normalize = false"]
        lines += _listener(f"{block}.model.tok2vec")
    elif c.factory == "greenkd_ner":
        lines += [
            "", f"[{block}.model]", '@architectures = "greenkd.CRFLabeller.v1"', "dropout = 0.2", "max_length = 256",
        ]
        lines += _listener(f"{block}.model.tok2vec")
    elif c.factory == "greenkd_parser":
        lines += [
            "", f"[{block}.model]", '@architectures = "greenkd.BiaffineParser.v1"',
            f"arc_mlp_size = {size['arc']}", f"label_mlp_size = {size['label']}", "mlp_dropout = 0.33",
            "", f"[{block}.model.tok2vec]", '@architectures = "greenkd.BiLSTMContext.v1"',
            f"hidden_width = {size['lstm']}", "depth = 1", "dropout = 0.33",
        ]
        lines += _listener(f"{block}.model.tok2vec.tok2vec")
    elif c.factory == "spancat":
        lines += [
            "", f"[{block}.model]", '@architectures = "spacy.SpanCategorizer.v1"',
            "", f"[{block}.model.reducer]", '@layers = "spacy.mean_max_reducer.v1"', "hidden_size = 128",
            "", f"[{block}.model.scorer]", '@layers = "spacy.LinearLogistic.v1"', "nO = null", "nI = null",
        ]
        lines += _listener(f"{block}.model.tok2vec")
    # greenkd_chunker / greenkd_textcat: their factory's default model.
    return lines
