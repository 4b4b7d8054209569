"""A user's own pipeline distilled as the README says: `greenkd-init-student` writes the
student of a tagger + parser + ner teacher, `spacy distill` teaches it from raw text
alone (the teacher labels held-out text as the dev set) and reports what it kept; and
the root project's `distill` workflow runs both from the command line."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.cli.init_config import init_config
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import fix_random_seed
from thinc.api import Config

from greenkd_spacy.distillation.filled_config import filled_config_text
from greenkd_spacy.distillation.student_config import config_text
from greenkd_spacy.distillation.student_plan import plan_student
from greenkd_spacy.distillation.loop import distill

ROOT = Path(__file__).parent.parent
SENTENCES = [
    (["I", "like", "green", "eggs", "in", "Paris", "."], [1, 1, 3, 1, 5, 1, 1],
     ["nsubj", "ROOT", "amod", "obj", "case", "obl", "punct"], ["PRP", "VBP", "JJ", "NNS", "IN", "NNP", "."],
     ["O", "O", "O", "O", "O", "B-GPE", "O"]),
    (["Mary", "ate", "pizza", "."], [1, 1, 1, 1], ["nsubj", "ROOT", "obj", "punct"], ["NNP", "VBD", "NN", "."],
     ["B-PERSON", "O", "O", "O"]),
]


def make_teacher(path: Path) -> spacy.Language:
    """A tagger + parser + ner pipeline (spaCy's CNN) trained on two sentences, saved with
    raw text to learn from."""
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
    return nlp


def analyses(nlp, texts):
    return [[(t.tag_, t.head.i, t.dep_, t.ent_iob_ + t.ent_type_) for t in nlp(text)] for text in texts]


def test_generated_student_learns_a_tagger_parser_ner_teacher_from_raw_text(tmp_path):
    teacher = make_teacher(tmp_path)
    plan = plan_student(teacher)
    assert [(c.name, c.factory) for c in plan.components] == [
        ("tagger", "tagger"), ("senter", "senter"), ("parser", "greenkd_parser"), ("ner", "greenkd_ner"),
    ]
    config = Config().from_str(filled_config_text(config_text(plan, str(tmp_path / "teacher"))), interpolate=False)
    config["paths"]["text"] = str(tmp_path / "text.txt")
    config["distillation"].update(
        heldout=2, max_steps=60, eval_frequency=20, cache_dir=str(tmp_path / "cache"), dropout=0.0,
    )
    config["distillation"]["batcher"]["size"] = 20
    student, summary = distill(teacher, config, tmp_path / "student")
    assert student.pipe_names == ["tok2vec", "tagger", "senter", "parser", "ner"]
    assert set(summary["annotation"]) == {"tagger", "senter", "parser", "ner"}
    texts = [" ".join(words) for words, *_ in SENTENCES]
    # the teacher's tags, trees and entities are the student's (on two sentences)
    assert analyses(student, texts) == analyses(teacher, texts)


@pytest.mark.slow
def test_root_project_distills_your_pipeline(tmp_path):
    """`spacy project run distill . --vars.teacher ... --vars.text ...` from a copy of the
    root project, as the README says: the student config written, distilled, reported."""
    make_teacher(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text((ROOT / "project.yml").read_text(encoding="utf8"), encoding="utf8")
    variables = [f"--vars.teacher={tmp_path / 'teacher'}", f"--vars.text={tmp_path / 'text.txt'}"]
    overrides = (
        "--distillation.max_steps 20 --distillation.eval_frequency 10 --distillation.heldout 2 "
        "--distillation.report_min_words 500"
    )
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", "distill", str(project), *variables],
        capture_output=True, text=True, env={**os.environ, "SPACY_CONFIG_OVERRIDES": overrides},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    student = spacy.load(project / "training" / "own" / "model-best")
    assert student.pipe_names == ["tok2vec", "tagger", "senter", "parser", "ner"]
    rows = srsly.read_json(project / "training" / "own" / "report.json")
    assert [row["system"] for row in rows] == ["teacher", "student"] and "dep_las" in rows[1]
    # The held-out dev set is the teacher's annotation, reused as the report's reference
    # (the teacher does not run on it again): the teacher agrees with it fully.
    assert {key: rows[0][key] for key in ("tag_acc", "dep_las", "ents_f")} == {"tag_acc": 100.0, "dep_las": 100.0, "ents_f": 100.0}
