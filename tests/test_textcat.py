"""greenkd_textcat: training, serialization, pruning, distillation from spaCy's textcat."""
import numpy
import pytest
import spacy
import torch
from spacy.attrs import LOWER, ORTH
from spacy.tokens import DocBin
from spacy.training import Example
from typer.testing import CliRunner

from greenkd_spacy.cli import app
from greenkd_spacy.distillation.contract import DistillSettings
from greenkd_spacy.distillation.loop import distill
from greenkd_spacy.data.labeled import read_labeled
from greenkd_spacy.models.dan import dan_module

from .util import TEXTCAT_DATA, distill_config, textcat_examples, trained_textcat

# A small DAN (the factory's default model is the linear bag; these tests are the DAN's).
SMALL = {"model": {"@architectures": "greenkd.DAN.v1", "max_ngrams": 500, "ngram_size": 2, "width": 16, "hidden_width": 16}}
# The v2 tests' DAN: v2's own defaults (1-4-grams, mean pooling) at SMALL's sizes.
SMALL_V2 = {"max_ngrams": 500, "width": 16, "hidden_width": 16}
DATA = TEXTCAT_DATA


def examples(nlp, multilabel=False):
    return textcat_examples(nlp)


def trained(factory="greenkd_textcat", steps=40, **v2_settings):
    """A small DAN trained on DATA; with settings, greenkd.DAN.v2 with those."""
    config = SMALL
    if v2_settings:
        config = {"model": {"@architectures": "greenkd.DAN.v2", **SMALL_V2, **v2_settings}}
    return trained_textcat(factory, config, steps)


@pytest.mark.parametrize("factory", ["greenkd_textcat", "greenkd_textcat_multilabel"])
def test_factory_default_is_the_linear_bag_of_1_2_grams_and_learns(factory, tmp_path):
    """add_pipe with no model config gives the from-scratch winner: the linear bag
    of 1-2-grams (no embeddings, no dense layers)."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory)
    model_cfg = nlp.config["components"][factory]["model"]
    assert (model_cfg["@architectures"], model_cfg["ngram_size"]) == ("greenkd.NgramLinear.v1", 2)
    egs = examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    optimizer.learn_rate = 0.05
    for _ in range(40):
        nlp.update(egs, sgd=optimizer)
    module = dan_module(pipe.model)
    assert sorted(name for name, _ in module.named_parameters()) == ["bias", "linear.weight"]
    assert nlp("a great film").cats["pos"] > 0.7 and nlp("boring and awful").cats["neg"] > 0.7
    nlp.to_disk(tmp_path / "default")
    loaded = spacy.load(tmp_path / "default")
    assert loaded("a great film").cats == pytest.approx(nlp("a great film").cats, abs=1e-6)


@pytest.mark.parametrize("factory", ["greenkd_textcat", "greenkd_textcat_multilabel"])
def test_initialize_reads_the_corpus_once_and_still_checks_every_example(factory):
    """The n-gram table, the labels (in the order met) and the check of each example's
    cats come from one read of the corpus; spaCy's initialize then sees a sample (it
    read a distillation corpus twice more). A bad example past the sample still fails."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory)
    egs = [eg for eg in examples(nlp) for _ in range(20)]  # 480, past the sample
    read = []

    def get_examples():
        for eg in egs:
            read.append(1)
            yield eg

    nlp.initialize(get_examples)
    assert len(egs) <= len(read) < 2 * len(egs)
    assert pipe.labels == ("pos", "neg")
    if factory == "greenkd_textcat":
        bad = Example.from_dict(nlp.make_doc("both"), {"cats": {"pos": 1.0, "neg": 1.0}})
        with pytest.raises(ValueError):
            nlp.initialize(lambda: egs + [bad])


def test_a_partial_dan_v2_block_gets_v2s_own_defaults_not_the_linear_default():
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.DAN.v2", "pooling": "sqrtn"}})
    model_cfg = nlp.config["components"]["greenkd_textcat"]["model"]
    assert (model_cfg["deep"], model_cfg["linear"], model_cfg["pooling"], model_cfg["ngram_size"]) == (True, False, "sqrtn", 4)


@pytest.mark.parametrize("factory", ["greenkd_textcat", "greenkd_textcat_multilabel"])
def test_learns_and_round_trips(factory, tmp_path):
    nlp = trained(factory)
    assert nlp("a great film").cats["pos"] > 0.8
    assert nlp("boring and awful").cats["neg"] > 0.8
    if factory == "greenkd_textcat":
        assert sum(nlp("anything").cats.values()) == pytest.approx(1.0, abs=1e-5)
    for text in ["", "   ", "🙂", "x" * 5000]:
        cats = nlp(text).cats
        assert set(cats) == {"pos", "neg"} and all(numpy.isfinite(list(cats.values())))
    # Our row-at-a-time set_annotations sets what spaCy's own sets.
    pipe = nlp.get_pipe(factory)
    ours, theirs = nlp.make_doc("what a great film"), nlp.make_doc("what a great film")
    scores = pipe.predict([ours])
    pipe.set_annotations([ours], scores)
    from spacy.pipeline.textcat import TextCategorizer

    TextCategorizer.set_annotations(pipe, [theirs], scores)
    assert ours.cats == theirs.cats and all(type(v) is float for v in ours.cats.values())
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded("a great film").cats == pytest.approx(nlp("a great film").cats)
    assert loaded.evaluate(examples(loaded))["cats_score"] > 0.9


def test_weight_averages_are_what_use_params_evaluates_and_saves(tmp_path):
    """With use_averages = true every weight of the DAN is averaged once: the n-gram
    tables (SparseAdam's, which thinc's optimizer never sees) by the component, the
    dense layers by thinc's optimizer, both on thinc's schedule; nlp.use_params swaps
    all averages in for the block, as spaCy's training evaluates and saves checkpoints,
    then swaps back."""
    from thinc.api import Adam

    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.DAN.v2", **SMALL_V2, "linear": True}})
    egs = examples(nlp)
    nlp.initialize(lambda: egs)
    optimizer = Adam(0.01, use_averages=True)
    pipe = nlp.get_pipe("greenkd_textcat")
    shim = pipe.model.layers[0].shims[0]
    module = shim._model
    names = [name for name, _ in module.named_parameters()]
    table_ids = {id(p) for p in module.sparse_parameters()}
    expected = [torch.zeros_like(p) for p in module.parameters()]
    for t in range(1, 31):
        nlp.update(egs, sgd=optimizer)
        # thinc's schedule: from zero, decay (1 + t) / (10 + t), at most 0.9999
        decay = min((1.0 + t) / (10.0 + t), 0.9999)
        expected = [e + (1 - decay) * (p.detach() - e) for e, p in zip(expected, module.parameters())]
    trained = [p.detach().clone() for p in module.parameters()]
    text = "what a great film"
    cats_trained = nlp(text).cats
    is_table = [id(p) in table_ids for p in module.parameters()]
    # Ours: only the two n-gram tables (embeddings, linear bag); thinc's: the 4 dense
    # weights, and none of the tables (no work done twice).
    assert len(pipe._averages) == sum(is_table) == 2 and len(trained) == 6
    thinc_keys = {key[1] for key in optimizer.averages if isinstance(key, tuple) and key[0] == shim.id}
    assert thinc_keys == {name for name, table in zip(names, is_table) if not table}
    tables_expected = [e for e, table in zip(expected, is_table) if table]
    for avg, exp in zip(pipe._averages, tables_expected):
        assert torch.allclose(avg, exp, atol=1e-6)
    with nlp.use_params(optimizer.averages):
        inside = [p.detach().clone() for p in module.parameters()]
        cats_averaged = nlp(text).cats
        nlp.to_disk(tmp_path / "averaged")
    for got, exp, weights in zip(inside, expected, trained):
        assert torch.allclose(got, exp, atol=1e-5)
        assert not torch.equal(got, weights)
    assert cats_averaged != pytest.approx(cats_trained, abs=1e-6)
    # Back to the trained weights after the block; the saved model is the average.
    assert all(torch.equal(p, t) for p, t in zip(module.parameters(), trained))
    assert nlp(text).cats == pytest.approx(cats_trained)
    assert spacy.load(tmp_path / "averaged")(text).cats == pytest.approx(cats_averaged)
    # Without averages (the optimizer keeps none) nothing is swapped.
    pipe._averages = None
    with nlp.use_params({}):
        assert nlp(text).cats == pytest.approx(cats_trained)


@pytest.mark.parametrize("pooling", ["sqrtn", "sum"])
def test_v2_pooling_learns_round_trips_and_scales_the_sum(pooling, tmp_path):
    nlp = trained(pooling=pooling)
    assert nlp("a great film").cats["pos"] > 0.8 and nlp("boring and awful").cats["neg"] > 0.8
    assert set(nlp("").cats) == {"pos", "neg"}
    nlp.to_disk(tmp_path / "model")
    assert spacy.load(tmp_path / "model")("a great film").cats == pytest.approx(nlp("a great film").cats)
    # The pooled vector of a doc is the sum of its rows, over sqrt(n) for "sqrtn".
    pipe = nlp.get_pipe("greenkd_textcat")
    module = pipe.model.layers[0].shims[0]._model
    docs = [nlp.make_doc("what a great film"), nlp.make_doc("awful")]
    ids, offsets = pipe.model.attrs["ngrams"].batch_ids(docs)
    pooled = module.embed(torch.from_numpy(ids), torch.from_numpy(offsets), per_sample_weights=None)
    first = module.embed.weight[torch.from_numpy(ids[: offsets[1]])].sum(dim=0)
    assert torch.allclose(pooled[0], first, atol=1e-6)  # mode "sum" underneath both
    captured = {}
    module.hidden.register_forward_hook(lambda mod, inp, out: captured.update(x=inp[0].detach()))
    module.eval()
    module(torch.from_numpy(ids), torch.from_numpy(offsets))
    expected = first / (float(offsets[1]) ** 0.5 if pooling == "sqrtn" else 1.0)
    assert torch.allclose(captured["x"][0], expected.detach(), atol=1e-5)


def test_ngram_dropout_leaves_ngrams_out_of_their_own_bags():
    from greenkd_spacy.models.dan import drop_ngrams

    numpy.random.seed(0)
    ids = numpy.arange(1000, dtype="int64")
    offsets = numpy.array([0, 400, 400], dtype="int64")  # doc 1 has an empty bag
    kept, new_offsets = drop_ngrams(ids, offsets, 0.3)
    bags = numpy.split(kept, new_offsets[1:])
    assert [len(b) for b in bags][1] == 0
    assert all(b.min() >= 400 for b in bags[2:]) and bags[0].max() < 400  # ids stay in their doc
    assert 0.6 < len(kept) / len(ids) < 0.8


def test_ngram_dropout_only_in_training():
    nlp = trained(steps=0, ngram_dropout=0.5)
    pipe = nlp.get_pipe("greenkd_textcat")
    docs = [eg.predicted for eg in examples(nlp)]
    assert numpy.array_equal(pipe.model.predict(docs), pipe.model.predict(docs))
    train_1, _ = pipe.model.begin_update(docs)
    train_2, _ = pipe.model.begin_update(docs)
    assert not numpy.allclose(train_1, train_2)
    assert pipe.model.attrs["ngram_dropout_rate"] == 0.5
    with pytest.raises(ValueError, match="ngram_dropout"):
        from greenkd_spacy.models.dan import build_dan_v2

        build_dan_v2(ngram_dropout=1.0)


def test_linear_part_learns_updates_sparsely_prunes_and_round_trips(tmp_path):
    nlp = trained(steps=0, linear=True)
    pipe = nlp.get_pipe("greenkd_textcat")
    egs = examples(nlp)
    optimizer = nlp.resume_training()
    optimizer.learn_rate = 0.01
    module = pipe.model.layers[0].shims[0]._model
    before = module.linear.weight.detach().clone()
    nlp.update([egs[0]], sgd=optimizer)
    changed = set(numpy.nonzero((module.linear.weight.detach() != before).any(dim=1).numpy())[0])
    assert changed and changed <= set(pipe.model.attrs["ngrams"].doc_ids(egs[0].predicted))
    for _ in range(40):
        nlp.update(egs, sgd=optimizer)
    learned_saved_and_pruned(nlp, tmp_path)


def learned_saved_and_pruned(nlp, tmp_path):
    """The model of a DAN with a linear bag tells the toy classes apart, loads back the
    same, and pruning keeps the linear weights of the n-grams it keeps. RETURNS the
    module before pruning and the pruned one."""
    pipe = nlp.get_pipe("greenkd_textcat")
    module = pipe.model.layers[0].shims[0]._model
    assert nlp("a great film").cats["pos"] > 0.8 and nlp("boring and awful").cats["neg"] > 0.8
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded("a great film").cats == pytest.approx(nlp("a great film").cats)
    rows = pipe.model.attrs["ngrams"].select(10)
    kept = module.linear.weight.detach()[torch.from_numpy(rows)].clone()
    pipe.prune_ngrams(10)
    pruned = pipe.model.layers[0].shims[0]._model
    assert torch.equal(pruned.linear.weight.detach(), kept)
    return module, pruned


def test_linear_bag_alone_learns_round_trips_prunes_and_averages(tmp_path):
    """deep = false: the linear bag and its biases are the whole model (no embeddings,
    no dense layers), trained, saved, pruned and averaged as the DAN is."""
    from thinc.api import Adam

    nlp = trained(linear=True, deep=False, pooling="sum")
    pipe = nlp.get_pipe("greenkd_textcat")
    module = pipe.model.layers[0].shims[0]._model
    assert sorted(name for name, _ in module.named_parameters()) == ["bias", "linear.weight"]
    assert [p is module.linear.weight for p in module.sparse_parameters()] == [True]
    bias = module.bias.detach().clone()
    _, pruned = learned_saved_and_pruned(nlp, tmp_path)
    assert torch.equal(pruned.bias.detach(), bias)
    # Averages: the table ours, the biases thinc's.
    optimizer = Adam(0.01, use_averages=True)
    for _ in range(3):
        nlp.update(examples(nlp), sgd=optimizer)
    assert len(pipe._averages) == 1
    assert {key[1] for key in optimizer.averages if isinstance(key, tuple)} == {"bias"}


def test_v2_needs_something_left():
    from greenkd_spacy.models.dan import build_dan_v2

    with pytest.raises(ValueError, match="linear = true"):
        build_dan_v2(deep=False, linear=False)


def test_v2_rejects_an_unknown_pooling():
    from greenkd_spacy.models.dan import build_dan_v2

    with pytest.raises(ValueError, match="pooling"):
        build_dan_v2(pooling="max")


def test_sparse_update_touches_only_batch_rows():
    nlp = trained(steps=1)
    pipe = nlp.get_pipe("greenkd_textcat")
    module = pipe.model.layers[0].shims[0]._model
    before = module.embed.weight.detach().clone()
    optimizer = nlp.resume_training()
    nlp.update([examples(nlp)[0]], sgd=optimizer)
    changed = set(numpy.nonzero((module.embed.weight.detach() != before).any(dim=1).numpy())[0])
    touched = set(pipe.model.attrs["ngrams"].doc_ids(nlp.make_doc(DATA[0][0])))
    assert changed and changed <= touched


@pytest.mark.parametrize("ngram_range", [(1, 4), (2, 3)])
@pytest.mark.parametrize("lowercase", [True, False])
@pytest.mark.parametrize("path", ["batch_ids", "batch_ids_numpy"])
def test_batch_ngram_ids_match_the_string_definition(path, lowercase, ngram_range):
    """The hashed batch lookup, compiled (batch_ids) and in numpy (its reference), finds
    exactly the n-grams (same rows, same order) that joining token strings finds,
    including words that are spaCy symbols ("cc", "nsubj" have small ids, not string
    hashes), case, whitespace tokens, empty docs and n-gram ranges not starting at 1."""
    from greenkd_spacy.models.ngrams import NgramTable

    nlp = spacy.blank("en")
    texts = ["What does cc in engines mean ?", "the nsubj of The Movie is  great\n ok", "", "  ", "a", "A a a a A"]
    texts += [t for t, _ in DATA[:6]]
    docs = [nlp.make_doc(t) for t in texts]
    table = NgramTable.build(docs[:8], docs[8:], size=60, ngram_range=ngram_range, lowercase=lowercase)
    for table in (table, table.subset(numpy.arange(0, len(table), 2))):  # with unknown n-grams too
        expected_ids, expected_offsets = [], []
        for doc in docs:
            expected_offsets.append(len(expected_ids))
            expected_ids.extend(table.doc_ids(doc))
        ids, offsets = getattr(table, path)(docs)
        assert ids.dtype == offsets.dtype == numpy.int64
        assert ids.tolist() == expected_ids and offsets.tolist() == expected_offsets
    assert len(getattr(table, path)(docs)[0]) > 0
    assert [a.tolist() for a in getattr(table, path)([])] == [[], []]
    # A batch with no words at all (empty and whitespace-only docs): empty bags.
    assert [a.tolist() for a in getattr(table, path)([nlp.make_doc(""), nlp.make_doc("  \n")])] == [[], [0, 0]]


def test_compiled_featurization_is_built_and_probes_past_collisions():
    """The installed package has the compiled featurization (a missing build would only
    warn and run the numpy path: this test is what notices), and the compiled lookup
    walks a probe chain of colliding keys as KeyIndex.lookup does."""
    from greenkd_spacy.models import ngrams

    assert ngrams._compiled_batch_rows is not None, "run `pip install -e .` to build greenkd_spacy/models/_ngram_rows.pyx"
    nlp = spacy.blank("en")
    docs = [nlp.make_doc(" ".join(f"w{i}" for i in range(k, k + 30))) for k in range(0, 300, 30)]
    table = ngrams.NgramTable.build(docs, size=2000, ngram_range=(1, 3))
    index = table.key_index()
    slots = numpy.flatnonzero(index.rows >= 0)
    assert len(slots) == len(table)
    away_from_home = (index.keys[slots] & index.mask) != slots.astype("uint64")
    assert away_from_home.sum() > 10  # found only by walking a probe chain
    ids, offsets = table.batch_ids(docs)
    reference = table.batch_ids_numpy(docs)
    assert ids.tolist() == reference[0].tolist() and offsets.tolist() == reference[1].tolist()
    assert sorted(ids.tolist()) == list(range(len(table)))  # every n-gram found once
    with pytest.raises(TypeError):
        table.batch_ids(["not a doc"])
    for bad in ((0, 2), (3, 2)):
        with pytest.raises(ValueError, match="n-gram range"):
            ngrams.NgramTable(ngram_range=bad)


def test_compiled_word_keys_equal_to_array():
    """The static-vector mean reads every token's ORTH and LOWER through the compiled
    reader; it must give what Doc.to_array gives, spaces and empty docs included."""
    from greenkd_spacy.models import ngrams

    assert ngrams._compiled_word_keys is not None, "run `pip install -e .` to build greenkd_spacy/models/_ngram_rows.pyx"
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("Paris  and ROME."), nlp.make_doc(""), nlp.make_doc("x\n y")]
    reference = numpy.concatenate([doc.to_array([ORTH, LOWER]) for doc in docs]).astype("uint64")
    keys = ngrams.word_keys(docs)
    assert keys.dtype == numpy.uint64 and keys.tolist() == reference.tolist()
    assert keys[0, 0] != keys[0, 1]  # "Paris": its text and lowercase differ
    assert ngrams.word_keys([]).shape == (0, 2)
    with pytest.raises(TypeError):
        ngrams.word_keys(["not a doc"])


def test_prune_keeps_most_frequent_and_shrinks(tmp_path):
    nlp = trained()
    pipe = nlp.get_pipe("greenkd_textcat")
    table = pipe.model.attrs["ngrams"]
    n = len(table)
    top = table.ngrams[int(table.select(1)[0])]
    vector = pipe.model.layers[0].shims[0]._model.embed.weight[table.index[top]].detach().clone()
    assert pipe.prune_ngrams(n // 3) == n // 3
    new_table = pipe.model.attrs["ngrams"]
    assert len(new_table) == n // 3 and top in new_table.index
    module = pipe.model.layers[0].shims[0]._model
    assert module.embed.weight.shape[0] == n // 3
    assert numpy.allclose(module.embed.weight[new_table.index[top]].detach().numpy(), vector.numpy())
    nlp.to_disk(tmp_path / "pruned")
    assert len(spacy.load(tmp_path / "pruned").get_pipe("greenkd_textcat").model.attrs["ngrams"]) == n // 3


def test_kl_gradient_matches_finite_differences():
    nlp = trained(steps=0)
    pipe = nlp.get_pipe("greenkd_textcat")
    pipe.set_distill_settings(DistillSettings(temperature=2.0))
    rng = numpy.random.default_rng(0)
    teacher = rng.dirichlet([1, 1], size=3).astype("float32")
    logits = rng.normal(size=(3, 2)).astype("float64")
    loss, grad = pipe.get_teacher_student_loss(teacher, logits)
    eps = 1e-3
    for i in range(3):
        for j in range(2):
            bumped = logits.copy()
            bumped[i, j] += eps
            numeric = (pipe.get_teacher_student_loss(teacher, bumped)[0] - loss) / eps
            assert numeric == pytest.approx(grad[i, j], abs=2e-3)


def test_distill_from_spacy_textcat_teacher(tmp_path):
    teacher = spacy.blank("en")
    teacher.add_pipe("textcat")
    egs = examples(teacher)
    optimizer = teacher.initialize(lambda: egs)
    for _ in range(20):
        teacher.update(egs, sgd=optimizer)
    teacher.to_disk(tmp_path / "teacher")
    DocBin(docs=[eg.reference for eg in egs]).to_disk(tmp_path / "train.spacy")
    (tmp_path / "raw.txt").write_text("a great great film\nso dull and awful\n", encoding="utf8")
    config = spacy.util.load_config("configs/students/textcat_dan.cfg", interpolate=False)
    config["paths"].update({"train": str(tmp_path / "train.spacy"), "dev": str(tmp_path / "train.spacy"), "unlabeled": str(tmp_path / "raw.txt")})
    config["components"]["greenkd_textcat"]["model"].update(SMALL["model"])
    config["distillation"].update({"max_steps": 30, "eval_frequency": 10, "cache_dir": str(tmp_path / "cache")})
    config["distillation"]["optimizer"]["learn_rate"] = 0.01
    student, summary = distill(str(tmp_path / "teacher"), config, tmp_path / "out")
    assert summary["annotation"]["greenkd_textcat"]["docs"] == len(egs) + 2
    assert student.get_pipe("greenkd_textcat").labels == teacher.get_pipe("textcat").labels
    assert summary["training"]["best_score"] > 0.9
    assert (tmp_path / "out" / "model-best").exists()


@pytest.mark.parametrize("teacher_factory,student_factory", [
    ("greenkd_textcat", "greenkd_textcat"),  # a large DAN teaches a small one
    ("textcat_multilabel", "greenkd_textcat_multilabel"),  # spaCy's multilabel teaches ours
])
def test_dan_learns_from_a_dan_and_multilabel_from_spacys_multilabel(tmp_path, teacher_factory, student_factory):
    """Raw text only (no gold cats): what the student knows came from the teacher."""
    torch.manual_seed(0)
    if teacher_factory.startswith("greenkd"):
        teacher = trained(teacher_factory, steps=60)
    else:
        teacher = spacy.blank("en")
        teacher.add_pipe(teacher_factory)
        egs = examples(teacher)
        optimizer = teacher.initialize(lambda: egs)
        for _ in range(40):
            teacher.update(egs, sgd=optimizer)
    teacher_name = teacher.pipe_names[0]
    teacher.to_disk(tmp_path / "teacher")
    texts = sorted({t for t, _ in DATA})
    DocBin(docs=[teacher.make_doc(t) for t in texts]).to_disk(tmp_path / "raw.spacy")
    student = spacy.blank("en")
    student.add_pipe(student_factory, config=SMALL)
    config = distill_config(
        student, tmp_path / "raw.spacy", tmp_path / "cache", max_steps=80, gold_weight=0.0,
        student_to_teacher={student_factory: teacher_name},
        batcher={"@batchers": "spacy.batch_by_sequence.v1", "size": 4},
    )
    trained_student, summary = distill(str(tmp_path / "teacher"), config, tmp_path / "out")
    assert summary["annotation"][student_factory]["docs"] == len(texts)
    assert trained_student.get_pipe(student_factory).labels == teacher.get_pipe(teacher_name).labels
    for text in texts:
        want, got = teacher(text).cats, trained_student(text).cats
        assert max(got, key=got.get) == max(want, key=want.get)


def test_labeled_readers_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence\tlabel\ngood one\t1\nno label here\n", encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.tsv, line 3"):
        list(read_labeled(bad, "sst2"))
    trec = tmp_path / "t.label"
    trec.write_bytes("NUM:date When was it \xf0 ?\n".encode("latin-1"))
    assert list(read_labeled(trec, "trec")) == [("When was it \xf0 ?", "NUM")]


def test_augmented_transfer_set(tmp_path):
    """Variants differ from their text, are not empty, use only training words, are
    reproducible with the seed; the command writes them to a gzipped text file."""
    import gzip

    from greenkd_spacy.data.augment import Augmenter, word_class

    texts = [t.split() for t, _ in DATA[:6]] + [["What", "is", "the", "capital", "of", "Peru", "?"]]
    vocab = {w for words in texts for w in words}
    first = [Augmenter(texts, seed=3).variants(words, 5) for words in texts]
    assert first == [Augmenter(texts, seed=3).variants(words, 5) for words in texts]
    aug = Augmenter(texts, p_mask=0.0, p_replace=1.0, p_ngram=0.0, seed=0)
    for words in texts:
        for variant in aug.variants(words, 3):
            assert len(variant) == len(words) and variant != words
            assert [word_class(w) for w in variant] == [word_class(w) for w in words]
    for variants, words in zip(first, texts):
        assert all(v and v != words and set(v) <= vocab for v in variants)
        assert len(variants) == len({tuple(v) for v in variants}) <= 5
    with pytest.raises(ValueError, match="p_mask"):
        Augmenter(texts, p_mask=1.5)
    source = tmp_path / "train.txt"
    source.write_text("\n".join(t for t, _ in DATA[:6]) + "\n", encoding="utf8")
    out = tmp_path / "transfer.txt.gz"
    result = CliRunner().invoke(app, ["augment-text", str(source), str(out), "-n", "3"])
    assert result.exit_code == 0, result.output
    lines = gzip.open(out, "rt", encoding="utf8").read().splitlines()
    assert 6 <= len(lines) <= 18 and all(line.strip() for line in lines)


def test_split_text_writes_tokenised_sentences(tmp_path):
    """IMDB-style JSONL reviews become one lowercased, tokenised sentence a line: markup
    gone, too short and too long sentences dropped, --limit respected."""
    import gzip
    import json

    from greenkd_spacy.data.sentences import iter_sentences

    reviews = [
        "I didn't like it.<br /><br />The Plot was thin, the acting worse. Ok.",
        "Great fun! " + "very " * 80 + "long.",
    ]
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    assert list(iter_sentences(nlp, reviews)) == [
        "i did n't like it .", "the plot was thin , the acting worse .", "great fun !"
    ]
    assert list(iter_sentences(nlp, reviews, lowercase=False, min_words=1))[2] == "Ok ."
    with pytest.raises(ValueError, match="min_words"):
        list(iter_sentences(nlp, reviews, min_words=5, max_words=2))
    source = tmp_path / "unsup.jsonl.gz"
    with gzip.open(source, "wt", encoding="utf8") as file_:
        file_.writelines(json.dumps({"id": i, "text": text}) + "\n" for i, text in enumerate(reviews))
    out = tmp_path / "sentences.txt.gz"
    # In-process: the command's behaviour, not spaCy's start-up (test_registry checks the
    # commands are on `python -m spacy`).
    runner = CliRunner()
    result = runner.invoke(app, ["split-text", str(source), str(out), "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert gzip.open(out, "rt", encoding="utf8").read().splitlines() == [
        "i did n't like it .", "the plot was thin , the acting worse ."
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    again = tmp_path / "again.txt.gz"
    assert runner.invoke(app, ["split-text", str(source), str(again), "--limit", "2"]).exit_code == 0
    assert again.read_bytes() == out.read_bytes()  # reproducible bytes, gzip header included
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine."}\n{"body": "no text field"}\n', encoding="utf8")
    result = runner.invoke(app, ["split-text", str(bad), str(tmp_path / "bad.txt")])
    # wasabi wraps the message at the terminal width, which a long tmp path can move.
    assert result.exit_code == 1 and "line 2" in " ".join(result.output.split())
    assert not (tmp_path / "bad.txt").exists()


def test_bench_textcat_scores_each_text_once_and_times_enough_docs():
    from greenkd_spacy.bench import bench_textcat

    nlp = trained()
    texts = [t for t, _ in DATA[:6]]
    gold = [label for _, label in DATA[:6]]
    gold[0] = "neg"  # one wrong gold label: accuracy must be 5/6, not inflated by the repeats
    row = bench_textcat(nlp, texts, gold, batch_sizes=(2, 1000), repeats=1, min_docs=50)
    assert row["accuracy"] == pytest.approx(100 * 5 / 6, abs=0.01)
    assert row["docs"] == 6 and row["timed_docs"] >= 50
    assert set(row["docs_per_second_by_batch"]) == {"2", "1000"} and row["docs_per_second"] > 0


def test_class_scores_and_macro_f1_count_every_gold_class():
    from greenkd_spacy.bench import class_scores

    scores = class_scores(["a", "a", "b", None], ["a", "b", "b", "c"])
    assert scores["a"] == {"p": 50.0, "r": 100.0, "f": 66.67, "support": 1}
    assert scores["b"]["r"] == 50.0 and scores["c"] == {"p": 0.0, "r": 0.0, "f": 0.0, "support": 1}


def test_key_index_probes_past_collisions():
    """Keys whose low bits agree all start at one slot: each must still be found, at its
    own row; a duplicated key answers with its first row; absent keys give -1."""
    from greenkd_spacy.models.ngrams import KeyIndex

    keys = numpy.array([(i << 20) | 5 for i in range(40)] + [7, 7 << 20, 7], dtype="uint64")
    index = KeyIndex(keys)
    rows = index.lookup(keys)
    assert rows[:42].tolist() == list(range(42)) and rows[42] == 40
    absent = numpy.array([(99 << 20) | 5, 6, 0], dtype="uint64")
    assert index.lookup(absent).tolist() == [-1, -1, -1]
    assert KeyIndex(numpy.zeros(0, dtype="uint64")).lookup(keys).tolist() == [-1] * len(keys)


def test_convert_keeps_n_labels_and_writes_the_rest_as_raw_text(tmp_path):
    """--labeled N: the few-labels setting of the quickstart, from any labeled file."""
    import gzip

    from typer.testing import CliRunner

    from greenkd_spacy.cli.app import app

    lines = [f"{c}:x question number {i} ?" for i, c in enumerate(["NUM", "HUM", "LOC"] * 10)]
    (tmp_path / "t.label").write_text("\n".join(lines) + "\n", encoding="latin-1")
    out, rest = tmp_path / "train.spacy", tmp_path / "rest.txt.gz"
    args = ["convert-textcat", str(tmp_path / "t.label"), str(out), "-f", "trec",
            "--dev-output", str(tmp_path / "dev.spacy"), "--dev-fraction", "0.1"]
    result = CliRunner().invoke(app, args + ["--labeled", "7", "--unlabeled-output", str(rest)])
    assert result.exit_code == 0, result.output
    nlp = spacy.blank("en")
    labeled = [doc.text for doc in DocBin().from_disk(out).get_docs(nlp.vocab)]
    dev = [doc.text for doc in DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab)]
    raw = gzip.open(rest, "rt", encoding="utf8").read().splitlines()
    assert (len(labeled), len(dev), len(raw)) == (7, 3, 20)
    assert sorted(labeled + dev + raw) == sorted(line.split(" ", 1)[1] for line in lines)
    # --labeled without a place for the rest, or leaving nothing unlabeled, is refused.
    assert CliRunner().invoke(app, args + ["--labeled", "7"]).exit_code == 1
    too_many = CliRunner().invoke(app, args + ["--labeled", "27", "--unlabeled-output", str(rest)])
    assert too_many.exit_code == 1 and "nothing unlabeled" in too_many.output


def test_render_table_counts_the_teacher_in_a_distilled_rows_cpu():
    from benchmarks import render_table

    rows = [
        {"system": "teacher", "docs_per_second": 10.0, "train_cpu_seconds": 100.0},
        {"system": "student", "docs_per_second": 500.0, "train_cpu_seconds": 5.0, "teacher_annotation_cpu_seconds": 20.0},
        {"system": "bow", "docs_per_second": 250.0, "train_cpu_seconds": 3.0},
    ]
    derived = {row["system"]: row for row in render_table.add_derived(rows, baseline="bow", teacher="teacher")}
    assert derived["student"]["cpu_in_all"] == 125.0 and derived["bow"]["cpu_in_all"] == 3.0
    assert derived["student"]["speed_ratio"] == "2.00x" and derived["teacher"]["speed_ratio"] == "0.0400x"


def test_whole_text_split_holds_out_sentences_whose_phrases_leave_training():
    """SST-2 style data labels every phrase of a sentence: the held-out texts are whole
    ones, nothing of them stays in training, and what is not inside them stays."""
    from greenkd_spacy.data.heldout import whole_text_split

    texts = [
        "a gorgeous , witty , seductive movie .", "witty , seductive movie", "seductive",
        "gorgeous", "the plot is thin", "the plot", "thin", "a dull film", "dull", "film",
        "seductive  movie", "movie",
    ]
    held, dropped = whole_text_split(texts, 0.5, seed=1)
    whole = {0, 4, 7}  # no other text contains these (10 sits inside 0 despite its spaces)
    assert set(held) <= whole and len(held) == 2 and not set(held) & set(dropped)
    kept = [t for i, t in enumerate(texts) if i not in held and i not in dropped]
    for i in held:
        padded = f" {' '.join(texts[i].split())} "
        assert not any(f" {' '.join(t.split())} " in padded for t in kept)
        assert not any(padded in f" {' '.join(t.split())} " for t in kept)
    # everything not inside a held-out text is kept
    for i, text in enumerate(texts):
        if i not in held and i not in dropped:
            continue
        assert i in held or any(f" {' '.join(text.split())} " in f" {texts[j]} " for j in held)


def test_convert_with_whole_texts_held_out(tmp_path):
    """--dev-whole-texts on SST-2 style phrases: the held-out docs are whole sentences and
    none of their phrases is trained on; without --dev-output it is refused."""
    from typer.testing import CliRunner

    from greenkd_spacy.cli.app import app

    rows = [("a gorgeous , witty movie .", 1), ("witty movie", 1), ("gorgeous", 1), ("a dull , flat film .", 0),
            ("flat film", 0), ("dull", 0), ("the cast is fine .", 1), ("fine", 1)]
    (tmp_path / "t.tsv").write_text("sentence\tlabel\n" + "".join(f"{t}\t{l}\n" for t, l in rows), encoding="utf8")
    args = ["convert-textcat", str(tmp_path / "t.tsv"), str(tmp_path / "train.spacy"), "-f", "sst2"]
    result = CliRunner().invoke(app, args + ["--dev-output", str(tmp_path / "dev.spacy"), "--dev-fraction", "0.34", "--dev-whole-texts"])
    assert result.exit_code == 0, result.output
    nlp = spacy.blank("en")
    train = [doc.text for doc in DocBin().from_disk(tmp_path / "train.spacy").get_docs(nlp.vocab)]
    dev = [doc.text for doc in DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab)]
    assert len(dev) == 1 and dev[0] in {rows[0][0], rows[3][0], rows[6][0]}
    assert not any(f" {text} " in f" {dev[0]} " for text in train)
    assert len(train) + len(dev) + sum(f" {t} " in f" {dev[0]} " for t, _ in rows if t != dev[0]) == len(rows)
    refused = CliRunner().invoke(app, args + ["--dev-whole-texts"])
    assert refused.exit_code == 1 and "--dev-output" in refused.output


def test_prune_cli_writes_into_a_new_nested_directory(tmp_path):
    """`spacy greenkd-prune-textcat MODEL training/x/model-best` creates training/x as
    `spacy train --output` would (project.yml's prune-textcat-default writes there)."""
    from typer.testing import CliRunner

    from greenkd_spacy.cli import app

    trained().to_disk(tmp_path / "model")
    out = tmp_path / "new" / "deeper" / "model-best"
    result = CliRunner().invoke(app, ["prune-textcat", str(tmp_path / "model"), str(out), "--keep", "0.5"])
    assert result.exit_code == 0, result.output
    n = len(spacy.load(tmp_path / "model").get_pipe("greenkd_textcat").model.attrs["ngrams"])
    assert len(spacy.load(out).get_pipe("greenkd_textcat").model.attrs["ngrams"]) == round(0.5 * n)


def test_prune_on_a_full_disk_names_the_path_and_keeps_the_earlier_output(tmp_path, monkeypatch):
    import errno

    from spacy.language import Language
    from typer.testing import CliRunner

    from greenkd_spacy.cli import app

    trained().to_disk(tmp_path / "model")
    out = tmp_path / "pruned"
    trained().to_disk(out)  # an earlier output
    before = sorted(path.name for path in out.iterdir())
    real_to_disk = Language.to_disk

    def full_disk(self, path, *args, **kwargs):
        real_to_disk(self, path, *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Language, "to_disk", full_disk)
    result = CliRunner().invoke(app, ["prune-textcat", str(tmp_path / "model"), str(out), "--keep", "0.5"])
    assert result.exit_code == 1 and "Could not write" in result.output and "No space left" in result.output
    assert sorted(path.name for path in out.iterdir()) == before
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


def _vectors_nlp():
    """A blank English pipeline whose static vectors put words of one class together
    and leave "film" and "dull", the words the tests need unseen in training, in them."""
    nlp = spacy.blank("en")
    good, bad = numpy.array([1.0, 0.0, 0.5], dtype="float32"), numpy.array([0.0, 1.0, 0.5], dtype="float32")
    for word in ("great", "loved", "wonderful", "superb"):
        nlp.vocab.set_vector(word, good)
    for word in ("terrible", "awful", "hated", "dreadful"):
        nlp.vocab.set_vector(word, bad)
    return nlp


@pytest.mark.parametrize("architecture", [
    {"@architectures": "greenkd.DAN.v3", **SMALL_V2, "ngram_size": 2, "include_static_vectors": True},
    {"@architectures": "greenkd.NgramLinear.v2", "max_ngrams": 500, "include_static_vectors": True},
])
def test_static_vectors_carry_what_the_ngrams_never_saw_and_round_trip(architecture, tmp_path):
    """With include_static_vectors the model reads each doc's mean vector: a doc of
    words absent from training but near its words in the vectors is classed by them,
    the saved pipeline predicts the same, and the module's shape follows the vectors."""
    spacy.util.fix_random_seed(0)
    nlp = _vectors_nlp()
    nlp.add_pipe("greenkd_textcat", config={"model": architecture})
    egs = examples(nlp)
    optimizer = nlp.initialize(lambda: egs)
    optimizer.learn_rate = 0.05
    for _ in range(60):
        nlp.update(egs, sgd=optimizer)
    pipe = nlp.get_pipe("greenkd_textcat")
    assert dan_module(pipe.model).vectors_width == 3 and pipe.cfg["vectors_width"] == 3
    # "superb" and "dreadful" never occur in DATA: only their vectors can tell them apart.
    assert nlp("superb").cats["pos"] > 0.6 and nlp("dreadful").cats["neg"] > 0.6
    # A word with no vector and no n-gram leaves the model at its prior, not an error.
    assert sum(nlp("zzz").cats.values()) == pytest.approx(1.0)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    for text in ("superb", "a great film , dreadful", ""):
        assert loaded(text).cats == pytest.approx(nlp(text).cats)


def test_static_vectors_without_vectors_say_how_to_load_them():
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.NgramLinear.v2", "include_static_vectors": True}})
    egs = examples(nlp)
    with pytest.raises(ValueError, match=r"\[initialize\] vectors"):
        nlp.initialize(lambda: egs)


def test_mean_vectors_find_words_by_text_then_lowercase():
    from greenkd_spacy.models.dan import mean_vectors

    nlp = spacy.blank("en")
    nlp.vocab.set_vector("paris", numpy.array([2.0, 0.0], dtype="float32"))
    nlp.vocab.set_vector("Rome", numpy.array([0.0, 4.0], dtype="float32"))
    nlp.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.NgramLinear.v2", "include_static_vectors": True}})
    model = nlp.get_pipe("greenkd_textcat").model
    model.attrs["vectors_width"] = 2
    docs = [nlp.make_doc("Paris and Rome"), nlp.make_doc(""), nlp.make_doc("rome zzz")]
    means = mean_vectors(model, docs)
    # "Paris" by its lowercase form, "Rome" by its text, "and" has none: mean of two rows.
    assert means.tolist() == [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    # A key added to an existing row (the table keeps its shape) is found on the next batch.
    nlp.vocab.vectors.add("zzz", row=nlp.vocab.vectors.find(key="paris"))
    assert mean_vectors(model, docs[2:]).tolist() == [[2.0, 0.0]]


def test_static_vectors_in_floret_mode_are_refused_not_read_as_zeros():
    from spacy.vectors import Vectors

    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, mode="floret", data=numpy.ones((10, 4), dtype="float32"),
                                hash_count=1)
    nlp.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.NgramLinear.v2", "include_static_vectors": True}})
    egs = examples(nlp)
    with pytest.raises(ValueError, match="'floret' mode"):
        nlp.initialize(lambda: egs)
