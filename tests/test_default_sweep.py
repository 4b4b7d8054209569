"""The default sweeps: every candidate is a valid override of the
shipped config, and the sweep table chooses by the dev score it is told to."""
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.cli._util import parse_config_overrides
from spacy.util import load_config

from benchmarks import default_sweep, summarize_sweep

ROOT = Path(__file__).parent.parent


def overrides_of(command):
    """The --section.key value pairs after the config path of a `spacy train` command."""
    args = command[command.index("train") + 2 :]
    return {args[i][2:]: args[i + 1] for i in range(0, len(args), 2) if args[i] != "--output"}


@pytest.mark.parametrize("task", sorted(default_sweep.TASKS))
@pytest.mark.parametrize("name", sorted(default_sweep.CANDIDATES))
def test_every_candidate_builds_from_the_shipped_config(task, name):
    spec = default_sweep.TASKS[task]
    command = default_sweep.train_command(task, name, 10)
    overrides = {k: v for k, v in overrides_of(command).items() if not k.startswith(("paths.", "training.before_update"))}
    # As `spacy train` reads them: JSON where it parses, else the string.
    overrides = parse_config_overrides([arg for key, value in overrides.items() for arg in (f"--{key}", value)])
    config = load_config(ROOT / spec["config"], overrides=overrides)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    encoder = nlp.get_pipe(spec["encoder"].split(".")[1]).model
    rates = [node.attrs["word_dropout_rate"] for node in encoder.walk() if "word_dropout_rate" in node.attrs]
    expected = float(default_sweep.CANDIDATES[name]["{encoder}.word_dropout"])
    assert rates == ([expected] if expected else [])
    assert config["training"]["dropout"] == float(default_sweep.CANDIDATES[name]["training.dropout"])
    assert nlp.lang == ("ta" if task == "parser-ta" else "en")
    assert command[command.index("--output") + 1] == f"training/{task}/sweep/{name}"


def test_sweep_table_chooses_by_the_named_dev_score(tmp_path):
    for name, f1, steps in (("a", 0.81, 3000), ("b", 0.83, 2400)):
        (tmp_path / name / "model-best").mkdir(parents=True)
        srsly.write_json(tmp_path / name / "model-best" / "meta.json", {"performance": {"ents_f": f1, "ents_p": 0.99}})
        srsly.write_json(tmp_path / name / "run.json", {"train_steps": steps})
    rows = summarize_sweep.summarize(tmp_path, ["a", "b"], score="ents_f")
    assert [(r["heldout_score"], r["chosen"], r["train_steps"]) for r in rows] == [(81.0, False, 3000), (83.0, True, 2400)]
    with pytest.raises(SystemExit, match="spans_chunks_f"):
        summarize_sweep.summarize(tmp_path, ["a"], score="spans_chunks_f")


@pytest.mark.parametrize("name", sorted(default_sweep.CONFIG_CANDIDATES))
def test_config_candidates_build_with_their_own_encoder(name):
    entry = default_sweep.CONFIG_CANDIDATES[name]
    command = default_sweep.train_command("parser-ta", name, 10)
    assert command[command.index("train") + 1] == entry["config"]
    overrides = {k: v for k, v in overrides_of(command).items() if not k.startswith(("paths.", "training.before_update"))}
    # As `spacy train` reads them: JSON where it parses, else the string.
    overrides = parse_config_overrides([arg for key, value in overrides.items() for arg in (f"--{key}", value)])
    config = load_config(ROOT / entry["config"], overrides=overrides)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["tok2vec", "tagger", "greenkd_parser"] and nlp.lang == "ta"
    assert config["components"]["tok2vec"]["model"]["@architectures"] == "spacy.Tok2Vec.v2"
    assert config["training"]["dropout"] == float(entry["overrides"]["training.dropout"])
    with pytest.raises(SystemExit, match="parser-ta"):
        default_sweep.train_command("ner", name, 10)


def test_step_capped_sweep_trains_apart_and_stops_on_steps():
    command = default_sweep.train_command("parser-ta", "hybrid-drop3", 0, max_steps=1400)
    overrides = overrides_of(command)
    assert overrides["training.max_steps"] == "1400"
    assert overrides["training.before_update.minutes"] in ("0", "0.0")
    out = Path(command[command.index("--output") + 1])
    assert out == Path("training/parser-ta/sweep-1400steps/hybrid-drop3")
    # The budgeted sweep neither resumes into nor overwrites the capped one.
    assert default_sweep.sweep_dir("parser-ta") != default_sweep.sweep_dir("parser-ta", 1400)
    assert "training.max_steps" not in overrides_of(default_sweep.train_command("parser-ta", "hybrid-drop3", 10))


def test_seeded_sweep_trains_apart_with_its_seed():
    command = default_sweep.train_command("parser-ta", "lean-b500", 10, seed=2)
    overrides = overrides_of(command)
    assert overrides["system.seed"] == "2" and overrides["training.batcher.size.rate"] == "500"
    assert Path(command[command.index("--output") + 1]) == Path("training/parser-ta/sweep-seed2/lean-b500")
    # Seed 0 is the sweep as before: same directory, no seed override.
    assert "system.seed" not in overrides_of(default_sweep.train_command("parser-ta", "lean-b500", 10))
    assert default_sweep.sweep_dir("parser-ta", seed=0) == Path("training/parser-ta/sweep")


def test_sweep_results_keep_the_rows_of_candidates_not_trained_here(tmp_path):
    out = tmp_path / "sweep.json"
    srsly.write_json(out, [
        {"candidate": "base", "heldout_score": 58.1, "chosen": True},
        {"candidate": "lean-b500", "heldout_score": 1.0, "chosen": False},
    ])
    rows = default_sweep.merge_rows(out, [{"candidate": "lean-b500", "heldout_score": 53.5, "chosen": True}])
    assert rows == [
        {"candidate": "base", "heldout_score": 58.1, "chosen": False, "carried_over": True},
        {"candidate": "lean-b500", "heldout_score": 53.5, "chosen": True},
    ]
    assert default_sweep.merge_rows(tmp_path / "absent.json", rows) == rows


def test_sweep_table_records_an_eval_score_without_choosing_by_it(tmp_path):
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    nlp.add_pipe("textcat").add_label("pos")
    nlp.get_pipe("textcat").add_label("neg")
    nlp.initialize()
    for name, dev in (("a", 0.9), ("b", 0.8)):
        (tmp_path / name).mkdir()
        nlp.to_disk(tmp_path / name / "model-best")
        meta = srsly.read_json(tmp_path / name / "model-best" / "meta.json")
        srsly.write_json(tmp_path / name / "model-best" / "meta.json", dict(meta, performance={"cats_score": dev}))
    doc = nlp.make_doc("good")
    doc.cats = {"pos": 1.0, "neg": 0.0}
    DocBin(docs=[doc]).to_disk(tmp_path / "eval.spacy")
    out = tmp_path / "sweep.json"
    summarize_sweep.main([str(tmp_path), "a", "b", "-o", str(out), "--report-eval", str(tmp_path / "eval.spacy")])
    rows = srsly.read_json(out)
    assert [r["chosen"] for r in rows] == [True, False]
    assert all(0 <= r["eval_score"] <= 100 and r["eval_data"].endswith("eval.spacy") for r in rows)


def test_sweep_table_can_choose_by_a_heldout_file_instead_of_meta(tmp_path):
    """Pruned copies carry their source's meta.json score; --heldout re-scores every
    candidate, so the copy that fits the held-out docs is chosen whatever meta says."""
    from spacy.tokens import DocBin
    from spacy.training import Example

    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("textcat")
    for label in ("pos", "neg"):
        textcat.add_label(label)
    docs = []
    for text, label in (("good", "pos"), ("great", "pos"), ("bad", "neg"), ("awful", "neg")):
        doc = nlp.make_doc(text)
        doc.cats = {"pos": float(label == "pos"), "neg": float(label == "neg")}
        docs.append(doc)
    DocBin(docs=docs).to_disk(tmp_path / "heldout.spacy")
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    nlp.initialize(lambda: examples)
    (tmp_path / "untrained").mkdir()
    nlp.to_disk(tmp_path / "untrained" / "model-best")
    optimizer = nlp.create_optimizer()
    for _ in range(30):
        nlp.update(examples, sgd=optimizer)
    (tmp_path / "fitted").mkdir()
    nlp.to_disk(tmp_path / "fitted" / "model-best")
    for name, claimed in (("untrained", 0.99), ("fitted", 0.10)):
        meta_path = tmp_path / name / "model-best" / "meta.json"
        srsly.write_json(meta_path, dict(srsly.read_json(meta_path), performance={"cats_score": claimed}))
    by_meta = summarize_sweep.summarize(tmp_path, ["untrained", "fitted"])
    assert [r["chosen"] for r in by_meta] == [True, False]
    by_heldout = summarize_sweep.summarize(tmp_path, ["untrained", "fitted"], heldout=tmp_path / "heldout.spacy")
    assert [r["chosen"] for r in by_heldout] == [False, True]
    assert by_heldout[1]["heldout_score"] == 100.0
    assert by_heldout[1]["heldout_source"].endswith("heldout.spacy")


def test_a_candidate_whose_training_file_is_not_made_yet_says_how_to_make_it(monkeypatch, tmp_path):
    entry = default_sweep.CONFIG_CANDIDATES["lean-crop"]
    missing = {**entry, "overrides": {**entry["overrides"], "paths.train": str(tmp_path / "crop.spacy")}}
    monkeypatch.setitem(default_sweep.CONFIG_CANDIDATES, "lean-crop", missing)
    with pytest.raises(SystemExit, match="run.py tree_crop"):
        default_sweep.missing_input("lean-crop")
    (tmp_path / "crop.spacy").write_bytes(b"")
    default_sweep.missing_input("lean-crop")
    default_sweep.missing_input("hybrid-lean")  # trains on the task's own files
