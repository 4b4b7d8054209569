"""spaCy's own `tagger` teaches and learns through the distillation loop, as it is:
no new factory, the student a plain spaCy pipeline (issue 21, first kind)."""
import numpy
import pytest
import spacy
from spacy.cli.init_config import init_config
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed

from greenkd_spacy.distillation.adapters import TaggerAdapter, distillable
from greenkd_spacy.distillation.loop import distill

from .util import SENTENCES


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


@pytest.fixture(scope="module")
def tagger_teacher(tmp_path_factory):
    """A spaCy tagger trained on the two tiny sentences (tags = their UPOS)."""
    path = tmp_path_factory.mktemp("tagger")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    examples = [
        Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, tags=pos))
        for words, _, _, pos in SENTENCES
    ]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(path / "train.spacy")
    return path


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


def test_tagger_cannot_learn_from_another_kind(teacher_dir, tmp_path):
    """A greenkd_parser cannot teach a tagger: said before the teacher pass."""
    teacher = spacy.load(teacher_dir / "model")
    (tmp_path / "train.spacy").write_bytes((teacher_dir / "train.spacy").read_bytes())
    config = tagger_config(tmp_path)
    config["distillation"]["student_to_teacher"] = {"tagger": "greenkd_parser"}
    with pytest.raises(ValueError, match="E010.*tagger"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_tagger_loss_is_zero_at_the_teacher_and_its_gradient_is_the_kl_gradient():
    nlp = spacy.blank("en")
    adapter = distillable(nlp.add_pipe("tagger"))
    assert isinstance(adapter, TaggerAdapter)
    adapter.cfg["distill_temperature"] = 2.0
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


def test_spacy_ner_learns_silver_entities_from_a_spacy_ner_on_raw_text(tmp_path):
    """spaCy's most requested distillation: the teacher's predicted entities as gold
    for a CNN ner, here from raw text only."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("ner")
    texts = ["John lives in Paris .", "Mary works in Berlin ."]
    ents = [[(0, 4, "PER"), (14, 19, "LOC")], [(0, 4, "PER"), (14, 20, "LOC")]]
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in zip(texts, ents)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("\n".join(texts) + "\n", encoding="utf8")
    teacher = spacy.load(tmp_path / "teacher")
    predicted = [[(e.start_char, e.end_char, e.label_) for e in teacher(t).ents] for t in texts]
    assert predicted == ents
    student, summary = distill(teacher, spacy_config(tmp_path, "ner", raw_text=True), tmp_path / "out")
    assert [[(e.start_char, e.end_char, e.label_) for e in student(t).ents] for t in texts] == predicted
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
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
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
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
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
