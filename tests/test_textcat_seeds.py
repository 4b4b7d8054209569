"""benchmarks/textcat_seeds.py: two text classifiers judged over several seeds."""
import subprocess
import sys
from pathlib import Path

import numpy
import spacy
import srsly
from spacy.tokens import DocBin

from benchmarks import textcat_seeds

SCRIPT = [sys.executable, str(Path(__file__).parent.parent / "benchmarks" / "run.py"), "textcat_seeds"]

TEXTS = [("a great film", "pos"), ("wonderful , i loved it", "pos"), ("awful and dull", "neg"), ("i hated it", "neg")]


def test_bootstrap_of_equal_and_of_better_systems():
    rng = numpy.random.default_rng(0)
    a = (rng.random((3, 200)) < 0.7).astype("float64")
    same = textcat_seeds.paired_bootstrap(a, a.copy(), samples=500, seed=0)
    assert same["b_minus_a"] == 0.0 and same["interval_95"] == [0.0, 0.0] and same["share_a_at_least_b"] == 1.0
    better = a.copy()
    better[:, :40] = 1.0  # B right wherever A was, and on 40 docs more for some seeds
    result = textcat_seeds.paired_bootstrap(a, better, samples=500, seed=0)
    gain = 100 * (better.mean() - a.mean())
    assert abs(result["b_minus_a"] - gain) < 0.01 and result["interval_95"][0] > 0
    assert result["share_a_at_least_b"] == 0.0
    # Seed counts may differ: B's mean over its 2 seeds against A's over 3.
    two = textcat_seeds.paired_bootstrap(a, better[:2], samples=200, seed=0)
    assert abs(two["b_minus_a"] - 100 * (better[:2].mean() - a.mean())) < 0.01


def _pipeline(path: Path) -> Path:
    """An untrained spaCy textcat pipeline, saved as a run's model-best with its cost."""
    path.mkdir(parents=True)
    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("textcat")
    textcat.add_label("pos")
    textcat.add_label("neg")
    nlp.initialize()
    model = path / "model-best"
    nlp.to_disk(model)
    srsly.write_json(path / "train_cost.json", {"wall_seconds": 1.0, "cpu_seconds": 1.5, "max_rss_mb": 100.0, "train_steps": 10})
    return model


def test_scores_each_seed_and_reads_costs(tmp_path):
    nlp = spacy.blank("en")
    bin_ = DocBin()
    for text, label in TEXTS:
        doc = nlp.make_doc(text)
        doc.cats = {"pos": float(label == "pos"), "neg": float(label == "neg")}
        bin_.add(doc)
    bin_.to_disk(tmp_path / "eval.spacy")
    a = [_pipeline(tmp_path / f"a{i}") for i in range(2)]
    b = [_pipeline(tmp_path / f"b{i}") for i in range(2)]
    out = tmp_path / "out.json"
    cmd = [*SCRIPT, "--system", "A", *map(str, a), "--system", "B", *map(str, b),
           "--data", f"eval={tmp_path / 'eval.spacy'}", "--data-if-present", f"test={tmp_path / 'none.spacy'}",
           "--samples", "100", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    result = srsly.read_json(out)
    assert [c["set"] for c in result["comparisons"]] == ["eval"]  # the missing test file is skipped
    for name in ("A", "B"):
        system = result["systems"][name]
        assert len(system["runs"]) == 2 and system["train_cpu_seconds"]["mean"] == 1.5
        assert system["runs"][0]["train_steps"] == 10 and system["runs"][0]["train_wall_seconds"] == 1.0
        # 4 docs: every accuracy is a multiple of 25
        accuracies = [run["eval"]["accuracy"] for run in system["runs"]]
        assert all(acc in (0.0, 25.0, 50.0, 75.0, 100.0) for acc in accuracies)
    comparison = result["comparisons"][0]
    assert (comparison["a"], comparison["b"]) == ("A", "B")
    mean_a = result["systems"]["A"]["eval"]["accuracy"]["mean"]
    mean_b = result["systems"]["B"]["eval"]["accuracy"]["mean"]
    assert abs(comparison["b_minus_a"] - (mean_b - mean_a)) < 0.01


def test_refuses_a_missing_model(tmp_path):
    cmd = [*SCRIPT, "--system", "A", str(tmp_path / "nope"), "--system", "B", str(tmp_path / "nope"),
           "--data", f"eval={textcat_seeds.__file__}", "-o", str(tmp_path / "o.json")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode != 0 and "train it first" in done.stderr
