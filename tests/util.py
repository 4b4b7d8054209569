"""Tiny in-memory treebank for component tests."""
import copy
import shlex
from pathlib import Path
from typing import List

from spacy.language import Language
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed

# (words, heads (absolute, root points to itself), deps, upos)
SENTENCES = [
    (
        ["I", "like", "green", "eggs", "."],
        [1, 1, 3, 1, 1],
        ["nsubj", "ROOT", "amod", "obj", "punct"],
        ["PRON", "VERB", "ADJ", "NOUN", "PUNCT"],
    ),
    (
        ["She", "ate", "the", "pizza", "with", "anchovies", "."],
        [1, 1, 3, 1, 5, 3, 1],
        ["nsubj", "ROOT", "det", "obj", "case", "nmod", "punct"],
        ["PRON", "VERB", "DET", "NOUN", "ADP", "NOUN", "PUNCT"],
    ),
]

SMALL_ENCODER = {
    "@architectures": "greenkd.BiLSTMEncoder.v1",
    "word_width": 16,
    "word_rows": 500,
    "affix_width": 8,
    "affix_rows": 100,
    "pos_width": 8,
    "hidden_width": 16,
    "depth": 1,
    "dropout": 0.0,
}

SMALL_PARSER = {
    "@architectures": "greenkd.BiaffineParser.v1",
    "arc_mlp_size": 16,
    "label_mlp_size": 8,
    "mlp_dropout": 0.0,
    "tok2vec": SMALL_ENCODER,
}


def make_examples(nlp: Language, copy_pos: bool = True) -> List[Example]:
    examples = []
    for words, heads, deps, pos in SENTENCES:
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=pos)
        predicted = Doc(nlp.vocab, words=words, pos=pos if copy_pos else None)
        examples.append(Example(predicted, reference))
    return examples


def train(nlp: Language, examples: List[Example], steps: int = 200) -> float:
    fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    losses = {}
    for _ in range(steps):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
    return sum(losses.values())


def save_trained_parser(path: Path, data_name: str, copy_pos: bool = True) -> None:
    """Train the tiny parser on SENTENCES; save it as path/model and the gold docs as
    path/data_name (a .spacy file)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_parser", config={"model": copy.deepcopy(SMALL_PARSER)})
    examples = make_examples(nlp, copy_pos=copy_pos)
    train(nlp, examples)
    nlp.to_disk(path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(path / data_name)


def save_tiny_source(path: Path, component: str) -> None:
    """A trained tiny pipeline with one component of this factory (for configs that
    source a component), saved at path."""
    if component == "greenkd_parser":
        save_trained_parser(path.parent, "train.spacy")
        return
    nlp = spacy.blank("en")
    if component == "greenkd_textcat":
        nlp.add_pipe(component, config={"model": {"@architectures": "greenkd.DAN.v1", "max_ngrams": 100, "ngram_size": 2, "width": 8, "hidden_width": 8}})
        examples = [Example.from_dict(nlp.make_doc(t), {"cats": {"pos": float(p), "neg": float(not p)}}) for t, p in (("good", 1), ("bad", 0))]
    else:
        tiny = {"word_width": 8, "word_rows": 100, "affix_width": 4, "affix_rows": 100, "shape_width": 4, "hidden_width": 4}
        nlp.add_pipe(component, config={"model": {"tok2vec": tiny}})
        if component == "greenkd_ner":
            examples = [Example.from_dict(nlp.make_doc("John lives here"), {"entities": [(0, 4, "PER")]})]
        else:
            reference = Doc(nlp.vocab, words=["the", "cat"])
            reference.spans["chunks"] = [reference[0:2]]
            reference.spans["chunks"][0].label_ = "NP"
            examples = [Example(Doc(nlp.vocab, words=["the", "cat"]), reference)]
    nlp.initialize(lambda: examples)
    nlp.to_disk(path)


def distill_config(student: Language, train: Path, cache_dir: Path, **distillation) -> "spacy.Config":
    """The config of a tiny student pipeline made in code, set up for `distill`: train
    and dev both read `train` (a .spacy file), Adam at 0.01, batches of 8 docs,
    60 steps; keyword arguments override [distillation]."""
    config = student.config
    config["paths"].update({"train": str(train), "dev": str(train)})
    config["corpora"] = {
        "train": {"@readers": "spacy.Corpus.v1", "path": "${paths.train}"},
        "dev": {"@readers": "spacy.Corpus.v1", "path": "${paths.dev}"},
    }
    config["distillation"] = {
        "corpus": "corpora.train", "max_steps": 60, "eval_frequency": 20, "cache_dir": str(cache_dir),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 8},
        "optimizer": {"@optimizers": "Adam.v1", "learn_rate": 0.01},
        **distillation,
    }
    return config


def save_teacher(nlp: Language, examples: List[Example], path: Path, steps: int = 60, learn_rate: float = 0.01) -> None:
    """Train a tiny teacher on `examples`, save it to path/"teacher" and their gold docs
    to path/"train.spacy" (the corpus its students distil on)."""
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = learn_rate
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(path / "train.spacy")


def copying_run(nlp: Language, path: Path) -> str:
    """A study system's `run` command that "trains" by copying nlp, saved once under
    path, to {output}/model-best: the runner's plumbing without a spaCy import (seconds
    on a busy machine) per run."""
    template = path / "_trained_model"
    if not template.exists():
        template.mkdir(parents=True)
        nlp.to_disk(template / "model-best")
    copy = "import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])"
    return f"python -c {shlex.quote(copy)} {shlex.quote(str(template))} {{output}}"


def blank_textcat() -> Language:
    """A blank English pipeline with an initialized two-label textcat (pos / neg)."""
    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("textcat")
    textcat.add_label("pos")
    textcat.add_label("neg")
    nlp.initialize()
    return nlp


def save_tiny_trf_teacher(path: Path) -> None:
    """configs/teachers/pipeline_trf.cfg (transformer, tagger, morphologizer, parser)
    initialized, not trained, on SENTENCES: what a config that sources a trained
    transformer teacher's components builds from in a test."""
    root = Path(__file__).resolve().parent.parent
    config = spacy.util.load_config(root / "configs/teachers/pipeline_trf.cfg", overrides={"components.parser.min_action_freq": 1})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = []
    for words, heads, deps, pos in SENTENCES:
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=pos, tags=pos)
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    nlp.initialize(lambda: examples)
    nlp.to_disk(path)


# A toy sentiment task the text classifier tests learn.
TEXTCAT_DATA = [
    ("this movie is great", "pos"), ("what a great film", "pos"), ("i loved it , wonderful", "pos"),
    ("terrible movie , awful", "neg"), ("awful and boring", "neg"), ("i hated it , dull", "neg"),
] * 4


def textcat_examples(nlp: Language) -> List[Example]:
    return [
        Example.from_dict(nlp.make_doc(t), {"cats": {"pos": float(l == "pos"), "neg": float(l == "neg")}})
        for t, l in TEXTCAT_DATA
    ]


def trained_textcat(factory: str, config: dict, steps: int = 40) -> Language:
    """A blank English pipeline with one text classifier trained on TEXTCAT_DATA. Seeded
    (numpy, random and torch), so thresholds test learning, not the initial draw."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config=config)
    egs = textcat_examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    optimizer.learn_rate = 0.01
    for _ in range(steps):
        nlp.update(egs, sgd=optimizer)
    return nlp
