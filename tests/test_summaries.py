"""The studies' target checks read the results rows and nothing else."""
import importlib.util
from pathlib import Path


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent.parent / f"benchmarks/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


summarize = _load("summarize_distill")


def test_checks_follow_the_rows():
    rows = [
        {"system": "full", "las": 88.0, "words_per_second": 1000},
        {"system": "d-20", "las": 87.0, "words_per_second": 2500},
        {"system": "base-20", "las": 87.5, "words_per_second": 2500},
        {"system": "teacher-trf", "las": 86.0, "words_per_second": 100},
        {"system": "student-trf-cnn", "las": 84.5, "words_per_second": 1600},
        {"system": "spacy-cnn", "las": 84.0, "words_per_second": 1000},
    ]
    checks = {c["target"]: c["met"] for c in summarize.check(rows)}
    assert checks["D-20 beats Base-20 (LAS)"] is False
    assert checks["D-20 within ~1.5 LAS of Full"] is True
    assert checks["D-20 at least 2.3x faster than Full"] is True
    assert checks["student-trf-cnn: >= 15x faster than the teacher and <= 2.0 LAS below it"] is True
    # Fastest student above 84.0 LAS: d-20 at 2,500 words/s = 2.5x spacy-cnn (base-20 is no student).
    assert checks["fastest student above spacy-cnn's LAS is > 1.5x its words/s"] is True


def test_labeller_checks_follow_the_rows():
    labeller = _load("summarize_labeller")
    rows = [
        {"system": "ldnet", "f1": 81.0, "words_per_second": 3000, "lm_flops_per_token": 1000},
        {"system": "ldnet-pruned", "f1": 80.6, "words_per_second": 9000, "lm_flops_per_token": 150},
        {"system": "spacy-cnn", "f1": 80.0, "words_per_second": 10000, "lm_flops_per_token": 0},
    ]
    checks = {c["target"]: c["met"] for c in labeller.check("ner", rows)}
    assert checks["LM pruned by >= 80% of its FLOPs with <= 0.5 F1 lost"] is True
    # Better F1, but slower than spaCy: not met.
    assert checks["LD-Net pruned beats spaCy's CPU NER F1 at equal or better words/s"] is False
    rows[1]["f1"] = 80.4  # 0.6 F1 lost
    rows[1]["words_per_second"] = 10000
    checks = {c["target"]: c["met"] for c in labeller.check("ner", rows)}
    assert checks["LM pruned by >= 80% of its FLOPs with <= 0.5 F1 lost"] is False
    assert checks["LD-Net pruned beats spaCy's CPU NER F1 at equal or better words/s"] is True
    assert all(c["met"] is None for c in labeller.check("chunk", rows))
