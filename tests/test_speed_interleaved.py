"""benchmarks/speed_interleaved.py: several pipelines timed in turns in one process."""
import json
import subprocess
import sys
from pathlib import Path

import spacy
from spacy.tokens import DocBin

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "speed_interleaved.py"


def _pipelines(tmp_path):
    paths = []
    for name, pipes in (("fast", []), ("slow", ["sentencizer"])):
        nlp = spacy.blank("en")
        for pipe in pipes:
            nlp.add_pipe(pipe)
        nlp.to_disk(tmp_path / name)
        paths.append(str(tmp_path / name))
    nlp = spacy.blank("en")
    DocBin(docs=[nlp("John lives in Paris ."), nlp("Mary works in Berlin .")]).to_disk(tmp_path / "data.spacy")
    return paths


def _run(tmp_path, *args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_ratios_are_against_the_named_baseline_and_appended(tmp_path):
    fast, slow = _pipelines(tmp_path)
    out = tmp_path / "speed.json"
    for _ in range(2):
        run = _run(tmp_path, fast, slow, "--names", "a", "b", "--baseline", "a", "--data", "data.spacy",
                   "--pretokenized", "--rounds", "2", "--min-words", "95", "--output", str(out))
        assert run.returncode == 0, run.stderr
    rows = json.loads(out.read_text())
    assert len(rows) == 2  # appended, not replaced
    row = rows[-1]
    # 10 gold words, repeated whole to cover --min-words 95
    assert row["systems"] == ["a", "b"] and row["unit"] == "words/s" and row["words_per_pass"] == 100
    assert row["ratio_best"]["a"] == 1.0 and row["ratio_median"]["a"] == 1.0
    assert row["ratio_best"]["b"] > 0 and row["best"]["b"] > 0


def test_raw_text_mode_counts_docs_and_bad_names_are_refused(tmp_path):
    fast, slow = _pipelines(tmp_path)
    run = _run(tmp_path, fast, slow, "--data", "data.spacy", "--rounds", "1", "--min-docs", "50")
    assert run.returncode == 0, run.stderr
    assert "docs/s" in run.stdout and "(1.000x)" in run.stdout  # the last model is the baseline
    run = _run(tmp_path, fast, slow, "--data", "data.spacy", "--names", "only-one")
    assert run.returncode != 0 and "one per model" in run.stderr
    run = _run(tmp_path, fast, slow, "--data", "data.spacy", "--baseline", "nope")
    assert run.returncode != 0 and "none of the names" in run.stderr
