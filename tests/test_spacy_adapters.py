"""spaCy's own `tagger` teaches and learns through the distillation loop, as it is:
no new factory, the student a plain spaCy pipeline (first kind)."""
import copy

import numpy
import pytest
import spacy
from spacy.cli.init_config import init_config
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example
from spacy.util import fix_random_seed

from greenkd_spacy.distillation.adapters import TaggerAdapter, distillable
from greenkd_spacy.distillation.contract import DistillSettings
from greenkd_spacy.distillation.loop import distill

from .util import SENTENCES, save_teacher


def tagger_config(tmp_path, max_steps=60):
    config = init_config(lang="en", pipeline=["tagger"], optimize="efficiency")
    config["paths"]["train"] = str(tmp_path / "train.spacy")
    config["paths"]["dev"] = str(tmp_path / "train.spacy")
    config["training"]["eval_frequency"] = 20
    config["distillation"] = {
        "corpus": "corpora.train", "max_steps": max_steps, "eval_frequency": 20, "gold_weight": 0.0,
        "cache_dir": str(tmp_path / "cache"), "optimizer": dict(config["training"]["optimizer"]),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
    }
    return config


def fit(nlp, examples, steps):
    """Initialize the pipeline on `examples` and train it on them, the whole set a step,
    for `steps` steps (a teacher for the tests; seed it before)."""
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return nlp


def save_tagger_teacher(nlp, path, steps):
    """Train the pipeline's tagger on the two tiny sentences (tags = their UPOS); save
    it as path/model and the gold as path/train.spacy. RETURNS path."""
    examples = [
        Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, tags=pos))
        for words, _, _, pos in SENTENCES
    ]
    fit(nlp, examples, steps)
    nlp.to_disk(path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(path / "train.spacy")
    return path


@pytest.fixture(scope="module")
def tagger_teacher(tmp_path_factory):
    """A spaCy tagger (its encoder inline) trained on the two tiny sentences."""
    path = tmp_path_factory.mktemp("tagger")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    return save_tagger_teacher(nlp, path, 60)


def tags(nlp):
    return [[t.tag_ for t in nlp(Doc(nlp.vocab, words=words))] for words, _, _, _ in SENTENCES]


def test_spacy_tagger_learns_from_a_spacy_tagger(tagger_teacher, tmp_path):
    teacher = spacy.load(tagger_teacher / "model")
    assert tags(teacher) == [pos for _, _, _, pos in SENTENCES]
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    student, summary = distill(teacher, tagger_config(tmp_path), tmp_path / "out")
    # gold_weight 0: only the teacher's distributions taught it
    assert tags(student) == tags(teacher)
    assert student.get_pipe("tagger").labels == teacher.get_pipe("tagger").labels
    assert type(student.get_pipe("tagger")).__name__ == "Tagger"  # a plain spaCy pipe
    assert summary["annotation"]["tagger"]["docs"] == 2
    assert tags(spacy.load(tmp_path / "out" / "model-best")) == tags(teacher)


def test_student_to_teacher_picks_the_teacher_component_by_name(tagger_teacher, tmp_path):
    """[distillation.student_to_teacher] names the teacher component a student learns
    from, here a second tagger (every word "X") instead of the student's namesake."""
    teacher = spacy.load(tagger_teacher / "model")
    fix_random_seed(0)
    other = spacy.blank("en")
    other.add_pipe("tagger")
    examples = [
        Example(Doc(other.vocab, words=words), Doc(other.vocab, words=words, tags=["X"] * len(words)))
        for words, _, _, _ in SENTENCES
    ]
    fit(other, examples, 30)
    teacher.add_pipe("tagger", name="x_tagger", source=other)
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["student_to_teacher"] = {"tagger": "x_tagger"}
    student, _ = distill(teacher, config, tmp_path / "out")
    assert student.get_pipe("tagger").labels == ("X",)
    assert {tag for doc_tags in tags(student) for tag in doc_tags} == {"X"}


def test_tagger_cannot_learn_from_another_kind(teacher_dir, tmp_path):
    """A greenkd_parser cannot teach a tagger: said before the teacher pass."""
    teacher = spacy.load(teacher_dir / "model")
    (tmp_path / "train.spacy").write_bytes((teacher_dir / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["student_to_teacher"] = {"tagger": "greenkd_parser"}
    with pytest.raises(ValueError, match="E010.*tagger"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_a_spacy_tagger_teaches_distributions_not_its_raw_scores(tagger_teacher):
    """spaCy's Tagger.v2 does not normalize at inference (normalize = false): what the
    teacher pass caches must still be one distribution per token, or the student learns
    from clipped raw scores (it did: a tagger student at 31 % on EWT)."""
    from greenkd_spacy.distillation.targets import CachedTeacher, decode_tag_marginals

    teacher = spacy.load(tagger_teacher / "model")
    pipe = teacher.get_pipe("tagger")
    assert pipe.model.get_ref("softmax").attrs["softmax_normalize"] is False
    docs = [Doc(teacher.vocab, words=words) for words, _, _, _ in SENTENCES]
    raw = [pipe.model.ops.to_numpy(s) for s in pipe.model.predict(docs)]
    assert not all(numpy.allclose(r.sum(-1), 1.0, atol=1e-2) for r in raw)  # raw scores indeed
    student = spacy.blank("en").add_pipe("tagger")
    records = distillable(student).teacher_records(pipe, docs, [Example(d, d) for d in docs], top_k=0)
    for record, r in zip(records.values(), raw):
        m = numpy.asarray(record["marginals"], dtype="float32")
        assert numpy.allclose(m.sum(-1), 1.0, atol=1e-2) and m.min() >= 0.0
        assert (m.argmax(-1) == r.argmax(-1)).all()  # the same tags, now as distributions
    # A cache written before records said "normalized" held raw scores: read as softmax.
    legacy = {key: {"marginals": r.astype("float16")} for key, r in zip(records, raw)}
    cached = CachedTeacher(pipe.name, list(pipe.labels), legacy)
    for m, r in zip(decode_tag_marginals(cached, docs), raw):
        assert numpy.allclose(m.sum(-1), 1.0, atol=1e-3)
        assert (m.argmax(-1) == r.argmax(-1)).all()


def test_tagger_loss_is_zero_at_the_teacher_and_its_gradient_is_the_kl_gradient():
    nlp = spacy.blank("en")
    adapter = distillable(nlp.add_pipe("tagger"))
    assert isinstance(adapter, TaggerAdapter)
    adapter.set_distill_settings(DistillSettings(temperature=2.0))
    rng = numpy.random.default_rng(0)
    logits = rng.normal(size=(3, 4)).astype("float32")
    q = numpy.exp(logits) / numpy.exp(logits).sum(-1, keepdims=True)
    p = rng.dirichlet(numpy.ones(4), size=3).astype("float32")
    zero, _ = adapter.get_teacher_student_loss([q], [q])
    assert abs(zero) < 1e-5
    loss, (grad,) = adapter.get_teacher_student_loss([p], [q])
    eps = 1e-3
    for i, j in [(0, 0), (1, 2), (2, 3)]:
        bumped = logits.copy()
        bumped[i, j] += eps
        q_b = numpy.exp(bumped) / numpy.exp(bumped).sum(-1, keepdims=True)
        numeric = (adapter.get_teacher_student_loss([p], [q_b])[0] - loss) / eps
        assert numeric == pytest.approx(float(grad[i, j]), rel=0.05, abs=1e-3)


def spacy_config(tmp_path, component, max_steps=60, raw_text=False):
    config = init_config(lang="en", pipeline=[component], optimize="efficiency")
    config["paths"]["train"] = str(tmp_path / "train.spacy")
    config["paths"]["dev"] = str(tmp_path / "train.spacy")
    corpus = "corpora.train"
    if raw_text:  # no gold at all: the teacher's annotation is all the student sees
        config["corpora"]["raw"] = {"@readers": "greenkd.TextFile.v1", "path": str(tmp_path / "raw.txt")}
        corpus = "corpora.raw"
    config["distillation"] = {
        "corpus": corpus, "max_steps": max_steps, "eval_frequency": 20, "gold_weight": 0.0,
        "cache_dir": str(tmp_path / "cache"), "optimizer": dict(config["training"]["optimizer"]),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
    }
    return config


NER_TEXTS = ["John lives in Paris .", "Mary works in Berlin ."]
NER_ENTS = [[(0, 4, "PER"), (14, 19, "LOC")], [(0, 4, "PER"), (14, 20, "LOC")]]


def _ner_teacher(tmp_path):
    """spaCy's ner trained on two sentences; their gold in train.spacy, the raw text in raw.txt."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("ner")
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in zip(NER_TEXTS, NER_ENTS)]
    fit(nlp, examples, 40)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(NER_TEXTS) + "\n", encoding="utf8")
    return spacy.load(tmp_path / "teacher")


def test_spacy_ner_learns_silver_entities_from_a_spacy_ner_on_raw_text(tmp_path):
    """spaCy's most requested distillation: the teacher's predicted entities as gold
    for a CNN ner, here from raw text only."""
    teacher = _ner_teacher(tmp_path)
    predicted = [[(e.start_char, e.end_char, e.label_) for e in teacher(t).ents] for t in NER_TEXTS]
    assert predicted == NER_ENTS
    student, summary = distill(teacher, spacy_config(tmp_path, "ner", raw_text=True), tmp_path / "out")
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in NER_TEXTS] == predicted
    assert type(student.get_pipe("ner")).__name__ == "EntityRecognizer"
    assert summary["annotation"]["ner"]["docs"] == 2


def test_spacy_parser_learns_silver_trees_from_a_spacy_parser(tmp_path):
    fix_random_seed(0)
    sentences = [
        (["I", "like", "green", "eggs", "."], [1, 1, 3, 1, 1], ["nsubj", "ROOT", "amod", "obj", "punct"]),
        (["She", "ate", "pizza", "."], [1, 1, 1, 1], ["nsubj", "ROOT", "obj", "punct"]),
    ]
    nlp = spacy.blank("en")
    # spaCy's parser maps labels seen fewer than 30 times to "dep": two sentences are fewer
    nlp.add_pipe("parser", config={"min_action_freq": 1})
    examples = [
        Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, heads=heads, deps=deps))
        for words, heads, deps in sentences
    ]
    fit(nlp, examples, 60)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(w) for w, _, _ in sentences) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")

    def trees(pipeline):
        return [[(t.head.i, t.dep_) for t in pipeline(Doc(pipeline.vocab, words=w))] for w, _, _ in sentences]

    assert trees(teacher) == [list(zip(h, d)) for _, h, d in sentences]
    student, _ = distill(teacher, spacy_config(tmp_path, "parser", max_steps=80, raw_text=True), tmp_path / "out")
    assert trees(student) == trees(teacher)
    assert type(student.get_pipe("parser")).__name__ == "DependencyParser"


@pytest.mark.parametrize("factory", ["senter"])
def test_spacy_softmax_taggers_learn_from_their_own_kind(factory, tmp_path):
    """A senter learns its teacher's per-token distributions from raw text alone."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    examples = []
    for words, _, _, pos in SENTENCES:
        reference = Doc(nlp.vocab, words=words + words, pos=pos + pos, morphs=["Number=Sing" if p == "NOUN" else "_" for p in pos + pos],
                        sent_starts=[True] + [False] * (len(words) - 1) + [True] + [False] * (len(words) - 1))
        examples.append(Example(Doc(nlp.vocab, words=words + words), reference))
    fit(nlp, examples, 60)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(eg.reference.text.split()) for eg in examples) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")

    def annotation(pipeline):
        docs = [pipeline(Doc(pipeline.vocab, words=[t.text for t in eg.reference])) for eg in examples]
        if factory == "senter":
            return [[t.is_sent_start for t in doc] for doc in docs]
        return [[(t.pos_, str(t.morph)) for t in doc] for doc in docs]

    student, _ = distill(teacher, spacy_config(tmp_path, factory, max_steps=80, raw_text=True), tmp_path / "out")
    assert annotation(student) == annotation(teacher)
    assert student.get_pipe(factory).labels == teacher.get_pipe(factory).labels


def test_spacy_senter_learns_a_parsers_sentence_starts_and_shares_its_teacher_pass(tmp_path):
    """A teacher without a senter still teaches one: its parser's trees give the
    sentence starts (silver), cached as the parser student's records, so a student
    with a parser and a senter runs one teacher pass for both."""
    fix_random_seed(0)
    halves = [
        (["I", "like", "green", "eggs", "."], [1, 1, 3, 1, 1], ["nsubj", "ROOT", "amod", "obj", "punct"]),
        (["She", "ate", "pizza", "."], [1, 1, 1, 1], ["nsubj", "ROOT", "obj", "punct"]),
    ]
    # Each doc is two sentences (two trees): the second starts mid-doc.
    docs = [halves, halves[::-1]]
    nlp = spacy.blank("en")
    nlp.add_pipe("parser", config={"min_action_freq": 1})
    examples = []
    for pair in docs:
        words = [w for ws, _, _ in pair for w in ws]
        offset = len(pair[0][0])
        heads = pair[0][1] + [h + offset for h in pair[1][1]]
        deps = pair[0][2] + pair[1][2]
        examples.append(Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, heads=heads, deps=deps)))
    fit(nlp, examples, 80)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(eg.reference.text for eg in examples) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")

    def starts(pipeline):
        return [[t.is_sent_start for t in pipeline(Doc(pipeline.vocab, words=[t.text for t in eg.reference]))] for eg in examples]

    expected = [[t.is_sent_start for t in eg.reference] for eg in examples]
    assert starts(teacher) == expected
    assert sum(expected[0]) == 2
    config = spacy_config(tmp_path, "senter", max_steps=80, raw_text=True)
    config["nlp"]["pipeline"] = ["senter", "parser"]
    config["components"]["parser"] = {"factory": "parser", "min_action_freq": 1}
    student, summary = distill(teacher, config, tmp_path / "out")
    assert type(student.get_pipe("senter")).__name__ == "SentenceRecognizer"
    senter_only = spacy.load(tmp_path / "out" / "model-best", exclude=["parser"])
    assert starts(senter_only) == expected
    # One teacher pass: the senter's records are the parser student's.
    assert sorted(summary["annotation"]["senter"]["components"]) == ["parser", "senter"]
    assert len(list((tmp_path / "cache").glob("*/manifest.json"))) == 1


def test_a_senter_without_namesake_prefers_a_teachers_senter_and_two_fits_are_refused(tagger_teacher):
    """Auto-pairing: a student senter whose name the teacher lacks takes the teacher's
    senter (soft) before its parser (silver); two teachers of the student's own kind
    and no namesake stop with E049, asking for student_to_teacher."""
    from greenkd_spacy.distillation.adapters import SentStartsFromTreesAdapter
    from greenkd_spacy.distillation.loop import pair_components

    teacher = spacy.blank("en")
    teacher.add_pipe("senter")
    teacher.add_pipe("parser")
    student = spacy.blank("en")
    student.add_pipe("senter", name="sents")
    [(_, pipe, teacher_pipe)] = pair_components(student, teacher, {})
    assert teacher_pipe.name == "senter" and isinstance(pipe, TaggerAdapter)
    teacher.remove_pipe("senter")
    [(_, pipe, teacher_pipe)] = pair_components(student, teacher, {})
    assert teacher_pipe.name == "parser" and isinstance(pipe, SentStartsFromTreesAdapter)
    taggers = spacy.load(tagger_teacher / "model")
    taggers.rename_pipe("tagger", "pos")
    taggers.add_pipe("tagger", name="other", source=spacy.load(tagger_teacher / "model"))
    tagger_student = spacy.blank("en")
    tagger_student.add_pipe("tagger")
    with pytest.raises(ValueError, match="E049.*pos.*other"):
        pair_components(tagger_student, taggers, {})


def test_a_greenkd_parser_cannot_teach_a_senter():
    """It parses the sentences it is given: no boundaries of its own to teach."""
    from .util import SMALL_PARSER

    teacher = spacy.blank("en")
    teacher.add_pipe("greenkd_parser", config={"model": SMALL_PARSER})
    adapter = distillable(spacy.blank("en").add_pipe("senter"))
    with pytest.raises(ValueError, match="E010"):
        adapter.check_teacher_kind(teacher.get_pipe("greenkd_parser"))


def test_a_senter_refuses_a_tagger_teacher(tagger_teacher, tmp_path):
    """Neither a senter nor a tree: E010 before the teacher pass, naming both kinds."""
    teacher = spacy.load(tagger_teacher / "model")
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = spacy_config(tmp_path, "senter")
    config["distillation"]["student_to_teacher"] = {"senter": "tagger"}
    with pytest.raises(ValueError, match="E010.*senter.*parser"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


@spacy.registry.callbacks("test.stop_at_step.v1")
def _stop_at_step(step: int):
    def before_update(nlp, info):
        if info["step"] >= step:
            raise SystemExit(0)  # what greenkd.train_budget.v1 raises when time is up

    return before_update


def test_distill_honours_before_update_and_a_budget_stop(tagger_teacher, tmp_path):
    """[training.before_update] runs in `spacy distill` as in `spacy train`; the budget's
    SystemExit ends the run like its last step: scored and saved, not lost."""
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path, max_steps=60)
    config["training"]["before_update"] = {"@callbacks": "test.stop_at_step.v1", "step": 7}
    student, summary = distill(spacy.load(tagger_teacher / "model"), config, tmp_path / "out")
    assert summary["training"]["stopped_by_budget"] is True
    assert summary["training"]["steps"] == 7
    assert summary["history"][-1]["step"] == 7  # evaluated although 7 is no eval step
    assert (tmp_path / "out" / "model-last" / "meta.json").exists()


TEXTS = [("a great fun film", "pos"), ("truly great acting", "pos"), ("a dull boring film", "neg"), ("boring and dull acting", "neg")]


@pytest.fixture(scope="module")
def textcat_teacher(tmp_path_factory):
    """spaCy's BOW textcat trained on four labelled texts, and those texts unlabelled."""
    path = tmp_path_factory.mktemp("textcat")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("textcat")
    examples = [
        Example.from_dict(nlp.make_doc(text), {"cats": {"pos": float(y == "pos"), "neg": float(y == "neg")}})
        for text, y in TEXTS
    ]
    fit(nlp, examples, 40)
    nlp.to_disk(path / "model")
    DocBin(docs=[nlp.make_doc(text) for text, _ in TEXTS]).to_disk(path / "raw.spacy")
    return path


def textcat_config(tmp_path, **distillation):
    config = init_config(lang="en", pipeline=["textcat"], optimize="efficiency")
    config["paths"]["train"] = str(tmp_path / "raw.spacy")
    config["paths"]["dev"] = str(tmp_path / "raw.spacy")
    config["distillation"] = {
        "corpus": "corpora.train", "max_steps": 60, "eval_frequency": 20, "gold_weight": 0.0,
        "cache_dir": str(tmp_path / "cache"), "optimizer": dict(config["training"]["optimizer"]),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
        **distillation,
    }
    return config


def test_spacy_textcat_learns_a_teachers_probabilities_from_raw_text(textcat_teacher, tmp_path):
    (tmp_path / "raw.spacy").write_bytes((textcat_teacher / "raw.spacy").read_bytes())
    teacher = spacy.load(textcat_teacher / "model")
    student, _ = distill(teacher, textcat_config(tmp_path), tmp_path / "out")
    assert student.get_pipe("textcat").labels == teacher.get_pipe("textcat").labels
    for text, label in TEXTS:  # no gold cats anywhere: only the teacher taught it
        cats = student(text).cats
        assert max(cats, key=cats.get) == label == max(teacher(text).cats, key=teacher(text).cats.get)


def test_spacy_textcat_refuses_a_temperature_before_the_teacher_pass(textcat_teacher, tmp_path):
    (tmp_path / "raw.spacy").write_bytes((textcat_teacher / "raw.spacy").read_bytes())
    with pytest.raises(ValueError, match="E046"):
        distill(spacy.load(textcat_teacher / "model"), textcat_config(tmp_path, temperature=2.0), tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_spacy_textcat_refuses_a_multilabel_teacher(textcat_teacher, tmp_path):
    (tmp_path / "raw.spacy").write_bytes((textcat_teacher / "raw.spacy").read_bytes())
    teacher = spacy.blank("en")
    teacher.add_pipe("textcat_multilabel", name="textcat").add_label("pos")
    teacher.initialize()
    with pytest.raises(ValueError, match="E010"):
        distill(teacher, textcat_config(tmp_path), tmp_path / "out")


def _trained_textcat(factory, config=None):
    """A text classifier of the given factory trained on TEXTS (one or two labels a text)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, name="textcat", config=config or {})
    examples = [
        Example.from_dict(nlp.make_doc(text), {"cats": {"pos": float(y == "pos"), "neg": float(y == "neg")}})
        for text, y in TEXTS
    ]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.mark.parametrize("teacher_factory,student_factory", [
    ("greenkd_textcat", "textcat"),  # our DAN teaches spaCy's BOW
    ("textcat_multilabel", "textcat_multilabel"),
    ("greenkd_textcat_multilabel", "textcat_multilabel"),  # our multilabel DAN teaches spaCy's
])
def test_spacy_textcat_learns_from_a_dan_and_multilabel_from_multilabel(textcat_teacher, tmp_path, teacher_factory, student_factory):
    (tmp_path / "raw.spacy").write_bytes((textcat_teacher / "raw.spacy").read_bytes())
    small = {"model": {"@architectures": "greenkd.DAN.v1", "max_ngrams": 500, "ngram_size": 2, "width": 16, "hidden_width": 16}} if teacher_factory.startswith("greenkd") else None
    teacher = _trained_textcat(teacher_factory, small)
    config = textcat_config(tmp_path)
    if student_factory != "textcat":
        config = init_config(lang="en", pipeline=[student_factory], optimize="efficiency")
        config["paths"]["train"] = config["paths"]["dev"] = str(tmp_path / "raw.spacy")
        config["distillation"] = textcat_config(tmp_path)["distillation"]
        config["distillation"]["optimizer"] = dict(config["training"]["optimizer"])
    config["distillation"]["max_steps"] = 100
    student, summary = distill(teacher, config, tmp_path / "out")
    name = "textcat" if student_factory == "textcat" else student_factory
    assert summary["annotation"][name]["docs"] == len(TEXTS)
    for text, label in TEXTS:  # no gold cats: only the teacher's probabilities taught it
        cats = student(text).cats
        assert max(cats, key=cats.get) == label == max(teacher(text).cats, key=teacher(text).cats.get)


def test_spacy_morphologizer_learns_from_a_morphologizer_on_raw_text(tmp_path):
    """The morphologizer's classes ("POS=NOUN|Number=Sing") reach a student that sees
    raw text only through a labels file (a config cannot hold those keys)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("morphologizer")
    feats = {"NOUN": "Number=Sing", "PRON": "Case=Nom|Person=3", "VERB": "Tense=Past"}
    examples = [
        Example(
            Doc(nlp.vocab, words=words),
            Doc(nlp.vocab, words=words, pos=pos, morphs=[feats.get(p, "") for p in pos]),
        )
        for words, _, _, pos in SENTENCES
    ]
    fit(nlp, examples, 80)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(w) for w, _, _, _ in SENTENCES) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")

    def analyses(pipeline):
        return [[(t.pos_, str(t.morph)) for t in pipeline(Doc(pipeline.vocab, words=w))] for w, _, _, _ in SENTENCES]

    assert analyses(teacher) == [[(p, feats.get(p, "")) for p in pos] for _, _, _, pos in SENTENCES]
    config = spacy_config(tmp_path, "morphologizer", max_steps=80, raw_text=True)
    student, _ = distill(teacher, config, tmp_path / "out")
    assert type(student.get_pipe("morphologizer")).__name__ == "Morphologizer"
    assert student.get_pipe("morphologizer").labels == teacher.get_pipe("morphologizer").labels
    assert analyses(student) == analyses(teacher)
    assert analyses(spacy.load(tmp_path / "out" / "model-best")) == analyses(teacher)


def test_rule_components_of_the_teacher_are_copied_into_the_student(tagger_teacher, tmp_path):
    """A teacher with an attribute_ruler after its tagger: the student (a tagger only)
    gets the ruler with its patterns, in the teacher's order, and is saved with it."""
    teacher = spacy.load(tagger_teacher / "model")
    ruler = teacher.add_pipe("attribute_ruler")
    ruler.add([[{"TAG": "NOUN"}]], {"POS": "NOUN"})
    ruler.add([[{"TAG": "VERB"}]], {"POS": "VERB"})
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    student, _ = distill(teacher, tagger_config(tmp_path), tmp_path / "out")
    assert student.pipe_names == ["tok2vec", "tagger", "attribute_ruler"]
    saved = spacy.load(tmp_path / "out" / "model-best")
    assert saved.pipe_names == ["tok2vec", "tagger", "attribute_ruler"]
    # spaCy's ruler is copied as greenkd_attribute_ruler (same patterns, a batch at a time).
    assert saved.get_pipe("attribute_ruler").patterns == ruler.patterns
    assert saved.get_pipe_meta("attribute_ruler").factory == "greenkd_attribute_ruler"
    doc = saved(Doc(saved.vocab, words=SENTENCES[1][0]))
    assert [t.pos_ for t in doc if t.tag_ in ("NOUN", "VERB")] == [t.tag_ for t in doc if t.tag_ in ("NOUN", "VERB")]
    assert any(t.pos_ == "NOUN" for t in doc)


def test_the_copied_attribute_ruler_can_stay_spacys(tagger_teacher, tmp_path):
    teacher = spacy.load(tagger_teacher / "model")
    teacher.add_pipe("attribute_ruler").add([[{"TAG": "NOUN"}]], {"POS": "NOUN"})
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["batch_attribute_ruler"] = False
    student, _ = distill(teacher, config, tmp_path / "out")
    assert student.get_pipe_meta("attribute_ruler").factory == "attribute_ruler"


def test_copy_from_teacher_names_must_exist(tagger_teacher, tmp_path):
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["copy_from_teacher"] = ["lemmatizer"]
    with pytest.raises(ValueError, match="E047"):
        distill(spacy.load(tagger_teacher / "model"), config, tmp_path / "out")


def test_a_whole_spacy_pipeline_is_distilled_in_one_run_with_one_teacher_pass(tmp_path):
    """tok2vec + tagger + parser teaching tok2vec + tagger + parser (listeners on a
    shared tok2vec) from raw text: one teacher pass labels both components, one loop
    trains both, and the student reproduces the teacher's tags and trees."""
    fix_random_seed(0)
    config = init_config(lang="en", pipeline=["tagger", "parser"], optimize="efficiency")
    config["components"]["parser"]["min_action_freq"] = 1
    teacher = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = [
        Example(Doc(teacher.vocab, words=w), Doc(teacher.vocab, words=w, heads=h, deps=d, tags=p))
        for w, h, d, p in SENTENCES
    ]
    fit(teacher, examples, 80)
    teacher.to_disk(tmp_path / "teacher")
    teacher = spacy.load(tmp_path / "teacher")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(w) for w, _, _, _ in SENTENCES) + "\n", encoding="utf8")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    student_config = config.copy()
    student_config["paths"]["train"] = student_config["paths"]["dev"] = str(tmp_path / "train.spacy")
    student_config["corpora"]["raw"] = {"@readers": "greenkd.TextFile.v1", "path": str(tmp_path / "raw.txt")}
    student_config["distillation"] = {
        "corpus": "corpora.raw", "max_steps": 100, "eval_frequency": 50, "gold_weight": 0.0,
        "cache_dir": str(tmp_path / "cache"), "optimizer": dict(config["training"]["optimizer"]),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None},
    }

    def analyses(pipeline):
        return [
            [(t.tag_, t.head.i, t.dep_) for t in pipeline(Doc(pipeline.vocab, words=w))]
            for w, _, _, _ in SENTENCES
        ]

    assert analyses(teacher) == [list(zip(p, h, d)) for _, h, d, p in SENTENCES]
    student, summary = distill(teacher, student_config, tmp_path / "out")
    assert analyses(student) == analyses(teacher)
    annotation = summary["annotation"]
    assert annotation["tagger"]["components"] == ["tagger", "parser"] == annotation["parser"]["components"]
    assert annotation["tagger"]["docs"] == 2  # the corpus went through the teacher once


def test_greenkd_parser_learns_silver_trees_from_a_spacy_parser(tmp_path):
    """Soft and silver meet: a biaffine student of a transition-parser teacher learns the
    teacher's predicted trees (no distributions to match), here from raw text alone."""
    from thinc.api import Config

    from .test_distill import STUDENT_CONFIG

    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("parser", config={"min_action_freq": 1})
    examples = [
        Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, heads=h, deps=d)) for w, h, d, _ in SENTENCES
    ]
    fit(nlp, examples, 80)
    nlp.to_disk(tmp_path / "teacher")
    teacher = spacy.load(tmp_path / "teacher")

    def trees(pipeline):
        return [[(t.head.i, t.dep_) for t in pipeline(Doc(pipeline.vocab, words=w))] for w, _, _, _ in SENTENCES]

    assert trees(teacher) == [list(zip(h, d)) for _, h, d, _ in SENTENCES]
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(w) for w, _, _, _ in SENTENCES) + "\n", encoding="utf8")
    config = Config().from_str(STUDENT_CONFIG, interpolate=False)
    config["components"]["greenkd_parser"]["model"]["tok2vec"]["pos_width"] = 0
    config["corpora"]["train"]["gold_pos"] = config["corpora"]["dev"]["gold_pos"] = False
    config["paths"]["train"] = config["paths"]["dev"] = str(tmp_path / "train.spacy")
    config["corpora"]["raw"] = {"@readers": "greenkd.TextFile.v1", "path": str(tmp_path / "raw.txt")}
    config["distillation"].update({"corpus": "corpora.raw", "cache_dir": str(tmp_path / "cache"), "max_steps": 120})
    student, summary = distill(teacher, config, tmp_path / "out")
    assert student.get_pipe("greenkd_parser").distill_settings.targets == "silver"
    assert trees(student) == trees(teacher)
    assert summary["annotation"]["greenkd_parser"]["docs"] == 2
    assert not summary["annotation"]["greenkd_parser"].get("reused")
    assert summary["training"]["max_rss_mb"] >= summary["annotation"]["greenkd_parser"]["max_rss_mb"] > 50
    # spaCy's own parser, a student of the same teacher on the same text, reads the same
    # silver trees: the teacher pass is not repeated for another student architecture.
    spacy_student = spacy_config(tmp_path, "parser", max_steps=2, raw_text=True)
    _, spacy_summary = distill(teacher, spacy_student, tmp_path / "out-spacy")
    assert spacy_summary["annotation"]["parser"]["reused"] is True


def test_greenkd_ner_learns_silver_entities_from_a_spacy_ner(tmp_path):
    """The issue's NER case: spaCy's transition ner teaches our CRF labeller (the CPU
    default config, shrunk) its predicted entities, from raw text alone."""
    from spacy.util import load_config

    teacher = _ner_teacher(tmp_path)
    config = load_config("configs/defaults/ner.cfg", interpolate=False)
    encoder = config["components"]["greenkd_ner"]["model"]["tok2vec"]
    encoder.update({"word_width": 16, "word_rows": 500, "affix_width": 8, "affix_rows": 100, "shape_width": 4, "hidden_width": 16, "dropout": 0.0})
    config["components"]["greenkd_ner"]["model"]["dropout"] = 0.0
    config["paths"]["train"] = config["paths"]["dev"] = str(tmp_path / "train.spacy")
    config["corpora"]["raw"] = {"@readers": "greenkd.TextFile.v1", "path": str(tmp_path / "raw.txt")}
    config["distillation"].update({
        "corpus": "corpora.raw", "cache_dir": str(tmp_path / "cache"), "max_steps": 80, "eval_frequency": 40,
        "gold_weight": 0.0, "dropout": 0.0,
    })
    config["distillation"]["batcher"] = {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None}
    config["distillation"]["optimizer"]["learn_rate"] = 0.02
    student, _ = distill(teacher, config, tmp_path / "out")
    assert student.get_pipe("greenkd_ner").distill_settings.targets == "silver"
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in NER_TEXTS] == NER_ENTS


def test_greenkd_ner_weighs_gold_docs_by_gold_weight_against_silver(tmp_path, monkeypatch):
    """In the silver path a doc with gold entities learns them with weight gold_weight,
    a doc the teacher annotated with weight 1; at gold_weight 1 no weights are passed."""
    teacher = _ner_teacher(tmp_path)
    nlp = spacy.blank("en")
    tiny = {"word_width": 8, "word_rows": 100, "affix_width": 4, "affix_rows": 100, "shape_width": 4, "hidden_width": 4}
    ner = nlp.add_pipe("greenkd_ner", config={"model": {"tok2vec": tiny}})
    gold = Example.from_dict(nlp.make_doc(NER_TEXTS[0]), {"entities": NER_ENTS[0]})
    raw_doc = nlp.make_doc(NER_TEXTS[1])
    raw = Example(raw_doc, raw_doc.copy())
    nlp.initialize(lambda: [gold])
    ner.check_teacher_kind(teacher.get_pipe("ner"))
    seen = []
    monkeypatch.setattr(ner, "_step", lambda docs, targets, drop, sgd: seen.append(targets) or 0.0)
    for weight, expected in ((3.0, [3.0, 1.0]), (1.0, None)):
        ner.update_distill_settings(gold_weight=weight)
        ner.distill(teacher.get_pipe("ner"), [gold, raw])
        assert seen[-1]["doc_weights"] == expected
        assert all(seen[-1]["has_gold"])  # the raw doc learns the teacher's entities


def test_spacy_ner_student_learns_gold_where_the_corpus_has_it(tmp_path):
    """spaCy's ner as a silver student: a gold doc is learned from its gold (not the
    teacher's entities), gold_weight times as often as a teacher-annotated doc, the
    fraction carried from doc to doc; gold_weight 0 learns the teacher's entities only."""
    from greenkd_spacy.distillation.adapters import distillable

    teacher = _ner_teacher(tmp_path)
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("ner")
    # Gold that the teacher does not predict, so gold and silver can be told apart.
    gold = Example.from_dict(nlp.make_doc(NER_TEXTS[0]), {"entities": [(0, 4, "LOC")]})
    raw_doc = nlp.make_doc(NER_TEXTS[1])
    raw = Example(raw_doc, raw_doc.copy())
    nlp.initialize(lambda: [gold, Example.from_dict(nlp.make_doc(NER_TEXTS[1]), {"entities": NER_ENTS[1]})])
    adapter = distillable(ner)
    adapter.check_teacher_kind(teacher.get_pipe("ner"))
    seen = []

    class Recorder:  # spaCy's Cython pipe's update cannot be patched: wrap it
        def update(self, batch, **kwargs):
            seen.append([[(e.text, e.label_) for e in eg.reference.ents] for eg in batch])

    adapter.pipe = Recorder()
    adapter.update_distill_settings(gold_weight=2.0)
    adapter.distill(teacher.get_pipe("ner"), [gold, raw])
    assert seen[-1] == [[("John", "LOC")], [("John", "LOC")], [("Mary", "PER"), ("Berlin", "LOC")]]
    adapter.update_distill_settings(gold_weight=0.5)
    counts = []
    for _ in range(4):
        adapter.distill(teacher.get_pipe("ner"), [gold, raw])
        counts.append(sum(ents == [("John", "LOC")] for ents in seen[-1]))
    assert counts == [0, 1, 0, 1]
    adapter.update_distill_settings(gold_weight=0.0)
    adapter.distill(teacher.get_pipe("ner"), [gold, raw])
    assert seen[-1][0] == [("John", "PER"), ("Paris", "LOC")]


def test_spacy_ner_behind_a_shared_tok2vec_takes_gold_copies_with_its_encoder(tmp_path, monkeypatch):
    """A gold weight for spaCy's ner reading a shared tok2vec: the loop puts the copies
    in the batch of the tok2vec and of its listener alike (a listener refuses any other
    batch, spaCy's E953), and the ner counts each copy once; with the ner owning its
    encoder the adapter makes the copies itself. Both learn the teacher's entities."""
    from spacy.pipeline.tok2vec import Tok2Vec

    teacher = _ner_teacher(tmp_path)
    config = spacy_config(tmp_path, "ner", max_steps=40)
    config["distillation"]["gold_weight"] = 2.0
    sizes = []
    update = Tok2Vec.update

    def recording_update(self, examples, **kwargs):
        sizes.append(len(examples))
        return update(self, examples, **kwargs)

    # The run's settings stay on the loop's adapters (not in the saved cfg): keep them.
    import greenkd_spacy.distillation.loop as loop_module

    learners = {}
    plan_gold_copies = loop_module.plan_gold_copies

    def recording_plan(student, run_learners, *args, **kwargs):
        learners.update(run_learners)
        return plan_gold_copies(student, run_learners, *args, **kwargs)

    monkeypatch.setattr(Tok2Vec, "update", recording_update)
    monkeypatch.setattr(loop_module, "plan_gold_copies", recording_plan)
    student, summary = distill(teacher, config, tmp_path / "out")
    assert summary["training"]["steps"] == 40
    assert sizes and set(sizes) == {4}  # both gold docs of every batch of 2, twice
    assert learners["ner"].distill_settings.gold_copies == 2.0 and learners["ner"].gold_weight == 1.0
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in NER_TEXTS] == NER_ENTS
    monkeypatch.undo()
    monkeypatch.setattr(loop_module, "plan_gold_copies", recording_plan)
    own = copy.deepcopy(config.interpolate())
    own["components"]["ner"]["model"]["tok2vec"] = dict(own["components"]["tok2vec"]["model"])
    del own["components"]["tok2vec"]
    own["nlp"]["pipeline"] = ["ner"]
    student, summary = distill(teacher, own, tmp_path / "out-own")
    assert student.pipe_names == ["ner"] and summary["training"]["steps"] == 40
    assert learners["ner"].distill_settings.gold_copies == 0.0 and learners["ner"].gold_weight == 2.0
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in NER_TEXTS] == NER_ENTS


def test_shipped_spacy_ner_config_distils_on_train_plus_unlabeled_text(tmp_path):
    """The NER benchmark's student as shipped (configs/baselines/ner.cfg): its
    corpora.distill reads the training set, then the unlabeled text, and its ner learns
    the teacher's entities on both."""
    from spacy.util import load_config

    teacher = _ner_teacher(tmp_path)
    config = load_config("configs/baselines/ner.cfg", interpolate=False)
    config["paths"].update({
        "train": str(tmp_path / "train.spacy"), "dev": str(tmp_path / "train.spacy"),
        "unlabeled": str(tmp_path / "raw.txt"),
    })
    config["distillation"].update({
        "cache_dir": str(tmp_path / "cache"), "max_steps": 60, "eval_frequency": 20, "dropout": 0.0,
    })
    config["distillation"]["batcher"] = {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None}
    student, summary = distill(teacher, config, tmp_path / "out")
    assert summary["annotation"]["ner"]["docs"] == 4  # two gold docs, then the two raw lines
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in NER_TEXTS] == NER_ENTS


def test_spacy_parser_learns_silver_trees_from_a_greenkd_parser(tmp_path):
    """Our biaffine parser teaches spaCy's transition parser: the student's actions are
    made from the teacher's labels (a greenkd teacher has no transition system)."""
    from .util import save_trained_parser

    save_trained_parser(tmp_path, "train.spacy", copy_pos=False)
    teacher = spacy.load(tmp_path / "model")

    def trees(pipeline):
        return [[(t.head.i, t.dep_) for t in pipeline(Doc(pipeline.vocab, words=w))] for w, _, _, _ in SENTENCES]

    assert trees(teacher) == [list(zip(h, d)) for _, h, d, _ in SENTENCES]
    student, summary = distill(teacher, spacy_config(tmp_path, "parser", max_steps=80), tmp_path / "out")
    assert trees(student) == trees(teacher)
    assert type(student.get_pipe("parser")).__name__ == "DependencyParser"
    assert summary["annotation"]["parser"]["docs"] == len(SENTENCES)


def test_spacy_ner_learns_silver_entities_from_a_greenkd_ner_on_raw_text(tmp_path):
    """greenkd_ner (the CPU default, shrunk) teaches spaCy's ner from raw text alone."""
    from spacy.util import load_config, load_model_from_config

    config = load_config("configs/defaults/ner.cfg", interpolate=False)
    config["components"]["greenkd_ner"]["model"]["tok2vec"].update({
        "word_width": 16, "word_rows": 500, "affix_width": 8, "affix_rows": 100, "shape_width": 4,
        "hidden_width": 16, "dropout": 0.0,
    })
    config["components"]["greenkd_ner"]["model"]["dropout"] = 0.0
    fix_random_seed(0)
    nlp = load_model_from_config(config, auto_fill=True)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in zip(NER_TEXTS, NER_ENTS)]
    save_teacher(nlp, examples, tmp_path, learn_rate=0.02)
    (tmp_path / "raw.txt").write_text("\n".join(NER_TEXTS) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")

    def ents(pipeline):
        return [[(e.start_char, e.end_char, e.label_) for e in pipeline(t).ents] for t in NER_TEXTS]

    assert ents(teacher) == NER_ENTS
    student, _ = distill(teacher, spacy_config(tmp_path, "ner", raw_text=True), tmp_path / "out")
    assert ents(student) == NER_ENTS
    assert type(student.get_pipe("ner")).__name__ == "EntityRecognizer"


LEMMAS = {"ate": "eat", "eggs": "egg", "like": "like", "anchovies": "anchovy"}


def _silver_teacher_and_data(tmp_path, component, make_reference, steps=80, config=None):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(component, config=config or {})
    examples = [Example(Doc(nlp.vocab, words=w), make_reference(nlp, w)) for w, _, _, _ in SENTENCES]
    fit(nlp, examples, steps)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(" ".join(w) for w, _, _, _ in SENTENCES) + "\n", encoding="utf8")
    return spacy.load(tmp_path / "teacher")


def test_spacy_trainable_lemmatizer_learns_silver_lemmas_on_raw_text(tmp_path):
    def reference(nlp, words):
        return Doc(nlp.vocab, words=words, lemmas=[LEMMAS.get(w, w.lower()) for w in words])

    # spaCy drops edit trees seen fewer than 3 times: two sentences see each once
    teacher = _silver_teacher_and_data(tmp_path, "trainable_lemmatizer", reference, steps=100, config={"min_tree_freq": 1})

    def lemmas(pipeline):
        return [[t.lemma_ for t in pipeline(Doc(pipeline.vocab, words=w))] for w, _, _, _ in SENTENCES]

    assert lemmas(teacher) == [[LEMMAS.get(w, w.lower()) for w in ws] for ws, _, _, _ in SENTENCES]
    student, _ = distill(teacher, spacy_config(tmp_path, "trainable_lemmatizer", max_steps=100, raw_text=True), tmp_path / "out")
    assert type(student.get_pipe("trainable_lemmatizer")).__name__ == "EditTreeLemmatizer"
    assert lemmas(student) == lemmas(teacher)


def test_spacy_spancat_learns_silver_spans_on_raw_text(tmp_path):
    def reference(nlp, words):
        doc = Doc(nlp.vocab, words=words)
        doc.spans["sc"] = [Span(doc, i, i + 1, label="FOOD") for i, w in enumerate(words) if w in ("eggs", "pizza", "anchovies")]
        return doc

    teacher = _silver_teacher_and_data(tmp_path, "spancat", reference, steps=100)

    def spans(pipeline):
        docs = [pipeline(Doc(pipeline.vocab, words=w)) for w, _, _, _ in SENTENCES]
        return [sorted((s.start, s.end, s.label_) for s in doc.spans["sc"]) for doc in docs]

    assert spans(teacher) == [[(3, 4, "FOOD")], [(3, 4, "FOOD"), (5, 6, "FOOD")]]
    student, _ = distill(teacher, spacy_config(tmp_path, "spancat", max_steps=100, raw_text=True), tmp_path / "out")
    assert spans(student) == spans(teacher)


def test_spacy_spancat_learns_silver_chunks_from_a_greenkd_chunker(tmp_path):
    """greenkd_chunker's spans (under its spans_key) teach spaCy's spancat (under its
    own key), from raw text alone."""
    def reference(nlp, words):
        doc = Doc(nlp.vocab, words=words)
        doc.spans["chunks"] = [Span(doc, i, i + 1, label="NP") for i, w in enumerate(words) if w in ("eggs", "pizza", "anchovies")]
        return doc

    tiny = {"word_width": 16, "word_rows": 100, "affix_width": 8, "affix_rows": 100, "shape_width": 8, "hidden_width": 16}
    teacher = _silver_teacher_and_data(tmp_path, "greenkd_chunker", reference, steps=150, config={"model": {"tok2vec": tiny}})

    def spans(pipeline, key):
        docs = [pipeline(Doc(pipeline.vocab, words=w)) for w, _, _, _ in SENTENCES]
        return [sorted((s.start, s.end, s.label_) for s in doc.spans[key]) for doc in docs]

    assert spans(teacher, "chunks") == [[(3, 4, "NP")], [(3, 4, "NP"), (5, 6, "NP")]]
    student, _ = distill(teacher, spacy_config(tmp_path, "spancat", max_steps=100, raw_text=True), tmp_path / "out")
    assert spans(student, "sc") == spans(teacher, "chunks")


def test_distillation_stops_early_on_patience(tagger_teacher, tmp_path):
    """[distillation] patience ends the run as spaCy's [training] patience does: the
    tiny tagger is perfect at its first evaluation, so nothing better comes after it."""
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    config = tagger_config(tmp_path, max_steps=200)
    config["distillation"]["patience"] = 20
    _, summary = distill(spacy.load(tagger_teacher / "model"), config, tmp_path / "out")
    scores = [row["score"] for row in summary["history"]]
    assert scores[0] == max(scores)
    assert summary["training"]["steps"] == 40


def test_every_pairs_cache_key_comes_from_one_read_of_the_corpus(tagger_teacher):
    """A pipeline student has one cache key per component; the corpus is read once for
    all of them, and each key is what it would be alone."""
    from greenkd_spacy.distillation.teacher_pass import teacher_fingerprints

    teacher = spacy.load(tagger_teacher / "model")
    reads = []

    def corpus():
        reads.append(1)
        for words, _, _, _ in SENTENCES:
            doc = Doc(teacher.vocab, words=words)
            yield Example(doc, doc.copy())

    keys = [("tagger", {"kind": "a"}), ("tagger", {"kind": "b"})]
    both, n, _ = teacher_fingerprints(teacher, keys, lambda nlp: corpus(), teacher)
    assert reads == [1] and n == len(SENTENCES)
    alone = [teacher_fingerprints(teacher, [key], lambda nlp: corpus(), teacher)[0][0] for key in keys]
    assert both == alone and both[0] != both[1]


def test_fingerprint_parts_are_the_token_values(tagger_teacher):
    """The cache key reads words, POS and sentence starts from one array; the values
    (and so every key already on disk) are those of the token-by-token reading."""
    from greenkd_spacy.distillation.teacher_pass import doc_fingerprint_parts

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    words, heads, deps, pos = SENTENCES[0]
    docs = [
        nlp.make_doc("Raw text, no annotation at all."),
        Doc(nlp.vocab, words=words, pos=pos),
        nlp("One sentence here. And a second one!"),
        Doc(nlp.vocab, words=words, heads=[h - 1 if h else i for i, h in enumerate(heads)], deps=deps),
        Doc(nlp.vocab, words=["x", "y", "z"], sent_starts=[True, None, False]),
        nlp.make_doc(""),
    ]
    for doc in docs:
        starts = [int(t.is_sent_start or 0) for t in doc] if doc.has_annotation("SENT_START") else 0
        assert doc_fingerprint_parts(doc) == ([t.text for t in doc], [t.pos_ for t in doc], starts)
    assert doc_fingerprint_parts(docs[2])[2] == [1, 0, 0, 0, 1, 0, 0, 0, 0]


def test_a_student_with_teacher_labels_initializes_from_a_sample(tagger_teacher, tmp_path, monkeypatch):
    """spaCy's initialize reads all it is given (validate_get_examples): a student whose
    labels come from the teacher gets INIT_SAMPLE examples, not the whole corpus."""
    from spacy.pipeline import Tagger

    import greenkd_spacy.distillation.loop as loop

    seen = []
    initialize = Tagger.initialize

    def counting(self, get_examples, *, nlp=None, labels=None):
        seen.append(sum(1 for _ in get_examples()))
        return initialize(self, get_examples, nlp=nlp, labels=labels)

    monkeypatch.setattr(Tagger, "initialize", counting)
    monkeypatch.setattr(loop, "INIT_SAMPLE", 1)
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    teacher = spacy.load(tagger_teacher / "model")
    student, _ = distill(teacher, tagger_config(tmp_path, max_steps=20), tmp_path / "out")
    assert seen == [1] and len(SENTENCES) > 1
    assert student.get_pipe("tagger").labels == teacher.get_pipe("tagger").labels


def test_a_worker_rebuilds_a_senters_silver_adapter_from_the_job(tmp_path):
    """Ray/multiprocess workers rebuild each pair from the job: a senter taught by a
    parser must get the same (silver) adapter, and so the same fingerprint settings, as
    in the driver; E037 would stop a worker that built the soft one."""
    from greenkd_spacy.distillation.adapters import SentStartsFromTreesAdapter
    from greenkd_spacy.distillation.worker import AnnotationJob, RecordMaker

    teacher = spacy.blank("en")
    teacher.add_pipe("parser").add_label("nsubj")
    teacher.initialize()
    teacher.to_disk(tmp_path / "teacher")
    student = spacy.blank("en")
    student.add_pipe("senter")
    pair = {"student_pipe": "senter", "teacher_pipe": "parser", "student_cfg": {},
            "settings": {"kind": "silver_deps"}, "fingerprint": "f", "directory": str(tmp_path / "cache")}
    job = AnnotationJob(teacher=str(tmp_path / "teacher"), student_config=student.config.to_str(), pairs=[pair], top_k=0)
    [(teacher_pipe, pipe)] = RecordMaker.from_job(job).pairs
    assert teacher_pipe.name == "parser" and isinstance(pipe, SentStartsFromTreesAdapter)


def test_a_tagger_student_takes_gold_tags_beside_the_teachers(tagger_teacher, tmp_path):
    """Where the corpus has gold tags the student learns them beside the teacher's
    distributions (gold_weight), as greenkd_parser takes gold trees: a teacher that is
    wrong on an attribute the corpus has right no longer teaches its error alone."""
    fix_random_seed(0)
    wrong = spacy.blank("en")
    wrong.add_pipe("tagger")
    # The teacher tags "pizza" ADJ; the corpus says NOUN (the same label set).
    mistagged = [[("ADJ" if w == "pizza" else p) for w, p in zip(words, pos)] for words, _, _, pos in SENTENCES]
    examples = [
        Example(Doc(wrong.vocab, words=words), Doc(wrong.vocab, words=words, tags=tags))
        for (words, _, _, _), tags in zip(SENTENCES, mistagged)
    ]
    fit(wrong, examples, 60)
    assert tags(wrong) == mistagged
    (tmp_path / "train.spacy").write_bytes((tagger_teacher / "train.spacy").read_bytes())
    gold = [pos for _, _, _, pos in SENTENCES]
    # The run's weight, or the component's own in [distillation.gold_weights].
    # The teacher's weight in [distillation.teacher_weights] (0: gold alone).
    runs = [(0.0, {}, {}, mistagged), (3.0, {}, {}, gold), (0.0, {"tagger": 3.0}, {}, gold), (1.0, {}, {"tagger": 0.0}, gold)]
    for weight, own, teacher_weights, expected in runs:
        config = tagger_config(tmp_path, max_steps=80)
        config["distillation"]["gold_weight"] = weight
        config["distillation"]["gold_weights"] = own
        config["distillation"]["teacher_weights"] = teacher_weights
        config["distillation"]["cache_dir"] = str(tmp_path / "cache")
        student, _ = distill(wrong, config, tmp_path / f"out{weight}{len(own)}{len(teacher_weights)}")
        assert tags(student) == expected, (weight, own, teacher_weights)
    config["distillation"]["gold_weight"] = 0.0
    with pytest.raises(ValueError, match="E084"):
        distill(wrong, config, tmp_path / "nothing")
    config["distillation"]["teacher_weights"] = {}
    config["distillation"]["gold_weights"] = {"tagger": 3.0, "morphologiser": 3.0}
    with pytest.raises(ValueError, match=r"gold_weights\] names \['morphologiser'\].*'tagger'"):
        distill(wrong, config, tmp_path / "misnamed")


def test_a_teacher_weight_is_refused_by_a_student_that_cannot_scale_its_teachers_loss():
    """Only soft-target students scale their teacher's loss: a silver student (spaCy's
    ner learns the teacher's entities through its own update) asked for another
    teacher weight says so before the teacher pass, where a tagger takes it."""
    nlp = spacy.blank("en")
    ner, tagger = distillable(nlp.add_pipe("ner")), distillable(nlp.add_pipe("tagger"))
    for adapter in (ner, tagger):
        adapter.set_distill_settings(DistillSettings(teacher_weight=0.5))
    with pytest.raises(ValueError, match=r"E083.*ner"):
        ner.check_teacher_weight()
    tagger.check_teacher_weight()


def test_the_gold_loss_of_a_tagger_student_skips_docs_without_gold():
    """A raw-text doc's reference has no tags, and a senter's reference no sentence
    starts: its rows of the gold gradient are zero (spaCy's senter loss would read
    unset starts as "inside a sentence")."""
    nlp = spacy.blank("en")
    senter = nlp.add_pipe("senter")
    words = ["A", "b", ".", "C", "d", "."]
    gold_doc = Doc(nlp.vocab, words=words, sent_starts=[True, False, False, True, False, False])
    raw = Doc(nlp.vocab, words=words)
    nlp.initialize(lambda: [Example(gold_doc.copy(), gold_doc)])
    adapter = distillable(senter)
    examples = [Example(raw.copy(), gold_doc), Example(raw.copy(), raw.copy())]
    assert [adapter.has_gold(eg.reference) for eg in examples] == [True, False]
    scores = senter.model.predict([eg.predicted for eg in examples])
    _, d_scores = adapter._gold_loss(examples)(scores)
    assert numpy.abs(senter.model.ops.to_numpy(d_scores[0])).sum() > 0
    assert not numpy.abs(senter.model.ops.to_numpy(d_scores[1])).any()
    assert adapter._gold_loss(examples[1:]) is None
