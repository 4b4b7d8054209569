"""benchmarks/runner.py: a stage (bench: none) is trained for the systems that go on
from it, is not benched itself, and its cost is counted in their rows (the LD-Net
studies' LM and layer selection)."""
import srsly

from benchmarks.runner import main as runner

# A "training": writes {output}/model-best.
TRAIN = "python -c 'import os, sys; os.makedirs(sys.argv[1] + \"/model-best\", exist_ok=True)'"
# A "bench": writes its measurement to the --output the runner appends.
BENCH = "python -c 'import json, sys; json.dump({\"f1\": 80.0}, open(sys.argv[-1], \"w\"))' {model} {test}"


def test_a_stage_is_trained_first_not_benched_and_counted_in_its_successors_row(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    srsly.write_yaml(tmp_path / "spec.yml", {
        "results": "results/ner_{data}.json",
        "data": {"conll03": {"train": "train.spacy", "dev": "dev.spacy", "test": "test.spacy"}},
        "bench": BENCH,
        "systems": {
            "lm": {"run": TRAIN + " {output}", "budget": "none", "bench": "none"},
            "ldnet": {"run": TRAIN + " {output} {model:lm}", "budget": "none", "continues": "lm"},
        },
    })
    runner(["spec.yml", "train", "--systems", "ldnet"])
    assert (tmp_path / "training/conll03/lm/model-best").is_dir()
    runner(["spec.yml", "bench"])  # every system, the stage too
    out = " ".join(capsys.readouterr().out.split())
    assert "conll03/lm: a stage other systems go on from (bench: none), not benched" in out
    rows = srsly.read_json(tmp_path / "results/ner_conll03.json")
    assert [row["system"] for row in rows] == ["ldnet"]
    costs = [srsly.read_json(tmp_path / f"training/conll03/{name}/train_cost.json") for name in ("lm", "ldnet")]
    assert rows[0]["train_cpu_seconds"] == round(sum(cost["cpu_seconds"] for cost in costs), 1)
