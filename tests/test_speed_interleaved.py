"""benchmarks/speed_interleaved.py: several pipelines timed in turns in one process."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from benchmarks import speed_interleaved

LAUNCHER = Path(__file__).parent.parent / "benchmarks" / "run.py"


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
    """As a user starts it: through the launcher, in a process of its own."""
    return subprocess.run([sys.executable, str(LAUNCHER), "speed_interleaved", *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.fixture
def in_dir(tmp_path, monkeypatch):
    """The remaining runs in this process (each process start imports spaCy, torch and
    greenkd: seconds on a busy machine); main() sets one thread, as the tests do."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_ratios_are_against_the_named_baseline_and_appended(in_dir):
    fast, slow = _pipelines(in_dir)
    out = in_dir / "speed.json"
    args = [fast, slow, "--names", "a", "b", "--baseline", "a", "--data", "data.spacy",
            "--pretokenized", "--rounds", "2", "--min-words", "95", "--output", str(out)]
    run = _run(in_dir, *args)
    assert run.returncode == 0, run.stderr
    speed_interleaved.main(args)
    rows = json.loads(out.read_text())
    assert len(rows) == 2  # appended, not replaced
    row = rows[-1]
    # 10 gold words, repeated whole to cover --min-words 95
    assert row["systems"] == ["a", "b"] and row["unit"] == "words/s" and row["words_per_pass"] == 100
    assert row["ratio_best"]["a"] == 1.0 and row["ratio_median"]["a"] == 1.0
    assert row["ratio_best"]["b"] > 0 and row["best"]["b"] > 0


def test_raw_text_mode_counts_docs_and_bad_names_are_refused(in_dir, capsys):
    fast, slow = _pipelines(in_dir)
    speed_interleaved.main([fast, slow, "--data", "data.spacy", "--rounds", "1", "--min-docs", "50"])
    out = capsys.readouterr().out
    assert "docs/s" in out and "(1.000x)" in out  # the last model is the baseline
    with pytest.raises(SystemExit, match="one per model"):
        speed_interleaved.main([fast, slow, "--data", "data.spacy", "--names", "only-one"])
    with pytest.raises(SystemExit, match="none of the names"):
        speed_interleaved.main([fast, slow, "--data", "data.spacy", "--baseline", "nope"])


def test_by_component_says_where_each_pipelines_time_goes(in_dir):
    fast, slow = _pipelines(in_dir)
    out = in_dir / "speed.json"
    speed_interleaved.main([fast, slow, "--names", "a", "b", "--data", "data.spacy", "--rounds", "2",
                            "--min-docs", "50", "--by-component", "--output", str(out)])
    row = json.loads(out.read_text())[-1]
    # Raw text: the tokenizer is timed too; a pipeline's parts are its own components.
    assert set(row["component_seconds_best"]["a"]) == {"tokenizer"}
    assert set(row["component_seconds_best"]["b"]) == {"tokenizer", "sentencizer"}
    assert abs(sum(row["component_share"]["b"].values()) - 1.0) < 0.01
    speed_interleaved.main([fast, slow, "--data", "data.spacy", "--rounds", "1", "--pretokenized", "--min-words", "20",
                            "--output", str(out)])
    assert "component_seconds_best" not in json.loads(out.read_text())[-1]  # only when asked
