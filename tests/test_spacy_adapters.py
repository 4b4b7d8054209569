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
