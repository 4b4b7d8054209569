"""A user's own pipeline distilled as the README says: configs/students/own_pipeline.cfg
learns a tagger + parser + ner teacher from raw text alone, with a dev set the teacher
labelled; and the root project's `distill` workflow runs it from the command line."""
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.cli.init_config import init_config
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed, load_config

from greenkd_spacy.distillation.loop import distill

ROOT = Path(__file__).parent.parent
CONFIG = ROOT / "configs" / "students" / "own_pipeline.cfg"
SENTENCES = [
    (["I", "like", "green", "eggs", "in", "Paris", "."], [1, 1, 3, 1, 5, 1, 1],
     ["nsubj", "ROOT", "amod", "obj", "case", "obl", "punct"], ["PRP", "VBP", "JJ", "NNS", "IN", "NNP", "."],
     ["O", "O", "O", "O", "O", "B-GPE", "O"]),
    (["Mary", "ate", "pizza", "."], [1, 1, 1, 1], ["nsubj", "ROOT", "obj", "punct"], ["NNP", "VBD", "NN", "."],
     ["B-PERSON", "O", "O", "O"]),
]


def make_teacher(path: Path) -> spacy.Language:
    """A tagger + parser + ner pipeline (spaCy's CNN) trained on two sentences, saved with
    raw text to learn from and a dev set it labelled itself (as `spacy apply` would)."""
    fix_random_seed(0)
    config = init_config(lang="en", pipeline=["tagger", "parser", "ner"], optimize="efficiency")
    config["components"]["parser"]["min_action_freq"] = 1
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = [
        Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, heads=h, deps=d, tags=t, ents=e))
        for w, h, d, t, e in SENTENCES
    ]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(80):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path / "teacher")
    texts = [" ".join(words) for words, *_ in SENTENCES]
    (path / "text.txt").write_text("\n".join(texts * 10) + "\n", encoding="utf8")
    (path / "heldout.txt").write_text("\n".join(texts) + "\n", encoding="utf8")
    DocBin(docs=list(nlp.pipe(texts))).to_disk(path / "dev.spacy")
    return nlp


def analyses(nlp, texts):
    return [[(t.tag_, t.head.i, t.dep_, t.ent_iob_ + t.ent_type_) for t in nlp(text)] for text in texts]


def test_own_pipeline_config_learns_a_tagger_parser_ner_teacher_from_raw_text(tmp_path):
    teacher = make_teacher(tmp_path)
    config = load_config(CONFIG, overrides={
        "paths.unlabeled": str(tmp_path / "text.txt"), "paths.dev": str(tmp_path / "dev.spacy"),
        "distillation.max_steps": 40, "distillation.eval_frequency": 20,
        "distillation.cache_dir": str(tmp_path / "cache"),
        "distillation.batcher.size": 20,
    }, interpolate=False)
    student, summary = distill(teacher, config, tmp_path / "student")
    assert student.pipe_names == ["tagger", "greenkd_parser", "ner"]
    assert set(summary["annotation"]) == {"tagger", "greenkd_parser", "ner"}
    texts = [" ".join(words) for words, *_ in SENTENCES]
    # the teacher's trees are the student's (its tags and entities too, on two sentences)
    assert analyses(student, texts) == analyses(teacher, texts)


@pytest.mark.slow
def test_root_project_distills_your_pipeline(tmp_path):
    """`spacy project run own-distill . --vars.teacher ... --vars.text ... --vars.heldout ...`
    from a copy of the root project, as the README says (teacher labels the dev set first)."""
    make_teacher(tmp_path)
    project = tmp_path / "project"
    (project / "configs" / "students").mkdir(parents=True)
    (project / "project.yml").write_text((ROOT / "project.yml").read_text(encoding="utf8"), encoding="utf8")
    (project / "configs" / "students" / "own_pipeline.cfg").write_text(CONFIG.read_text(encoding="utf8"), encoding="utf8")
    variables = [f"--vars.teacher={tmp_path / 'teacher'}", f"--vars.text={tmp_path / 'text.txt'}",
                 f"--vars.heldout={tmp_path / 'heldout.txt'}", "--vars.own_steps=20"]
    for step in ("own-dev", "own-distill"):
        result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", step, str(project), *variables],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    student = spacy.load(project / "training" / "own" / "model-best")
    assert student.pipe_names == ["tagger", "greenkd_parser", "ner"]
