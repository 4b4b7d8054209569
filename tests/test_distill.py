"""Distillation: the loss, the contract, the cache and the loop."""
import copy
import os
import subprocess
import sys

import numpy
import pytest
import spacy
import srsly
from thinc.api import Config

from greenkd_spacy.models.sizes import (
    FULL_PARSER_WIDTHS,
    parser_parameters,
    scaled_parser_widths,
)
from greenkd_spacy.distillation.contract import DistillSettings, binary_kl_divergence, kl_divergence
from greenkd_spacy.distillation.loop import distill
from greenkd_spacy.distillation.cache import TeacherCache
from greenkd_spacy.util import count_parameters

from .util import SENTENCES, SMALL_PARSER, make_examples

STUDENT_CONFIG = """
[paths]
train = null
dev = null

[nlp]
lang = "en"
pipeline = ["greenkd_parser"]

[components]

[components.greenkd_parser]
factory = "greenkd_parser"

[components.greenkd_parser.model]
@architectures = "greenkd.BiaffineParser.v1"
arc_mlp_size = 12
label_mlp_size = 6
mlp_dropout = 0.0

[components.greenkd_parser.model.tok2vec]
@architectures = "greenkd.BiLSTMEncoder.v1"
word_width = 12
word_rows = 500
affix_width = 6
affix_rows = 100
pos_width = 6
hidden_width = 12
depth = 1
dropout = 0.0

[corpora]

[corpora.train]
@readers = "greenkd.Corpus.v1"
path = ${paths.train}
gold_pos = true

[corpora.dev]
@readers = "greenkd.Corpus.v1"
path = ${paths.dev}
gold_pos = true

[training]
dropout = 0.0

[distillation]
corpus = "corpora.train"
max_steps = 150
eval_frequency = 50
top_k = 4
shard_size = 1
gold_weight = 0.0
temperature = 1.0
cache_dir = null

[distillation.batcher]
@batchers = "spacy.batch_by_sequence.v1"
size = 2

[distillation.optimizer]
@optimizers = "Adam.v1"
learn_rate = 0.01
"""


def test_kl_is_zero_for_identical_distributions():
    rng = numpy.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 5)).astype("float32")
    logprobs = logits - numpy.log(numpy.exp(logits).sum(-1, keepdims=True))
    mask = numpy.ones((2, 3), dtype=bool)
    loss, grad = kl_divergence(logprobs, logits, mask, temperature=2.0)
    assert loss == pytest.approx(0.0, abs=1e-6)
    assert numpy.abs(grad).max() < 1e-6


@pytest.mark.parametrize("temperature", [1.0, 3.0])
def test_kl_gradient_matches_finite_differences(temperature):
    rng = numpy.random.default_rng(1)
    teacher = rng.normal(size=(1, 2, 4))
    teacher = teacher - numpy.log(numpy.exp(teacher).sum(-1, keepdims=True))
    student = rng.normal(size=(1, 2, 4))
    mask = numpy.array([[True, False]])
    _, grad = kl_divergence(teacher, student, mask, temperature)
    eps = 1e-6
    numeric = numpy.zeros_like(student)
    for idx in numpy.ndindex(student.shape):
        plus, minus = student.copy(), student.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric[idx] = (
            kl_divergence(teacher, plus, mask, temperature)[0]
            - kl_divergence(teacher, minus, mask, temperature)[0]
        ) / (2 * eps)
    assert numpy.allclose(grad, numeric, atol=1e-5)
    assert (grad[0, 1] == 0).all()


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_binary_kl_is_the_two_class_kl(temperature):
    """Multi-label classes: per label the two-class KL with logits [z, 0], summed over
    labels; zero at the teacher, and its gradient matches finite differences."""
    rng = numpy.random.default_rng(2)
    probs = rng.uniform(0.05, 0.95, size=(3, 4))
    logits = rng.normal(size=(3, 4))
    loss, grad = binary_kl_divergence(probs, logits, temperature)
    two_class = [
        kl_divergence(
            numpy.log([[probs[i, j], 1 - probs[i, j]]]), numpy.array([[logits[i, j], 0.0]]), numpy.ones(1, dtype=bool), temperature
        )[0]
        for i in range(3)
        for j in range(4)
    ]
    assert loss == pytest.approx(sum(two_class) / 3)
    at_teacher, zero = binary_kl_divergence(probs, numpy.log(probs) - numpy.log1p(-probs), temperature)
    assert at_teacher == pytest.approx(0.0, abs=1e-9) and numpy.abs(zero).max() < 1e-9
    eps = 1e-6
    for idx in numpy.ndindex(logits.shape):
        plus, minus = logits.copy(), logits.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric = (binary_kl_divergence(probs, plus, temperature)[0] - binary_kl_divergence(probs, minus, temperature)[0]) / (2 * eps)
        assert numeric == pytest.approx(grad[idx], abs=1e-6)


def test_torch_kl_is_the_contract_kl():
    """The labeller's KL node in a torch graph: kl_divergence's value, and its gradient
    with respect to the student, none to the teacher."""
    import torch

    from greenkd_spacy.distillation.contract_torch import kl_divergence_torch

    rng = numpy.random.default_rng(3)
    teacher = rng.normal(size=(2, 3, 4))
    teacher = teacher - numpy.log(numpy.exp(teacher).sum(-1, keepdims=True))
    student = rng.normal(size=(2, 3, 4))
    mask = numpy.array([[True, True, False], [True, False, False]])
    loss, grad = kl_divergence(teacher, student, mask, 2.0)
    student_t = torch.tensor(student, requires_grad=True)
    loss_t = kl_divergence_torch(torch.tensor(teacher), student_t, torch.tensor(mask), 2.0)
    (3.0 * loss_t).backward()
    assert loss_t.item() == pytest.approx(loss)
    assert numpy.allclose(student_t.grad.numpy(), 3.0 * grad)


def test_scaled_widths_hit_the_fraction_and_match_the_built_model():
    n_labels = 7
    for fraction in (0.2, 0.4, 0.6, 0.8):
        widths = scaled_parser_widths(fraction, n_labels)
        ratio = parser_parameters(widths, n_labels) / parser_parameters(FULL_PARSER_WIDTHS, n_labels)
        assert abs(ratio - fraction) < 0.01
    widths = scaled_parser_widths(0.2, n_labels)
    nlp = spacy.blank("en")
    model = {
        "@architectures": "greenkd.BiaffineParser.v1",
        "arc_mlp_size": widths["arc_mlp_size"],
        "label_mlp_size": widths["label_mlp_size"],
        "tok2vec": {
            "@architectures": "greenkd.BiLSTMEncoder.v1",
            "word_width": widths["word_width"],
            "affix_width": widths["affix_width"],
            "pos_width": widths["pos_width"],
            "hidden_width": widths["hidden_width"],
            "depth": 3,  # the paper's; the component's own default is the CPU-first 2
        },
    }
    parser = nlp.add_pipe("greenkd_parser", config={"model": model})
    for label in ["a", "b", "c", "d", "e", "f", "ROOT"]:
        parser.add_label(label)
    examples = make_examples(nlp)
    parser.initialize(lambda: examples, nlp=nlp, labels=["a", "b", "c", "d", "e", "f", "ROOT"])
    assert count_parameters(parser.model) == parser_parameters(widths, n_labels)


def student_config(teacher_dir, tmp_path, **distillation):
    config = Config().from_str(STUDENT_CONFIG, interpolate=False)
    config["paths"]["train"] = str(teacher_dir / "train.spacy")
    config["paths"]["dev"] = str(teacher_dir / "train.spacy")
    config["distillation"]["cache_dir"] = str(tmp_path / "cache")
    config["distillation"].update(distillation)
    return config


def predictions(nlp):
    out = []
    for words, _, _, pos in SENTENCES:
        doc = nlp(spacy.tokens.Doc(nlp.vocab, words=words, pos=pos))
        out.append(([t.head.i for t in doc], [t.dep_ for t in doc]))
    return out


def test_student_learns_the_teacher_from_kl_alone(teacher_dir, tmp_path):
    import io

    teacher = spacy.load(teacher_dir / "model")
    log = io.StringIO()
    student, summary = distill(teacher, student_config(teacher_dir, tmp_path), tmp_path / "out", stdout=log)
    # Logged as spacy train logs (a loss column per component, the score columns), and
    # the saved pipelines carry spaCy's performance block.
    header = log.getvalue().splitlines()[0]
    assert "LOSS GREEN" in header.upper() and "DEP_LAS" in header.upper() and "SCORE" in header.upper()
    meta = srsly.read_json(tmp_path / "out" / "model-best" / "meta.json")
    assert set(meta["performance"]) >= {"dep_uas", "dep_las", "greenkd_parser_loss"}
    assert predictions(student) == predictions(teacher)
    assert student.get_pipe("greenkd_parser").labels == teacher.get_pipe("greenkd_parser").labels
    assert (tmp_path / "out" / "model-best").exists() and (tmp_path / "out" / "model-last").exists()
    assert predictions(spacy.load(tmp_path / "out" / "model-last")) == predictions(student)
    assert summary["annotation"]["greenkd_parser"]["docs"] == 2
    # A second student reuses the cache instead of running the teacher again.
    _, again = distill(teacher, student_config(teacher_dir, tmp_path, max_steps=2), tmp_path / "out2")
    assert again["annotation"]["greenkd_parser"]["reused"] is True


def test_run_settings_reach_the_student_and_stay_out_of_its_cfg(teacher_dir, tmp_path, monkeypatch):
    """[distillation]'s temperature and gold weight reach the student component as its
    DistillSettings for the run (its loss reads them), and no distill_* key is in any
    pipe's cfg, the pipeline's config, nor the saved student's cfg and config files:
    a loaded student has the defaults."""
    from greenkd_spacy.pipeline.parser import BiaffineParser

    seen = []
    loss = BiaffineParser.get_teacher_student_loss

    def recording_loss(self, teacher_scores, student_scores):
        seen.append((self.distill_settings, self.temperature))
        return loss(self, teacher_scores, student_scores)

    monkeypatch.setattr(BiaffineParser, "get_teacher_student_loss", recording_loss)
    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=4, eval_frequency=2, temperature=2.0, gold_weight=0.5)
    student, _ = distill(teacher, config, tmp_path / "out")
    expected = DistillSettings(temperature=2.0, gold_weight=0.5, targets="soft")
    assert seen and set(seen) == {(expected, 2.0)}
    assert student.get_pipe("greenkd_parser").distill_settings == expected
    assert not [key for _, proc in student.pipeline for key in getattr(proc, "cfg", {}) if key.startswith("distill_")]
    assert "distill_" not in student.config.to_str()
    for saved in ("model-best", "model-last"):
        files = [path for path in (tmp_path / "out" / saved).rglob("*") if path.name in ("cfg", "config.cfg")]
        assert len(files) >= 2 and not [path for path in files if "distill_" in path.read_text(encoding="utf8")]
        loaded = spacy.load(tmp_path / "out" / saved).get_pipe("greenkd_parser")
        assert loaded.distill_settings == DistillSettings() and loaded.temperature == 1.0


def test_truncated_cache_shard_is_rebuilt(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=2)
    distill(teacher, config, tmp_path / "a")
    (cache_dir,) = [p for p in (tmp_path / "cache").iterdir() if p.is_dir()]
    shard = cache_dir / "shard-00000.msgpack"
    shard.write_bytes(shard.read_bytes()[:10])
    manifest = srsly.read_json(cache_dir / "manifest.json")
    cache = TeacherCache(tmp_path / "cache", manifest["fingerprint"])
    assert not cache.has_shard(0) and not cache.complete
    _, summary = distill(teacher, config, tmp_path / "b")
    assert "reused" not in summary["annotation"]["greenkd_parser"]
    assert TeacherCache(tmp_path / "cache", manifest["fingerprint"]).complete


def test_a_seed_gives_one_student_whether_the_teacher_pass_ran_or_was_cached(teacher_dir, tmp_path, monkeypatch):
    import random

    from greenkd_spacy.distillation import loop

    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=20, eval_frequency=10)
    real_pass = loop.teacher_pass

    def drawing_pass(*args, **kwargs):
        # A teacher whose pass draws random numbers (dropout, sampling, shuffled shards).
        random.random(), numpy.random.random()
        return real_pass(*args, **kwargs)

    monkeypatch.setattr(loop, "teacher_pass", drawing_pass)
    fresh, first = distill(teacher, config, tmp_path / "fresh")
    monkeypatch.setattr(loop, "teacher_pass", real_pass)
    cached, second = distill(teacher, config, tmp_path / "cached")
    assert second["annotation"]["greenkd_parser"]["reused"] and "reused" not in first["annotation"]["greenkd_parser"]
    assert fresh.get_pipe("greenkd_parser").model.to_bytes() == cached.get_pipe("greenkd_parser").model.to_bytes()


def test_resume_continues_from_model_last(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    distill(teacher, student_config(teacher_dir, tmp_path, max_steps=50), tmp_path / "out")
    state = srsly.read_json(tmp_path / "out" / "distill_state.json")
    assert state["step"] == 50
    first_cost = state["wall_seconds"], state["cpu_seconds"]
    assert min(first_cost) > 0
    _, summary = distill(teacher, student_config(teacher_dir, tmp_path, max_steps=150), tmp_path / "out")
    state = srsly.read_json(tmp_path / "out" / "distill_state.json")
    assert state["step"] == 150
    assert [row["step"] for row in state["history"]] == [50, 100, 150]
    # The dev score over training time: each row has the seconds of training so far.
    assert 0 < state["history"][0]["wall_seconds"] <= state["history"][1]["wall_seconds"] <= state["history"][2]["wall_seconds"]
    # The resumed run's cost is both segments': the model cost that much to train.
    training = summary["training"]
    assert training["resumed_from_step"] == 50 and training["steps"] == 150
    assert training["wall_seconds"] == pytest.approx(first_cost[0] + training["segment_wall_seconds"])
    assert training["cpu_seconds"] == pytest.approx(first_cost[1] + training["segment_cpu_seconds"])
    assert training["cost_carried"] is True
    # A state saved before runs kept their cost: the resumed summary says it is partial.
    last_state = tmp_path / "out" / "model-last" / "distill_state.json"
    old_state = srsly.read_json(last_state)
    del old_state["wall_seconds"], old_state["cpu_seconds"]
    srsly.write_json(last_state, old_state)
    _, summary = distill(teacher, student_config(teacher_dir, tmp_path, max_steps=200), tmp_path / "out")
    assert summary["training"]["cost_carried"] is False
    assert summary["training"]["wall_seconds"] == summary["training"]["segment_wall_seconds"]


def test_a_resumed_budgeted_run_has_what_is_left_of_its_budget(teacher_dir, tmp_path):
    """The training time of the segments a run resumes from counts against its budget:
    a resume after the budget was spent stops at its first update, where a new budget
    for every segment would train on."""
    teacher = spacy.load(teacher_dir / "model")
    distill(teacher, student_config(teacher_dir, tmp_path, max_steps=50), tmp_path / "out")
    spent = srsly.read_json(tmp_path / "out" / "distill_state.json")["wall_seconds"]
    config = student_config(teacher_dir, tmp_path, max_steps=1000)
    config["training"]["before_update"] = {"@callbacks": "greenkd.train_budget.v1", "seconds": spent * 0.9}
    _, summary = distill(teacher, config, tmp_path / "out")
    assert summary["training"]["resumed_from_step"] == 50
    assert summary["training"]["stopped_by_budget"] is True and summary["training"]["steps"] <= 51


def test_the_last_epoch_ending_between_evaluations_is_saved(teacher_dir, tmp_path):
    """max_epochs ends the run after a step that is not an evaluation step: that step
    is scored and saved (as spaCy saves model-last at any end), not lost."""
    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_epochs=7, max_steps=0, eval_frequency=5, patience=0)
    _, summary = distill(teacher, config, tmp_path / "out")
    state = srsly.read_json(tmp_path / "out" / "model-last" / "distill_state.json")
    steps = summary["training"]["steps"]
    assert steps % 5 != 0, "the corpus should end between two evaluations"
    assert state["step"] == steps and state["history"][-1]["step"] == steps


def test_label_mismatch_is_an_error_before_training(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    student_labels = ["nsubj", "ROOT", "odd"]
    from greenkd_spacy.distillation.contract import DistillableMixin

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("greenkd_parser", config={"model": copy.deepcopy(SMALL_PARSER)})
    parser.initialize(lambda: make_examples(nlp), nlp=nlp, labels=student_labels)
    with pytest.raises(ValueError, match="E011"):
        parser.check_labels(teacher.get_pipe("greenkd_parser"))
    assert isinstance(parser, DistillableMixin)


def test_missing_teacher_and_component_errors(teacher_dir, tmp_path):
    with pytest.raises(ValueError, match="E014"):
        distill(tmp_path / "no-such-teacher", student_config(teacher_dir, tmp_path))
    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, student_to_teacher={"greenkd_parser": "parser"})
    with pytest.raises(ValueError, match="E015"):
        distill(teacher, config)
    config = student_config(teacher_dir, tmp_path)
    del config["distillation"]
    with pytest.raises(ValueError, match="E016"):
        distill(teacher, config)


def test_a_budgeted_distillation_anneals_with_budget_decay(teacher_dir, tmp_path, monkeypatch):
    """greenkd.budget_decay.v1 in [distillation.optimizer] follows the budget of
    [training.before_update] in `spacy distill`: the share spent grows step by step to
    the end, where the budget stops the run, and no step warns of a missing budget."""
    import warnings

    from greenkd_spacy.training import schedules

    spent = []
    original = schedules.budget_progress

    def recorded():
        progress = original()
        spent.append(progress)
        return progress

    monkeypatch.setattr(schedules, "budget_progress", recorded)
    config = student_config(teacher_dir, tmp_path, max_steps=0, eval_frequency=1000000)
    config["distillation"]["optimizer"]["learn_rate"] = {"@schedules": "greenkd.budget_decay.v1", "base_rate": 0.01}
    config["training"]["before_update"] = {"@callbacks": "greenkd.train_budget.v1", "seconds": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        _, summary = distill(spacy.load(teacher_dir / "model"), config, tmp_path / "out")
    assert summary["training"]["stopped_by_budget"] is True and summary["training"]["steps"] > 10
    during = spent[1:]  # the first value is read when the optimizer is built
    assert None not in during and during == sorted(during) and during[-1] > 0.9


def test_unlabeled_text_distils_with_kl_only(teacher_dir, tmp_path):
    texts = [{"text": "I like green eggs ."}, {"text": "She ate the pizza with anchovies ."}]
    srsly.write_jsonl(tmp_path / "raw.jsonl", texts)
    config = student_config(teacher_dir, tmp_path, corpus="corpora.raw", gold_weight=1.0, max_steps=60)
    config["corpora"]["raw"] = {"@readers": "spacy.JsonlCorpus.v1", "path": str(tmp_path / "raw.jsonl")}
    teacher = spacy.load(teacher_dir / "model")
    texts = ("I like green eggs .", "She ate the pizza with anchovies .")
    before = {text: [(t.head.i, t.dep_) for t in teacher(text)] for text in texts}
    student, summary = distill(teacher, config, tmp_path / "out")
    assert summary["annotation"]["greenkd_parser"]["docs"] == 2
    assert summary["training"]["steps"] == 60
    for text in texts:
        # The run leaves the teacher as it was ...
        assert [(t.head.i, t.dep_) for t in teacher(text)] == before[text], "distill changed the teacher"
        # ... and, with no gold anywhere, what the student knows of these texts came from it.
        assert [(t.head.i, t.dep_) for t in student(text)] == before[text], "the student did not learn the teacher's tree"


def test_distill_corpus_mixes_gold_sentences_and_raw_text(teacher_dir, tmp_path):
    """Parser distillation on D_train + unlabeled text: the labeled part keeps its gold
    tokens (so gold heads line up), the raw lines are parsed as they are (KL only)."""
    from greenkd_spacy.data.text_corpus import create_distill_reader

    nlp = spacy.blank("en")
    gold = spacy.tokens.Doc(nlp.vocab, words=["Don't", "go", "!"], spaces=[True, False, False], heads=[1, 1, 1], deps=["aux", "root", "punct"])
    spacy.tokens.DocBin(docs=[gold]).to_disk(tmp_path / "gold.spacy")
    (tmp_path / "raw.txt").write_text("I like green eggs .\nShe ate the pizza .\n", encoding="utf8")
    reader = create_distill_reader(tmp_path / "gold.spacy", tmp_path / "raw.txt", gold_tokens=True, gold_sents=True)
    examples = list(reader(nlp))
    assert [t.text for t in examples[0].predicted] == ["Don't", "go", "!"]  # the gold tokens
    assert [eg.reference.text for eg in examples[1:]] == ["I like green eggs .", "She ate the pizza ."]
    plain = list(create_distill_reader(tmp_path / "gold.spacy")(nlp))
    assert [t.text for t in plain[0].predicted] == ["Do", "n't", "go", "!"]  # the tokenizer's own split

    config = student_config(teacher_dir, tmp_path, corpus="corpora.distill", max_steps=3)
    config["corpora"]["distill"] = {
        "@readers": "greenkd.DistillCorpus.v1", "train": str(teacher_dir / "train.spacy"),
        "text": str(tmp_path / "raw.txt"), "gold_tokens": True, "gold_sents": True,
    }
    _, summary = distill(spacy.load(teacher_dir / "model"), config, tmp_path / "out")
    assert summary["annotation"]["greenkd_parser"]["docs"] == 2 + 2
    assert summary["training"]["steps"] == 3


def test_a_limited_text_reads_the_cached_pass_of_the_whole_text(teacher_dir, tmp_path, monkeypatch):
    """A transfer-size curve's smaller points read the pass paid for the whole text: a
    run over its first lines runs no teacher, finds every record it needs, and is
    charged the share of the pass its words are; a limit that cuts a joined doc short
    is not a prefix, and runs its own pass."""
    from greenkd_spacy.distillation import teacher_pass

    lines = ["I like green eggs .", "She ate the pizza with anchovies .", "Eggs ate pizza .", "I ate ."]
    (tmp_path / "raw.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    teacher = spacy.load(teacher_dir / "model")

    def config_for(limit, texts_per_doc=1):
        config = student_config(teacher_dir, tmp_path, corpus="corpora.distill", max_steps=4, eval_frequency=2)
        config["corpora"]["distill"] = {
            "@readers": "greenkd.DistillCorpus.v1", "train": str(teacher_dir / "train.spacy"),
            "text": str(tmp_path / "raw.txt"), "text_limit": limit, "texts_per_doc": texts_per_doc,
        }
        return config

    _, whole = distill(teacher, config_for(0), tmp_path / "whole")
    paid = whole["annotation"]["greenkd_parser"]
    n_train = paid["docs"] - len(lines)
    labelled = []
    real_annotate = teacher_pass.annotate
    monkeypatch.setattr(teacher_pass, "annotate", lambda *a, **k: labelled.append(1) or real_annotate(*a, **k))
    _, part = distill(teacher, config_for(2), tmp_path / "part")
    assert labelled == [], "the teacher ran though the whole text's pass is cached"
    info = part["annotation"]["greenkd_parser"]
    assert info["reused"] and info["docs"] == n_train + 2 and info["prefix_of"]["docs"] == paid["docs"]
    assert 0 < info["words_labelled"] < paid["words_labelled"]
    assert info["cpu_seconds"] == pytest.approx(paid["cpu_seconds"] * info["prefix_of"]["share"])
    assert part["training"]["steps"] == 4
    # Two texts per doc, cut after three: the last doc is not one of the whole file's.
    distill(teacher, config_for(0, texts_per_doc=2), tmp_path / "joined")
    labelled.clear()
    distill(teacher, config_for(3, texts_per_doc=2), tmp_path / "joined-cut")
    assert labelled == [1]


def test_texts_per_doc_joins_lines_into_docs_of_several_sentences(tmp_path):
    """texts_per_doc = 2 gives one doc per two lines, each line starting a sentence and
    no boundary set inside a line; the last doc takes what is left, the size in the
    corpus key says so, and the key differs from one doc per line."""
    from greenkd_spacy.data.text_corpus import create_distill_reader, create_text_reader

    nlp = spacy.blank("en")
    (tmp_path / "raw.txt").write_text("I like green eggs .\nShe ate it .\n\nA third one .\n", encoding="utf8")
    docs = [eg.predicted for eg in create_text_reader(tmp_path / "raw.txt", texts_per_doc=2)(nlp)]
    assert [doc.text for doc in docs] == ["I like green eggs . She ate it .", "A third one ."]
    assert [[t.i for t in doc if t.is_sent_start] for doc in docs] == [[0, 5], [0]]
    assert [t.is_sent_start for t in docs[0][1:5]] == [None] * 4
    assert [s.text for s in docs[0].sents] == ["I like green eggs .", "She ate it ."]
    joined = create_distill_reader(None, tmp_path / "raw.txt", texts_per_doc=2)
    single = create_distill_reader(None, tmp_path / "raw.txt")
    assert joined.content_key(nlp).size == len(list(joined(nlp))) == 2
    assert single.content_key(nlp).size == 3 and joined.content_key(nlp).key != single.content_key(nlp).key
    with pytest.raises(ValueError, match="E082"):
        create_text_reader(tmp_path / "raw.txt", texts_per_doc=0)


def test_greenkd_corpora_name_their_content_without_being_read(tmp_path, monkeypatch):
    """The cache key of a greenkd corpus comes from its files, settings and tokenizer:
    the same content gives the same key wherever it lies, a changed byte, limit or
    tokenizer rule another one, and the size is what reading would yield."""
    from greenkd_spacy.data import text_corpus
    from greenkd_spacy.data.text_corpus import create_distill_reader

    nlp = spacy.blank("en")
    gold = spacy.tokens.Doc(nlp.vocab, words=["Don't", "go", "!"], spaces=[True, False, False])
    spacy.tokens.DocBin(docs=[gold, spacy.tokens.Doc(nlp.vocab, words=[])]).to_disk(tmp_path / "gold.spacy")
    (tmp_path / "raw.txt").write_text("I like green eggs .\n\n  \nShe ate the pizza .\nA third .\n", encoding="utf8")
    reader = create_distill_reader(tmp_path / "gold.spacy", tmp_path / "raw.txt", gold_tokens=True)
    monkeypatch.setattr(text_corpus, "iter_texts", lambda *a, **k: pytest.fail("the corpus was read"))
    source = reader.content_key(nlp)
    monkeypatch.undo()
    assert source.size == len(list(reader(nlp))) == 1 + 3  # the empty doc and blank lines are skipped

    copy_dir = tmp_path / "elsewhere"
    copy_dir.mkdir()
    for name in ("gold.spacy", "raw.txt"):
        (copy_dir / name).write_bytes((tmp_path / name).read_bytes())
    moved = create_distill_reader(copy_dir / "gold.spacy", copy_dir / "raw.txt", gold_tokens=True)
    assert moved.content_key(spacy.blank("en")).key == source.key
    limited = create_distill_reader(tmp_path / "gold.spacy", tmp_path / "raw.txt", text_limit=2, gold_tokens=True)
    assert limited.content_key(nlp).key != source.key and limited.content_key(nlp).size == 1 + 2
    retokenized = spacy.blank("en")
    retokenized.tokenizer.add_special_case("eggs", [{"ORTH": "egg"}, {"ORTH": "s"}])
    assert reader.content_key(retokenized).key != source.key
    (copy_dir / "raw.txt").write_text("I like green eggs !\n\nShe ate the pizza .\nA third .\n", encoding="utf8")
    assert moved.content_key(nlp).key != source.key


def test_cache_keys_keep_their_bytes():
    """The hashing of parts is what names every cache on disk: a change to it leaves
    every teacher pass already paid for unfound. Known answers pin it (computed before
    the corpus keys and the cache fingerprint came to share greenkd_spacy/digest.py)."""
    from greenkd_spacy.data.source_key import combine
    from greenkd_spacy.distillation.cache import Fingerprint

    assert combine("greenkd.TextFile.v1", "abc", 0, "text", None, ("x", 1)) == (
        "c7e98bf1d26bddaf531645f1d7c69afa6525223920fd5945b21f4c2247a99435"
    )
    assert Fingerprint().update({"a": 1}, b"xy", "s").hexdigest() == (
        "30eae436216b86071fd0540e41ba90b62bb7d3e2ad36c5c5b9675c6b4a90ad5a"
    )
    # Length prefixes keep the split between parts in the key.
    assert combine("ab", "c") != combine("a", "bc")


def test_a_teacher_with_a_sentencizer_has_one_cache_key_in_every_process():
    """A sentencizer's bytes list its characters in set order, which string hashing
    changes from process to process: a teacher with one before its parser got a new
    cache key, and a second student ran the teacher pass again."""
    script = (
        "import spacy; from greenkd_spacy.distillation.cache import Fingerprint; "
        "nlp = spacy.blank('en'); nlp.add_pipe('sentencizer'); nlp.add_pipe('sentencizer', name='custom', config={'punct_chars': ['!', '?', ';', '.']}); "
        "f = Fingerprint(); [f.update_pipe(n, p) for n, p in nlp.pipeline]; print(f.hexdigest())"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(keys) == 1
    from greenkd_spacy.distillation.cache import Fingerprint

    def key(punct_chars):
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer", config={"punct_chars": punct_chars})
        return Fingerprint().update_pipe("sentencizer", nlp.get_pipe("sentencizer")).hexdigest()

    assert key([".", "!"]) == key(["!", "."]) != key(["."])


def test_teacher_cache_key_of_a_greenkd_corpus_skips_the_reading(tmp_path):
    """teacher_fingerprints takes a corpus that names its content at its word, and reads
    (once) any corpus that cannot; the keys of the two kinds of corpus differ."""
    from greenkd_spacy.data.text_corpus import create_text_reader
    from greenkd_spacy.distillation.teacher_pass import teacher_fingerprints

    teacher = spacy.blank("en")
    (tmp_path / "raw.txt").write_text("one text\ntwo texts\n", encoding="utf8")
    reader = create_text_reader(tmp_path / "raw.txt")
    reads = []

    def counted(nlp):
        reads.append(1)
        yield from reader(nlp)

    counted.content_key = reader.content_key
    keys = [("tok2vec", {"kind": "a"})]
    named, n_named, _ = teacher_fingerprints(teacher, keys, counted, teacher)
    assert reads == [] and n_named == 2
    del counted.content_key
    read, n_read, _ = teacher_fingerprints(teacher, keys, counted, teacher)
    assert reads == [1] and n_read == 2 and read != named


def test_a_second_run_into_a_locked_output_or_cache_stops_at_once_naming_the_holder(teacher_dir, tmp_path):
    import io
    import os

    from greenkd_spacy.lock import LOCK_FILE, run_lock

    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=2)
    for directory, what in ((tmp_path / "out", "output directory"), (tmp_path / "cache", "teacher cache")):
        with run_lock(directory, what):
            with pytest.raises(ValueError, match=f"Another run is using the {what}.*pid {os.getpid()}"):
                distill(teacher, config, tmp_path / "out")
        assert not (tmp_path / "out" / "model-last").exists()
    # A lock file left by a holder that died (the OS released its flock) is taken over.
    (tmp_path / "out" / LOCK_FILE).write_text("pid 999999 on elsewhere, started 2026-01-01T00:00:00", encoding="utf8")
    log = io.StringIO()
    distill(teacher, config, tmp_path / "out", stderr=log)
    assert "Took over the lock" in log.getvalue() and "pid 999999" in log.getvalue()
    assert (tmp_path / "out" / "model-last").is_dir() and (tmp_path / "out" / LOCK_FILE).read_text() == ""


def test_an_output_path_that_is_a_file_is_refused_before_any_work(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    (tmp_path / "out").write_text("not a directory")
    with pytest.raises(ValueError, match="is a file"):
        distill(teacher, student_config(teacher_dir, tmp_path, max_steps=2), tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_a_resume_that_cannot_load_model_last_names_it_and_no_resume(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    distill(teacher, student_config(teacher_dir, tmp_path, max_steps=2, eval_frequency=2), tmp_path / "out")
    # A changed config: the student no longer has model-last's shape.
    wider = student_config(teacher_dir, tmp_path, max_steps=4, eval_frequency=2)
    wider["components"]["greenkd_parser"]["model"]["arc_mlp_size"] = 16
    with pytest.raises(ValueError, match=r"(?s)Cannot resume from .*model-last.*--no-resume"):
        distill(teacher, wider, tmp_path / "out")
    # Damaged weights: the same message.
    (weights,) = (tmp_path / "out" / "model-last" / "greenkd_parser").glob("model")
    weights.write_bytes(weights.read_bytes()[:20])
    with pytest.raises(ValueError, match=r"(?s)Cannot resume from .*model-last.*--no-resume"):
        distill(teacher, student_config(teacher_dir, tmp_path, max_steps=4, eval_frequency=2), tmp_path / "out")
    _, summary = distill(teacher, wider, tmp_path / "out", resume=False)
    assert summary["training"]["steps"] == 4


@pytest.mark.parametrize("content", [b"", b"not a DocBin"])
def test_an_empty_or_corrupt_dev_set_is_refused_before_the_teacher_pass(teacher_dir, tmp_path, content):
    from spacy.tokens import DocBin

    teacher = spacy.load(teacher_dir / "model")
    dev = tmp_path / "dev.spacy"
    if content:
        dev.write_bytes(content)
    else:
        DocBin().to_disk(dev)
    config = student_config(teacher_dir, tmp_path, max_steps=2)
    config["paths"]["dev"] = str(dev)
    with pytest.raises(ValueError, match="dev.spacy"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_a_full_disk_at_a_checkpoint_names_the_path_and_leaves_no_temporary_folder(teacher_dir, tmp_path, monkeypatch):
    import errno

    from greenkd_spacy.distillation import loop

    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=4, eval_frequency=2)
    distill(teacher, student_config(teacher_dir, tmp_path, max_steps=2, eval_frequency=2), tmp_path / "out")
    real_to_disk = loop.Language.to_disk

    def full_disk(self, path, *args, **kwargs):
        real_to_disk(self, path, *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(loop.Language, "to_disk", full_disk)
    with pytest.raises(ValueError, match=r"(?s)Could not save .*model-best.*No space left.*run the same command again"):
        distill(teacher, config, tmp_path / "out")
    assert not [path.name for path in (tmp_path / "out").iterdir() if path.name.endswith(".tmp")]
    monkeypatch.undo()
    _, summary = distill(teacher, config, tmp_path / "out")  # resumes from the kept model-last
    assert summary["training"]["resumed_from_step"] == 2
