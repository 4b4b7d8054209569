"""The text classification study's configs and script on tiny data: KD+FT sources the
distilled DAN without rebuilding it, the baseline and teacher configs are valid, and the
data script converts a task."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train as train_cli
from spacy.tokens import DocBin

from .test_textcat import DATA, trained

REPO = Path(__file__).resolve().parent.parent


def write_corpus(nlp, path: Path, items=DATA) -> None:
    """Labelled texts as a .spacy corpus of exclusive pos/neg cats."""
    docs = []
    for text, label in items:
        doc = nlp.make_doc(text)
        doc.cats = {"pos": float(label == "pos"), "neg": float(label == "neg")}
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)


def test_fine_tuning_sources_the_distilled_dan(tmp_path):
    source = trained(steps=5)
    table = source.get_pipe("greenkd_textcat").model.attrs["ngrams"]
    source.to_disk(tmp_path / "kd")
    write_corpus(source, tmp_path / "train.spacy")
    overrides = {
        "paths.train": str(tmp_path / "train.spacy"),
        "paths.dev": str(tmp_path / "train.spacy"),
        "paths.source": str(tmp_path / "kd"),
        "training.max_steps": 30,
        "training.eval_frequency": 10,
        "training.optimizer.learn_rate": 0.01,
    }
    train_cli(REPO / "configs/students/textcat_dan_finetune.cfg", tmp_path / "ft", overrides=overrides)
    tuned = spacy.load(tmp_path / "ft" / "model-best")
    pipe = tuned.get_pipe("greenkd_textcat")
    # Same vocabulary (sourced, not rebuilt from the fine-tuning data), and it learned.
    assert pipe.model.attrs["ngrams"].ngrams == table.ngrams
    assert tuned("what a great film").cats["pos"] > 0.8


@pytest.mark.parametrize("config", ["baselines/textcat_bow.cfg", "teachers/textcat_trf.cfg", "paper/textcat_dan.cfg"])
def test_study_configs_are_valid(config, tmp_path, monkeypatch, capsys):
    """`spacy debug config` accepts the config, run in-process (a subprocess per config
    cost ~10 s of start-up each)."""
    from spacy.cli.debug_config import debug_config

    nlp = spacy.blank("en")
    write_corpus(nlp, tmp_path / "train.spacy")
    monkeypatch.chdir(REPO)
    corpus = str(tmp_path / "train.spacy")
    debug_config(REPO / "configs" / config, overrides={"paths.train": corpus, "paths.dev": corpus})
    assert "Config is valid" in capsys.readouterr().out


def test_paper_size_config_has_the_papers_shape():
    config = spacy.util.load_config(REPO / "configs/paper/textcat_dan.cfg", interpolate=False)
    model = config["components"]["greenkd_textcat"]["model"]
    assert (model["max_ngrams"], model["width"], model["hidden_width"]) == (1_000_000, 1000, 1000)
    assert config["distillation"]["batcher"]["size"] == 2048


def test_study_script_converts_a_task(tmp_path):
    data = tmp_path / "data"
    (data / "trec").mkdir(parents=True)
    lines = [f"{c}:x question number {i} ?" for i, c in enumerate(["NUM", "HUM", "LOC"] * 10)]
    for name in ("train_5500.label", "TREC_10.label"):
        (data / "trec" / name).write_text("\n".join(lines) + "\n", encoding="latin-1")
    work = tmp_path / "work"
    work.mkdir()
    # With a PATH whose `python` (if any) is not this interpreter: the script must run
    # spaCy's commands with the one it was started with.
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/textcat_data.py"), "trec", "convert", "--data", str(data)],
        capture_output=True, text=True, cwd=work, env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    train = list(DocBin().from_disk(work / "corpus/trec/train.spacy").get_docs(spacy.blank("en").vocab))
    heldout = list(DocBin().from_disk(work / "corpus/trec/heldout.spacy").get_docs(spacy.blank("en").vocab))
    assert len(train) + len(heldout) == 30 and len(heldout) == 3
    assert set(train[0].cats) == {"HUM", "LOC", "NUM"}
    bad = subprocess.run([sys.executable, str(REPO / "benchmarks/textcat_data.py"), "trec", "imdb", "convert"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'imdb'" in bad.stderr


def test_imdb_archive_converts_to_the_mirror_layout(tmp_path):
    """scripts/imdb_to_jsonl.py turns aclImdb_v1.tar.gz into our mirror's JSONL files
    (order: split, label, review number), which the SST-2 transfer stage reads."""
    import gzip
    import io
    import json
    import tarfile

    members = {
        "aclImdb/train/pos/10_9.txt": "Loved it.<br />Really.",
        "aclImdb/train/pos/2_8.txt": "Good.",
        "aclImdb/train/neg/0_3.txt": "Bad \u00e9t\u00e9.",
        "aclImdb/train/unsup/1_0.txt": "Second unsup.",
        "aclImdb/train/unsup/0_0.txt": "First unsup.",
        "aclImdb/test/neg/0_1.txt": "Awful.",
        "aclImdb/README": "not a review",
    }
    archive = tmp_path / "aclImdb_v1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode("utf8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out = tmp_path / "imdb"
    result = subprocess.run([sys.executable, str(REPO / "scripts/imdb_to_jsonl.py"), str(archive), str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

    def read(name):
        return [json.loads(line) for line in gzip.open(out / f"{name}.jsonl.gz", "rt", encoding="utf8")]

    assert [r["id"] for r in read("train")] == ["train/neg/0_3", "train/pos/2_8", "train/pos/10_9"]
    assert read("train")[0] == {"id": "train/neg/0_3", "label": "neg", "rating": 3, "text": "Bad \u00e9t\u00e9."}
    assert [(r["id"], r["label"]) for r in read("unsup")] == [("train/unsup/0_0", None), ("train/unsup/1_0", None)]
    assert [r["text"] for r in read("test")] == ["Awful."]
    empty = tmp_path / "empty.tar.gz"
    tarfile.open(empty, "w:gz").close()
    result = subprocess.run([sys.executable, str(REPO / "scripts/imdb_to_jsonl.py"), str(empty), str(out)],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "aclImdb_v1.tar.gz" in result.stderr


def test_tfidf_svm_is_fitted_then_scored_and_timed(tmp_path):
    """The classical anchor of the textcat bench: `fit` pickles it into a model
    directory (the runner times that as its training), `bench` scores and times it on
    the test texts and writes the measurement, its size on disk included."""
    import json

    nlp = spacy.blank("en")
    write_corpus(nlp, tmp_path / "train.spacy")
    # In this process (a script run starts a Python that imports spaCy and torch; the
    # launcher itself is tested with the runner).
    from benchmarks.tfidf_svm import main as tfidf_svm

    tfidf_svm(["fit", str(tmp_path / "train.spacy"), str(tmp_path / "svm")])
    out = tmp_path / "measurement.json"
    tfidf_svm(["bench", str(tmp_path / "svm"), str(tmp_path / "train.spacy"), "--output", str(out), "--repeats", "1", "--min-docs", "200"])
    row = json.loads(out.read_text())
    assert row["accuracy"] == 100.0  # a linear SVM separates its own training texts
    assert set(row["per_class"]) == {"pos", "neg"} and row["macro_f1"] == 100.0
    assert row["docs_per_second"] > 0 and row["timed_docs"] >= 200
    assert row["disk_bytes"] > 0 and row["fit_cpu_seconds"] >= 0 and row["train_docs"] == len(DATA)
    assert row["model"] == str(tmp_path / "svm") and row["data"] == str(tmp_path / "train.spacy")


def test_textcat_profile_splits_the_dan_and_bow_passes(tmp_path, monkeypatch):
    """benchmarks/textcat_profile.py (in-process): each pipeline's pass split into the
    tokenizer, its prediction (for the DAN: n-gram featurization and torch forward) and
    the rest, with the speed ratio and the ceiling the tokenizer puts on it."""
    import json
    import runpy

    dan = trained(steps=5)
    dan.to_disk(tmp_path / "dan")
    bow = spacy.blank("en")
    bow.add_pipe("textcat", config={"model": {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": True, "ngram_size": 1, "no_output_layer": False}})
    write_corpus(bow, tmp_path / "train.spacy")
    examples = [spacy.training.Example(bow.make_doc(d.text), d) for d in DocBin().from_disk(tmp_path / "train.spacy").get_docs(bow.vocab)]
    bow.initialize(lambda: examples)
    bow.to_disk(tmp_path / "bow")
    out = tmp_path / "profile.json"
    argv = ["textcat_profile.py", str(tmp_path / "dan"), str(tmp_path / "bow"), str(tmp_path / "train.spacy"),
            "--rounds", "1", "--min-docs", "50", "--batch-size", "16", "--output", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(REPO / "benchmarks" / "textcat_profile.py"), run_name="__main__")
    result = json.loads(out.read_text())
    assert set(result["seconds_best"]["dan"]) == {"pipe", "tokenizer", "predict", "featurize", "forward"}
    assert set(result["seconds_best"]["bow"]) == {"pipe", "tokenizer", "predict"}
    assert all(v > 0 for s in result["seconds_best"].values() for v in s.values())
    assert result["docs_per_pass"] >= 50 and result["words_per_pass"] > result["docs_per_pass"]
    assert result["ratio_dan_to_bow"] > 0 and result["ratio_ceiling_tokenizer_bound"] > 0
