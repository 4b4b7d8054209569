"""A student plan as a config file, commented for a spaCy user; and the teacher's own
architecture as a student's config (`greenkd-init-student --preset teacher`)."""
from typing import Dict, List

from spacy.language import Language
from spacy.pipeline import TrainablePipe
from thinc.api import Config

from .student_plan import ENCODERS, SIZES, STUDENT_FACTORY, StudentComponent, StudentPlan


# The students' BiLSTMs read texts longer than this as overlapping windows: a user's
# raw text is often whole articles, and on CPU an LSTM batch costs as many time steps
# as its longest text (models/pytorch/bilstm.py).
LSTM_WINDOW = 128


def config_text(plan: StudentPlan, teacher_ref: str) -> str:
    """The student config of a plan, commented for a spaCy user."""
    size = SIZES[plan.preset]
    lines: List[str] = [
        f"# A student of {teacher_ref}, written by `spacy greenkd-init-student` (preset {plan.preset}).",
        "# Distil it from raw text alone (the teacher labels the first [distillation] heldout",
        "# texts as the dev set), then compare it with its teacher:",
        f"#   python -m spacy distill {teacher_ref} THIS.cfg OUTPUT --paths.text TEXT_FILE",
        "# With gold or teacher-labelled dev data: --paths.dev DEV.spacy.",
        "# TEXT_FILE: text of the kind the student will read. More text of another kind",
        "# adds little once the student reads its text several times in its budget",
        "# (docs/distillation.md, 'Which text, and how much').",
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
    ]
    if plan.cached_tokenizer:
        lines += [
            "# spaCy's rule tokenizer behind a cache of whitespace-separated chunks: the same",
            "# tokens, faster. `spacy distill` loads the teacher's rules and special cases into",
            "# it ([distillation] teacher_tokenizer); spacy.Tokenizer.v1 here: spaCy's own.",
            "[nlp.tokenizer]",
            '@tokenizers = "greenkd.CachedTokenizer.v1"',
            "",
        ]
    lines += [
        "[components]",
    ]
    if plan.shared_encoder:
        lines += _encoder(size, plan.vectors is not None)
    for c in plan.components:
        lines += _component(c, plan.preset, size, plan.vectors is not None)
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
        "# Weight of the corpus's gold annotation, where it has any (raw text has none); a",
        "# component's own in [distillation.gold_weights] below.",
        "gold_weight = 1.0",
        "temperature = 1.0",
        'cache_dir = "teacher_cache"',
        f"student_to_teacher = {{{pairs}}}",
        "",
        "# A component's own gold weight, e.g. morphologizer = 3 (on the command line:",
        "# --distillation.gold_weights.morphologizer 3).",
        "[distillation.gold_weights]",
        "",
        "# A component's own weight of its teacher's targets (default 1), e.g.",
        "# morphologizer = 0: it learns that attribute from the gold alone, where the",
        "# teacher is below the corpus.",
        "[distillation.teacher_weights]",
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
        "# Evaluate and save the running average of each weight (thinc's default): a run",
        "# cut by its minutes or steps ends on the mean of its last few hundred updates.",
        "use_averages = true",
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


def _bilstm_context(section: str, size: Dict) -> List[str]:
    """A component's own BiLSTM over a listener of the shared encoder."""
    return [
        "", f"[{section}]", '@architectures = "greenkd.BiLSTMContext.v1"',
        f"hidden_width = {size['lstm']}", "depth = 1", "dropout = 0.33", f"window = {LSTM_WINDOW}",
    ] + _listener(f"{section}.tok2vec")


def _component(c: StudentComponent, preset: str, size: Dict, vectors: bool = False) -> List[str]:
    block = f"components.{c.name}"
    lines = ["", f"[{block}]", f'factory = "{c.factory}"']
    if c.factory in ("greenkd_parser", "greenkd_ner"):
        # Summed over the batch, as spaCy's tagger and senter sum theirs: averaged, this
        # component's gradient into the shared encoder is drowned by theirs.
        lines.append("normalize_loss = false")
    if c.factory in ("tagger", "morphologizer", "senter", "trainable_lemmatizer"):
        lines += ["", f"[{block}.model]", '@architectures = "spacy.Tagger.v2"', "nO = null", "normalize = false"]
        lines += _listener(f"{block}.model.tok2vec")
    elif c.factory == "greenkd_ner":
        # A BiLSTM of its own over the shared encoder: the CNN's window of four tokens a
        # side is too narrow for entity boundaries (see docs/distillation.md).
        lines += [
            "", f"[{block}.model]", '@architectures = "greenkd.CRFLabeller.v1"', "dropout = 0.2", "max_length = 256",
        ]
        lines += _bilstm_context(f"{block}.model.tok2vec", size)
    elif c.factory == "greenkd_parser":
        lines += [
            "", f"[{block}.model]", '@architectures = "greenkd.BiaffineParser.v1"',
            f"arc_mlp_size = {size['arc']}", f"label_mlp_size = {size['label']}", "mlp_dropout = 0.33",
        ]
        lines += _bilstm_context(f"{block}.model.tok2vec", size)
    elif c.factory == "spancat":
        lines += [
            "", f"[{block}.model]", '@architectures = "spacy.SpanCategorizer.v1"',
            "", f"[{block}.model.reducer]", '@layers = "spacy.mean_max_reducer.v1"', "hidden_size = 128",
            "", f"[{block}.model.scorer]", '@layers = "spacy.LinearLogistic.v1"', "nO = null", "nI = null",
        ]
        lines += _listener(f"{block}.model.tok2vec")
    elif c.factory in ("greenkd_textcat", "greenkd_textcat_multilabel") and preset != "small":
        # The linear bag plus a convolution over the words: distilled from the same teacher
        # pass it kept 50 % of the teacher's lead on TREC and 52 % on SST-2, where the
        # linear bag kept 30 % and 17 %, at 1.7-2.3x spaCy's BOW textcat's docs/s against
        # the bag's 3-4.4x (projects/textcat). Its own words, not the encoder's. Preset
        # "small" keeps the bag alone (the factory's default model).
        lines += [
            "", f"[{block}.model]", '@architectures = "greenkd.NgramCNN.v1"', "max_ngrams = 131072",
            "ngram_size = 2", "word_width = 64", "conv_width = 128", "window = 1",
            f"words_from_vectors = {'true' if vectors else 'false'}",
        ]
    # greenkd_chunker, and greenkd_textcat under preset small: the factory's default model.
    return lines
