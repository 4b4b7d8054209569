"""The student's shared tok2vec learning the teacher encoder's per-token output
([distillation] hidden_weight; distillation/hidden.py)."""
import numpy
import pytest
import spacy
from spacy.cli.init_config import init_config
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import fix_random_seed, load_model_from_config

from greenkd_spacy.distillation.hidden import cosine_loss, projection_matrix
from greenkd_spacy.distillation.loop import distill

from .test_spacy_adapters import save_tagger_teacher, tagger_config
from .util import SENTENCES


def test_cosine_loss_and_its_gradient():
    rng = numpy.random.default_rng(0)
    predicted = rng.normal(size=(4, 5)).astype("float32")
    target = rng.normal(size=(4, 5)).astype("float32")
    target[3] = 0.0  # a token without a teacher vector counts nothing
    loss, grad = cosine_loss(predicted, target)
    assert not grad[3].any()
    same, _ = cosine_loss(target[:3] * 2.5, target[:3])
    assert same == pytest.approx(0.0, abs=1e-5)
    eps = 1e-3
    for i, j in [(0, 0), (1, 3), (2, 4)]:
        bumped = predicted.copy()
        bumped[i, j] += eps
        numeric = (cosine_loss(bumped, target)[0] - loss) / eps
        assert numeric == pytest.approx(float(grad[i, j]), rel=0.05, abs=1e-3)


def test_the_projection_is_orthonormal_and_the_same_in_every_process():
    q = projection_matrix(384, 128, seed=0)
    assert q.shape == (384, 128)
    assert numpy.allclose(q.T @ q, numpy.eye(128), atol=1e-4)
    assert numpy.array_equal(q, projection_matrix(384, 128, seed=0))
    assert projection_matrix(64, 128, seed=0).shape == (64, 64)  # never wider than the encoder


def shared_tagger_config(tmp_path, max_steps=100, hidden_weight=1.0):
    """spaCy's efficiency tagger (a tok2vec component and a tagger listening to it),
    its encoder learning the teacher's encoder output."""
    config = tagger_config(tmp_path, max_steps)
    config["distillation"].update(hidden_weight=hidden_weight, hidden_dims=16)
    return config


@pytest.fixture(scope="module")
def encoder_teacher(tmp_path_factory):
    """A tok2vec + tagger teacher trained on the two tiny sentences."""
    path = tmp_path_factory.mktemp("encoder_teacher")
    fix_random_seed(0)
    config = init_config(lang="en", pipeline=["tagger"], optimize="efficiency")
    return save_tagger_teacher(load_model_from_config(config, auto_fill=True), path, 40)


def test_the_students_encoder_learns_the_teachers_encoder_output(encoder_teacher, tmp_path):
    teacher = spacy.load(encoder_teacher / "model")
    (tmp_path / "train.spacy").write_bytes((encoder_teacher / "train.spacy").read_bytes())
    student, summary = distill(teacher, shared_tagger_config(tmp_path), tmp_path / "out")
    assert set(summary["annotation"]) == {"tok2vec", "tagger"}
    hidden = [row["losses"]["tok2vec"] for row in summary["history"]]
    # 20 steps per row: the cosine loss of the encoder's (mapped) output falls
    assert hidden[-1] < 0.5 * hidden[0], hidden
    # the teacher's tags are still learned beside it, and the map is not saved
    words = [words for words, _, _, _ in SENTENCES]
    assert [[t.tag_ for t in student(Doc(student.vocab, words=w))] for w in words] == [
        [t.tag_ for t in teacher(Doc(teacher.vocab, words=w))] for w in words
    ]
    saved = spacy.load(tmp_path / "out" / "model-best")
    assert saved.pipe_names == ["tok2vec", "tagger"]


def test_without_hidden_weight_the_encoder_learns_only_through_its_listeners(encoder_teacher, tmp_path):
    teacher = spacy.load(encoder_teacher / "model")
    (tmp_path / "train.spacy").write_bytes((encoder_teacher / "train.spacy").read_bytes())
    _, summary = distill(teacher, shared_tagger_config(tmp_path, max_steps=10, hidden_weight=0.0), tmp_path / "out")
    assert set(summary["annotation"]) == {"tagger"}


def test_hidden_states_need_a_shared_encoder_on_both_sides(encoder_teacher, tmp_path):
    teacher = spacy.load(encoder_teacher / "model")
    (tmp_path / "train.spacy").write_bytes((encoder_teacher / "train.spacy").read_bytes())
    config = shared_tagger_config(tmp_path, max_steps=10)
    # a student whose tagger owns its encoder: no tok2vec to teach
    config["nlp"]["pipeline"] = ["tagger"]
    del config["components"]["tok2vec"]
    config["components"]["tagger"]["model"]["tok2vec"] = {
        "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 2, "embed_size": 500,
        "window_size": 1, "maxout_pieces": 3, "subword_features": True, "pretrained_vectors": None,
    }
    with pytest.raises(ValueError, match="E078"):
        distill(teacher, config, tmp_path / "out")
    # a teacher without an encoder component
    fix_random_seed(0)
    bare = spacy.blank("en")
    bare.add_pipe("tagger")
    examples = [Example(Doc(bare.vocab, words=w), Doc(bare.vocab, words=w, tags=p)) for w, _, _, p in SENTENCES]
    bare.initialize(lambda: examples)
    with pytest.raises(ValueError, match="E079"):
        distill(bare, shared_tagger_config(tmp_path, max_steps=10), tmp_path / "out2")
