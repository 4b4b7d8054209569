"""The teacher pass as its own step: shards, manifest, resume, and the Ray backend."""
import importlib.util

import numpy
import pytest
import spacy
import srsly

from greenkd_spacy.distillation.annotate import pass_cost
from greenkd_spacy.distillation.worker import FAULT_ENV
from greenkd_spacy.distillation.loop import distill
from greenkd_spacy.distillation.cache import TeacherCache

from .test_distill import student_config


RAW = [
    "I like green eggs .",
    "She ate the pizza with anchovies .",
    "We like the pizza .",
    "She ate green eggs with the pizza .",
    "I ate .",
    "The eggs like anchovies .",
    "She likes green pizza .",
    "We ate the anchovies with eggs .",
    "I like the green anchovies .",
    "She ate .",
]


def raw_config(teacher_dir, tmp_path, cache="cache", **distillation):
    srsly.write_jsonl(tmp_path / "raw.jsonl", [{"text": t} for t in RAW])
    distillation = dict({"corpus": "corpora.raw", "shard_size": 3, "max_steps": 2}, **distillation)
    config = student_config(teacher_dir, tmp_path, **distillation)
    config["distillation"]["cache_dir"] = str(tmp_path / cache)
    config["corpora"]["raw"] = {"@readers": "spacy.JsonlCorpus.v1", "path": str(tmp_path / "raw.jsonl")}
    return config


def only_cache(root):
    (directory,) = [p for p in root.iterdir() if p.is_dir()]
    manifest = srsly.read_json(directory / "manifest.json")
    return TeacherCache(root, manifest["fingerprint"])


def assert_same_records(a, b):
    assert sorted(a) == sorted(b)
    for key in a:
        assert sorted(a[key]) == sorted(b[key])
        for field in a[key]:
            assert numpy.allclose(numpy.asarray(a[key][field], dtype="float32"), numpy.asarray(b[key][field], dtype="float32"), atol=1e-3)


def test_annotate_only_fills_the_cache_that_distill_then_reads(teacher_dir, tmp_path):
    teacher = str(teacher_dir / "model")
    _, summary = distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True)
    info = summary["annotation"]["greenkd_parser"]
    assert info["docs"] == len(RAW) and info["words_labelled"] == sum(len(t.split()) for t in RAW)
    assert "training" not in summary
    cache = only_cache(tmp_path / "cache")
    assert cache.complete and cache.manifest["n_shards"] == 4
    for index, entry in cache.manifest["shards"].items():
        assert entry["first_example"] == 3 * int(index)
        assert entry["examples"] == entry["rows"] == (1 if index == "3" else 3)
        assert entry["fingerprint"] == cache.fingerprint and len(entry["sha256"]) == 64
    _, trained = distill(teacher, raw_config(teacher_dir, tmp_path), tmp_path / "out")
    assert trained["annotation"]["greenkd_parser"]["reused"] is True
    assert trained["training"]["steps"] == 2


def test_rerun_labels_only_the_shards_the_manifest_does_not_vouch_for(teacher_dir, tmp_path):
    teacher = str(teacher_dir / "model")
    distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True)
    cache = only_cache(tmp_path / "cache")
    before = cache.records()
    (first_run,) = cache.manifest["runs"].values()
    assert first_run["shards"] == 4 and first_run["cpu_seconds"] > 0
    # A driver killed after a worker wrote shard 2 but before the manifest listed it,
    # and after a worker was killed half-way through writing shard 1.
    del cache.manifest["shards"]["2"]
    cache.manifest["complete"] = False
    cache._write_manifest()
    cache.shard_path(1).write_bytes(cache.shard_path(1).read_bytes()[:7])
    _, summary = distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True)
    info = summary["annotation"]["greenkd_parser"]
    assert info["docs_already_cached"] == 4  # shards 0 and 3
    assert info["words_labelled"] > 0
    # The pass costs this run plus the whole first run (it paid for the shards lost too).
    assert info["earlier_runs"]["runs"] == 1 and info["earlier_runs"]["shards_without_run_record"] == 0
    assert info["wall_seconds"] == pytest.approx(info["this_run"]["wall_seconds"] + first_run["wall_seconds"])
    assert info["cpu_seconds"] == pytest.approx(info["this_run"]["cpu_seconds"] + first_run["cpu_seconds"])
    assert info["cpu_seconds_complete"] is True
    cache = only_cache(tmp_path / "cache")
    assert cache.complete
    assert_same_records(before, cache.records())


def test_pass_cost_adds_earlier_runs_and_estimates_shards_without_cpu():
    labelled = [{"seconds": 10.0, "cpu_seconds": 15.0, "run": "now"}]
    runs = {"before": {"wall_seconds": 30.0, "cpu_seconds": 50.0, "shards": 3}, "now": {"wall_seconds": 1.0, "cpu_seconds": 1.0}}
    legacy = [{"seconds": 4.0, "cpu_seconds": 8.0}, {"seconds": 6.0}]
    cost = pass_cost(12.0, 18.0, runs, "now", legacy, labelled)
    assert cost["wall_seconds"] == pytest.approx(12.0 + 30.0 + 10.0)
    assert cost["cpu_seconds"] == pytest.approx(18.0 + 50.0 + 8.0 + 6.0 * 1.5)
    assert cost["earlier_runs"]["runs"] == 1 and cost["earlier_runs"]["cpu_estimated_shards"] == 1
    assert cost["earlier_runs"]["cpu_per_wall_used"] == pytest.approx(1.5)
    # Nothing labelled in this run to estimate from: the known CPU counts, flagged.
    cost = pass_cost(1.0, 1.0, runs, "now", legacy, [])
    assert cost["cpu_seconds_complete"] is False and cost["cpu_seconds"] == pytest.approx(1.0 + 50.0 + 8.0)
    assert pass_cost(3.0, 2.0, {"now": {}}, "now", [], labelled) == {"wall_seconds": 3.0, "cpu_seconds": 2.0}


def test_backend_errors_say_how_to_fix(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    with pytest.raises(ValueError, match="E036"):
        distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True, backend="spark")
    with pytest.raises(ValueError, match="E038"):
        distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True, backend="ray")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="needs the optional ray extra: pip install 'greenkd-spacy[ray]'",
)
def test_ray_backend_with_two_workers_matches_local_and_retries_a_killed_worker(teacher_dir, tmp_path, monkeypatch):
    teacher = str(teacher_dir / "model")
    distill(teacher, raw_config(teacher_dir, tmp_path, cache="local"), None, annotate_only=True)
    local = only_cache(tmp_path / "local")
    # The worker that gets shard 1 dies (os._exit) the first time; Ray restarts it and
    # retries the shard.
    marker = tmp_path / "killed-once"
    monkeypatch.setenv(FAULT_ENV, f"1:{marker}")
    _, summary = distill(
        teacher, raw_config(teacher_dir, tmp_path, cache="ray"), None, annotate_only=True, backend="ray", workers=2
    )
    assert marker.exists()
    info = summary["annotation"]["greenkd_parser"]
    assert info["backend"] == "ray" and info["workers"] == 2 and info["docs"] == len(RAW)
    remote = only_cache(tmp_path / "ray")
    assert remote.fingerprint == local.fingerprint and remote.complete
    assert len({entry["worker"] for entry in remote.manifest["shards"].values()}) >= 2
    for index, entry in local.manifest["shards"].items():
        other = remote.manifest["shards"][index]
        assert (entry["first_example"], entry["examples"], entry["rows"]) == (other["first_example"], other["examples"], other["rows"])
    assert_same_records(local.records(), remote.records())


def test_the_teacher_sees_a_shards_docs_shortest_first_and_every_doc_gets_its_own_record():
    """RecordMaker batches a shard by length (a transformer pads each batch to its
    longest doc); the records stay keyed by doc, so each holds that doc's own
    prediction whatever batch it was made in."""
    from spacy.language import Language
    from spacy.training import Example

    from greenkd_spacy.distillation.adapters import distillable
    from greenkd_spacy.distillation.targets import doc_key
    from greenkd_spacy.distillation.worker import RecordMaker

    seen = []

    @Language.component("greenkd_test_batch_recorder")
    def recorder(doc):
        seen.append([len(doc)])
        return doc

    teacher = spacy.blank("en")
    teacher.add_pipe("greenkd_test_batch_recorder")
    textcat = teacher.add_pipe("textcat")
    for label in ("pos", "neg"):
        textcat.add_label(label)
    teacher.initialize()
    student = spacy.blank("en")
    student_textcat = student.add_pipe("textcat")
    for label in ("pos", "neg"):
        student_textcat.add_label(label)
    texts = ["a b c d e", "a", "good film here", "bad one", "x y z w v u", "so so"]
    examples = [Example.from_dict(student.make_doc(text), {}) for text in texts]
    maker = RecordMaker(teacher, [(textcat, distillable(student_textcat, textcat))], top_k=0, batch_size=2)
    [records] = maker.records(examples)
    lengths = [n for [n] in seen]
    assert lengths == sorted(len(eg.predicted) for eg in examples)
    assert set(records) == {doc_key(eg.predicted) for eg in examples}
    for text in texts:
        alone = numpy.asarray(textcat.predict([teacher.make_doc(text)]))[0]
        numpy.testing.assert_allclose(records[doc_key(student.make_doc(text))]["probs"], alone, rtol=1e-5, atol=1e-6)


def test_a_cache_that_will_not_fit_stops_after_the_first_shard(teacher_dir, tmp_path, monkeypatch):
    """The rest of the corpus, at the first shard's bytes per text, against the disk's
    free space: a pass that cannot finish stops after one shard, which is kept."""
    import greenkd_spacy.distillation.annotate as annotate_module

    teacher = str(teacher_dir / "model")
    real = annotate_module.shutil.disk_usage

    def tiny_disk(path):
        usage = real(path)
        return usage._replace(free=10)

    monkeypatch.setattr(annotate_module.shutil, "disk_usage", tiny_disk)
    with pytest.raises(ValueError, match="GB free") as error:
        distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True)
    assert "7 texts still to label" in str(error.value) and "--distillation.cache_dir" in str(error.value)
    cache = only_cache(tmp_path / "cache")
    assert list(cache.manifest["shards"]) == ["0"] and not cache.complete
    # With the space there, the same command goes on from the shard written.
    monkeypatch.setattr(annotate_module.shutil, "disk_usage", real)
    _, summary = distill(teacher, raw_config(teacher_dir, tmp_path), None, annotate_only=True)
    assert summary["annotation"]["greenkd_parser"]["docs_already_cached"] == 3


@spacy.Language.component("test_one_sentence_per_text")
def one_sentence_per_text(doc):
    """What a parser trained on one gold sentence per doc does with a text of several:
    no token after the first starts a sentence."""
    for token in doc[1:]:
        token.is_sent_start = False
    return doc


def test_a_pass_over_texts_the_teacher_parses_as_one_tree_warns_once(tmp_path):
    """Texts of many sentences that the teacher parses as one tree each reach the
    student as such; the pass says so once, naming the shard and the fix, and every
    shard's manifest entry records the teacher's sentences."""
    from spacy.tokens import Doc, DocBin
    from spacy.training import Example
    from thinc.api import fix_random_seed

    from .test_spacy_adapters import fit, spacy_config

    fix_random_seed(0)
    words, heads, deps = ["She", "ate", "pizza", "."], [1, 1, 1, 1], ["nsubj", "ROOT", "obj", "punct"]
    teacher = spacy.blank("en")
    teacher.add_pipe("parser", config={"min_action_freq": 1})
    example = Example(Doc(teacher.vocab, words=words), Doc(teacher.vocab, words=words, heads=heads, deps=deps))
    fit(teacher, [example], 20)
    teacher.add_pipe("test_one_sentence_per_text", before="parser")
    DocBin(docs=[example.reference]).to_disk(tmp_path / "train.spacy")
    article = " ".join(["She ate pizza ."] * 30)  # 120 tokens: 30 sentences, one tree
    lines = ["She ate pizza ."] * 3 + [article] + ["She ate pizza ."] * 2
    (tmp_path / "raw.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    config = spacy_config(tmp_path, "parser", max_steps=1, raw_text=True)
    config["distillation"]["shard_size"] = 3
    with pytest.warns(UserWarning, match=r"W008") as record:
        distill(teacher, config, None, annotate_only=True)
    said = [str(w.message) for w in record if "W008" in str(w.message)]
    assert len(said) == 1 and "shard 1 " in said[0] and "texts 3-5" in said[0] and "greenkd-split-text" in said[0]
    shards = only_cache(tmp_path / "cache").manifest["shards"]
    assert shards["0"]["sentences"] == {"sentences": 3, "words": 12, "long_words": 0, "longest": 4}
    assert shards["1"]["sentences"]["longest"] == 120 and shards["1"]["sentences"]["long_words"] == 120
    # The counts are of the teacher's own parse: with nothing before its parser setting
    # boundaries, the pass still records the sentences the parser made.
    teacher.remove_pipe("test_one_sentence_per_text")
    config["distillation"]["cache_dir"] = str(tmp_path / "cache2")
    distill(teacher, config, None, annotate_only=True)
    shards = only_cache(tmp_path / "cache2").manifest["shards"]
    assert shards["0"]["sentences"]["words"] == 12 and shards["1"]["sentences"]["words"] == 128
