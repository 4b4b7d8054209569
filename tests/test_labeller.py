"""greenkd_ner / greenkd_chunker (LD-Net): training, spans, LM pretraining, layer
selection and pruning, CoNLL conversion, distillation."""
import copy
import json

import numpy
import pytest
import spacy
import torch
from spacy.tokens import DocBin
from spacy.training import Example

from greenkd_spacy.data.conll import read_sentences, sentence_doc
from greenkd_spacy.distillation.loop import distill
from greenkd_spacy.models.pytorch.dense_lm import LMShape
from greenkd_spacy.training.lm_pretrain import pretrain_lm

from .util import distill_config, save_teacher

TINY_ENCODER = {"@architectures": "greenkd.LDNetEncoder.v1", "word_width": 16, "word_rows": 500, "char_width": 8, "char_hidden": 16, "hidden_width": 16, "dropout": 0.0}
TINY = {"model": {"dropout": 0.0, "tok2vec": TINY_ENCODER}}
TEXTS = [
    ("John Smith lives in Paris .", [(0, 10, "PER"), (20, 25, "LOC")]),
    ("Mary went to London today .", [(0, 4, "PER"), (13, 19, "LOC")]),
    ("Nothing here .", []),
]
RAW = "\n".join(t for t, _ in TEXTS for _ in range(8)) + "\n"


def ner_examples(nlp):
    return [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in TEXTS]


def train_ner(config=None, steps=60, lm_path=None):
    torch.manual_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_ner", config=copy.deepcopy(config or TINY))
    egs = ner_examples(nlp)
    if lm_path is not None:
        nlp.config["initialize"]["components"]["greenkd_ner"] = {"lm_path": str(lm_path)}
    optimizer = nlp.initialize(lambda: egs)
    optimizer.learn_rate = 0.01
    for _ in range(steps):
        nlp.update(egs, sgd=optimizer)
    return nlp, optimizer


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("lm")
    (path / "raw.txt").write_text(RAW, encoding="utf8")
    shape = LMShape(vocab_size=30, embed_width=8, hidden_width=8, depth=4, proj_width=8, cutoffs=(10,))
    pretrain_lm(path / "raw.txt", path / "out", shape=shape, batch_size=4, seq_length=8, max_steps=20, eval_every=10, held_out_batches=1)
    return path


def test_ner_learns_round_trips_and_survives_odd_input(tmp_path):
    nlp, _ = train_ner()
    doc = nlp("John Smith lives in Paris .")
    assert [(e.text, e.label_) for e in doc.ents] == [("John Smith", "PER"), ("Paris", "LOC")]
    assert nlp.evaluate(ner_examples(nlp))["ents_f"] == 1.0
    for text in ["", "   ", "🙂 é \x00", "x" * 3000, " ".join(["word"] * 700)]:
        ents = nlp(text).ents
        assert all(e.label_ in ("PER", "LOC") for e in ents)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert [(e.text, e.label_) for e in loaded("John Smith lives in Paris .").ents] == [(e.text, e.label_) for e in doc.ents]


def test_chunker_writes_spans_and_scores_them():
    torch.manual_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_chunker", config=copy.deepcopy(TINY))
    egs = []
    for words, tags in ((["the", "cat", "sat"], ["B-NP", "I-NP", "B-VP"]), (["a", "dog", "ran"], ["B-NP", "I-NP", "B-VP"])):
        ref = sentence_doc(nlp.vocab, words, ["X"] * 3, tags, "conll00")
        egs.append(Example(nlp.make_doc(" ".join(words)), ref))
    optimizer = nlp.initialize(lambda: egs)
    optimizer.learn_rate = 0.01
    for _ in range(60):
        nlp.update(egs, sgd=optimizer)
    doc = nlp("the cat sat")
    assert [(s.text, s.label_) for s in doc.spans["chunks"]] == [("the cat", "NP"), ("sat", "VP")]
    assert nlp.evaluate(egs)["spans_chunks_f"] == 1.0


def test_lm_pretraining_checkpoints_and_resumes(lm_dir):
    state = json.loads((lm_dir / "out/model-last/state.json").read_text())
    assert state["step"] == 20 and len(state["history"]) == 2
    assert (lm_dir / "out/model-best/weights.pt").exists()
    state = pretrain_lm(lm_dir / "raw.txt", lm_dir / "out", max_steps=25, eval_every=5, batch_size=4, seq_length=8, held_out_batches=1)
    assert state["step"] == 25 and len(state["history"]) == 3
    # Killed between a checkpoint's two renames: model-last is only at .model-last.old.
    (lm_dir / "out/model-last").rename(lm_dir / "out/.model-last.old")
    state = pretrain_lm(lm_dir / "raw.txt", lm_dir / "out", max_steps=30, eval_every=5, batch_size=4, seq_length=8, held_out_batches=1)
    assert state["step"] == 30 and len(state["history"]) == 4  # resumed at 25, not restarted


def test_layer_selection_and_pruning_keep_predictions(lm_dir, tmp_path):
    config = copy.deepcopy(TINY)
    config.update({"lm_lambda0": 1.0, "lm_target_layers": 3, "lm_gate_lr": 0.2})
    nlp, _ = train_ner(config, steps=80, lm_path=lm_dir / "out/model-best")
    pipe = nlp.get_pipe("greenkd_ner")
    gates = pipe.lm_gates()
    values = gates["fwd"] + gates["bwd"]
    assert all(0.0 <= z <= 1.0 for z in values)
    assert sum(z > 0 for z in values) <= 3  # R3 drove the rest to exactly 0
    texts = [t for t, _ in TEXTS]
    before = [[(e.start, e.end, e.label_) for e in doc.ents] for doc in nlp.pipe(texts)]
    probs_before = pipe.predict_marginals([nlp.make_doc(t) for t in texts])[1]
    flops_before, flops_after = pipe.prune_lm()
    assert flops_after < flops_before
    probs_after = pipe.predict_marginals([nlp.make_doc(t) for t in texts])[1]
    for a, b in zip(probs_before, probs_after):
        assert numpy.allclose(a, b, atol=1e-5)
    nlp.to_disk(tmp_path / "pruned")
    loaded = spacy.load(tmp_path / "pruned")
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in loaded.pipe(texts)] == before
    assert loaded.get_pipe("greenkd_ner").lm_flops_per_token() == flops_after


def test_conll_reader_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP\n", encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.txt, line 4"):
        list(read_sentences(path, "conll03"))
    good = tmp_path / "good.txt"
    good.write_text("EU NNP I-NP I-ORG\nGerman JJ I-NP I-MISC\nwords NN I-NP O\nA NNP I-NP I-ORG\nB NNP I-NP B-ORG\n", encoding="utf8")
    (words, pos, tags, line), = read_sentences(good, "conll03")
    doc = sentence_doc(spacy.blank("en").vocab, words, pos, tags, "conll03")
    # IOB1: B- separates two adjacent ORG entities.
    assert [(e.text, e.label_) for e in doc.ents] == [("EU", "ORG"), ("German", "MISC"), ("A", "ORG"), ("B", "ORG")]


def test_distil_ner_student_from_ner_teacher(tmp_path):
    teacher, _ = train_ner()
    teacher.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in ner_examples(teacher)]).to_disk(tmp_path / "train.spacy")
    student = spacy.blank("en")
    student.add_pipe("greenkd_ner", config=copy.deepcopy(TINY))
    config = distill_config(student, tmp_path / "train.spacy", tmp_path / "cache")
    config["training"]["eval_frequency"] = 20
    trained, summary = distill(str(tmp_path / "teacher"), config, tmp_path / "out")
    assert trained.get_pipe("greenkd_ner").labels == teacher.get_pipe("greenkd_ner").labels
    assert summary["training"]["best_score"] > 0.9


def test_distil_chunker_student_from_chunker_teacher(tmp_path):
    """greenkd_chunker -> greenkd_chunker on raw words: per-token tag marginals (soft)."""
    torch.manual_seed(0)
    teacher = spacy.blank("en")
    teacher.add_pipe("greenkd_chunker", config=copy.deepcopy(TINY))
    chunks = ((["the", "cat", "sat"], ["B-NP", "I-NP", "B-VP"]), (["a", "dog", "ran", "home"], ["B-NP", "I-NP", "B-VP", "B-NP"]))
    egs = [Example(teacher.make_doc(" ".join(w)), sentence_doc(teacher.vocab, w, ["X"] * len(w), t, "conll00")) for w, t in chunks]
    save_teacher(teacher, egs, tmp_path)
    student = spacy.blank("en")
    student.add_pipe("greenkd_chunker", config=copy.deepcopy(TINY))
    config = distill_config(student, tmp_path / "train.spacy", tmp_path / "cache", gold_weight=0.0)
    trained, summary = distill(str(tmp_path / "teacher"), config, tmp_path / "out")
    assert trained.get_pipe("greenkd_chunker").labels == teacher.get_pipe("greenkd_chunker").labels
    assert summary["annotation"]["greenkd_chunker"]["docs"] == 2
    for words, _ in chunks:
        got, want = trained(" ".join(words)), teacher(" ".join(words))
        assert [(s.text, s.label_) for s in got.spans["chunks"]] == [(s.text, s.label_) for s in want.spans["chunks"]]


def test_ldnet_configs_select_prune_and_bench_from_the_command_line(lm_dir, tmp_path):
    """The study's path as a user runs it: spacy train (LD-Net config with an LM), the
    layer-selection config sourcing it, greenkd-prune-lm, greenkd-bench-labeller (as a
    study's results row)."""
    from spacy.cli.train import train as train_cli
    from typer.testing import CliRunner

    from benchmarks.bench import main as bench_row
    from greenkd_spacy.cli.app import app

    nlp = spacy.blank("en")
    DocBin(docs=[eg.reference for eg in ner_examples(nlp)]).to_disk(tmp_path / "train.spacy")
    data = {"paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "train.spacy")}
    tiny = {f"components.greenkd_ner.model.tok2vec.{k}": v for k, v in TINY_ENCODER.items()}
    train_cli("configs/paper/ner_ldnet.cfg", tmp_path / "ldnet", overrides={
        **data, **tiny, "paths.lm": str(lm_dir / "out/model-best"), "training.max_steps": 30,
        "training.eval_frequency": 10, "training.dropout": 0.0, "components.greenkd_ner.model.dropout": 0.0,
    })
    train_cli("configs/paper/ner_ldnet_select.cfg", tmp_path / "select", overrides={
        **data, "paths.source": str(tmp_path / "ldnet/model-best"), "training.max_steps": 60, "training.eval_frequency": 20,
        "training.dropout": 0.0, "initialize.before_init.lambda0": 1.0, "initialize.before_init.target_layers": 2,
        "initialize.before_init.gate_lr": 0.3,
    })
    runner = CliRunner()
    result = runner.invoke(app, ["prune-lm", str(tmp_path / "select/model-last"), str(tmp_path / "pruned")])
    assert result.exit_code == 0, result.output
    assert "fewer" in result.output
    # A model trained without layer selection has nothing gated off: said, not hidden.
    unselected = runner.invoke(app, ["prune-lm", str(tmp_path / "ldnet/model-best"), str(tmp_path / "same")])
    assert unselected.exit_code == 0 and "W002" in unselected.output
    assert "W002" not in result.output  # selection gated layers off: nothing to warn about
    pruned = spacy.load(tmp_path / "pruned").get_pipe("greenkd_ner")
    assert sum(len(g) for g in pruned.lm_gates().values()) <= 2
    out = tmp_path / "results.json"
    bench_row(["labeller", str(tmp_path / "pruned"), str(tmp_path / "train.spacy"), "--system", "ldnet-pruned", "-o", str(out), "--repeats", "1", "--min-words", "0"])
    row = json.loads(out.read_text())[0]
    assert row["system"] == "ldnet-pruned" and 0 < row["lm_flops_per_token"] and row["words_per_second"] > 0
    assert 0 <= row["f1"] <= 100 and row["cores"] >= 1
    # A small test set is timed over whole copies of itself; the score is the same.
    bench_row(["labeller", str(tmp_path / "pruned"), str(tmp_path / "train.spacy"), "--system", "copies", "-o", str(out), "--repeats", "1", "--min-words", "500"])
    copies = json.loads(out.read_text())[1]
    assert copies["f1"] == row["f1"] and copies["timed_words"] >= 500 and copies["timed_words"] % copies["words"] == 0


def test_char_lstm_groups_by_length_without_changing_outputs(monkeypatch):
    """Sentences run through the character LSTM in length groups, each padded only to its
    own longest: the same states as one batch padded to the longest sentence."""
    import greenkd_spacy.models.pytorch.ldnet as ldnet

    torch.manual_seed(0)
    encoder = ldnet.LDNetEncoder(50, 6, 40, 5, 7, 8, dropout=0.0).eval()
    batch, n_words = 21, 9
    char_lengths = torch.randint(0, 60, (batch,))
    char_ids = torch.randint(1, 40, (batch, int(char_lengths.max())))
    fwd_pos = torch.minimum(torch.randint(0, 60, (batch, n_words)), (char_lengths - 1).clamp(min=0)[:, None])
    bwd_pos = torch.minimum(torch.randint(0, 60, (batch, n_words)), (char_lengths - 1).clamp(min=0)[:, None])
    with torch.no_grad():
        monkeypatch.setattr(ldnet, "CHAR_GROUP", 4)
        grouped = encoder._chars(char_ids, char_lengths, fwd_pos, bwd_pos)
        monkeypatch.setattr(ldnet, "CHAR_GROUP", 1000)
        one_batch = encoder._chars(char_ids, char_lengths, fwd_pos, bwd_pos)
    assert grouped.shape == (batch, n_words, 6)
    assert torch.allclose(grouped, one_batch, atol=1e-6)


def test_predict_decodes_without_marginals_and_teachers_get_them():
    nlp, _ = train_ner()
    pipe = nlp.get_pipe("greenkd_ner")
    docs = [nlp.make_doc(t) for t, _ in TEXTS] + [nlp.make_doc("")]
    tags, probs = pipe.predict(docs)
    assert probs is None  # decoding alone skips the forward-backward pass
    tags_m, marginals = pipe.predict_marginals(docs)
    assert [t.tolist() for t in tags] == [t.tolist() for t in tags_m]
    for doc, m in zip(docs, marginals):
        assert m.shape == (len(doc), len(pipe.tags))
        assert numpy.allclose(m.sum(axis=1), 1.0, atol=1e-4)


def test_training_without_layer_selection_runs_no_backward_through_the_lm(lm_dir):
    """lambda0 = 0: the gates stay at 1 and take no gradient, so nothing in the frozen
    LM is recorded for backward (the same updates, minus the LM's backward pass)."""
    nlp, _ = train_ner(steps=2, lm_path=lm_dir / "out/model-best")
    encoder = nlp.get_pipe("greenkd_ner")._ldnet_module()
    assert all(not gate.requires_grad and gate.grad is None for gate in encoder.gates.values())
    assert all(float(z) == 1.0 for gate in encoder.gates.values() for z in gate)
    ids = torch.tensor([[2, 3, 4]])
    outputs = encoder.lm.directions(ids, torch.tensor([3]), gates=dict(encoder.gates))
    assert not outputs["fwd"].requires_grad and not outputs["bwd"].requires_grad


def test_ldnet_profile_splits_prediction_time_and_leaves_the_model_as_it_was(lm_dir):
    """benchmarks/ldnet_profile.py times each part of one pass and removes its hooks."""
    from benchmarks import ldnet_profile as profile

    nlp, _ = train_ner(steps=20, lm_path=lm_dir / "out/model-best")
    docs = [nlp.make_doc(t) for t, _ in TEXTS] * 4
    before = [[(e.text, e.label_) for e in d.ents] for d in nlp.pipe([nlp.make_doc(t) for t, _ in TEXTS])]
    row = profile.ldnet_parts(nlp, docs, batch_size=4)
    parts = row["parts"]
    assert set(parts) == {"char_lstm", "language_model", "word_bilstm", "crf_head", "rest"}
    assert all(p["seconds"] > 0 for name, p in parts.items() if name != "rest")
    assert abs(sum(p["share"] for p in parts.values()) - 1.0) < 0.01
    pipe = nlp.get_pipe("greenkd_ner")
    assert parts["language_model"]["macs_per_word"] == pipe.lm_flops_per_token() > 0
    assert row["words"] == sum(len(d) for d in docs)
    # Hooks and wrappers are gone: the module's own methods run again, same output.
    encoder = pipe._ldnet_module()
    assert "_chars" not in vars(encoder) and "directions" not in vars(encoder.lm)
    assert not encoder.lstm._forward_hooks and not encoder.lstm._forward_pre_hooks
    after = [[(e.text, e.label_) for e in d.ents] for d in nlp.pipe([nlp.make_doc(t) for t, _ in TEXTS])]
    assert after == before
    spacy_row = profile.spacy_parts(nlp, docs, batch_size=4)
    assert set(spacy_row["parts"]) == {"greenkd_ner"} and spacy_row["words_per_second"] > 0


@pytest.mark.parametrize("factory,config", [("greenkd_ner", "defaults/ner.cfg"), ("greenkd_chunker", "defaults/chunk.cfg")])
def test_factory_default_is_the_shipped_cpu_first_model(factory, config):
    """A user's nlp.add_pipe gets the model the benchmarks chose, not the paper's LD-Net."""
    from pathlib import Path

    from spacy.util import load_config, registry

    shipped = load_config(Path(__file__).parent.parent / "configs" / config, interpolate=False)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    default = nlp.config["components"][factory]["model"]["tok2vec"]
    assert default["@architectures"] == "greenkd.BiLSTMEncoder.v1"
    filled = lambda block: {k: v for k, v in registry.fill({"x": block})["x"].items() if k != "dropout"}  # noqa: E731
    # every encoder setting agrees, those left to the architecture's defaults included
    # (dropout aside: [training] dropout sets it while training)
    assert filled(default) == filled(shipped["components"][factory]["model"]["tok2vec"])
    gold = nlp.make_doc("Apple sold shares in London .")
    annotation = {"entities": [(0, 5, "ORG")]} if factory == "greenkd_ner" else {"spans": {"chunks": [(0, 5, "NP")]}}
    nlp.initialize(lambda: [Example.from_dict(gold, annotation)])
    assert len(nlp("Apple sold shares in London .")) == 6


def test_summed_loss_is_the_mean_times_the_sequences():
    """normalize_loss=False (a labeller listening to an encoder spaCy's tagger also
    trains) sums the CRF loss over the sequences and the KL on a teacher's marginals
    over the tokens, where the default averages them: the same gradient direction, n
    times the size."""
    torch.manual_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("greenkd_ner", config={**copy.deepcopy(TINY), "normalize_loss": False})
    assert pipe.cfg["normalize_loss"] is False
    examples = ner_examples(nlp)
    nlp.initialize(lambda: examples)
    docs = [eg.predicted for eg in examples]
    gold, has_gold = pipe._gold_tags(examples)
    head = next(shim._model for node in pipe.model.walk() for shim in node.shims)

    def loss_and_grads(targets):
        for param in head.parameters():
            param.grad = None
        loss = pipe._step(docs, targets, drop=0.0, sgd=None)
        return loss, [param.grad.clone() for param in head.parameters() if param.grad is not None]

    def check(targets, n):
        pipe.cfg["normalize_loss"] = False
        total, grads_sum = loss_and_grads(targets)
        pipe.cfg["normalize_loss"] = True
        mean, grads_mean = loss_and_grads(targets)
        assert mean > 0 and total == pytest.approx(mean * n, rel=1e-4)
        assert grads_sum and len(grads_sum) == len(grads_mean)
        for g_sum, g_mean in zip(grads_sum, grads_mean):
            torch.testing.assert_close(g_sum, g_mean * n, rtol=1e-4, atol=1e-6)

    check({"gold": gold, "has_gold": has_gold, "gold_weight": 1.0}, len(docs))  # the CRF loss: n sequences
    # A teacher's marginals (here: random ones), no gold: the KL, n tokens.
    rng = numpy.random.default_rng(0)
    teacher = [rng.dirichlet(numpy.ones(len(pipe.tags)), len(doc)).astype("float32") for doc in docs]
    check({"teacher": teacher, "temperature": 1.0, "gold_weight": 0.0}, sum(len(doc) for doc in docs))
