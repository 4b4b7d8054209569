"""greenkd_parser as a spaCy component."""
import copy
import time

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from greenkd_spacy.decoding.mst import is_tree

from .util import SENTENCES, SMALL_PARSER, make_examples, train


def new_parser(model=None, **cfg):
    nlp = spacy.blank("en")
    config = {"model": copy.deepcopy(model or SMALL_PARSER)}
    config.update(cfg)
    nlp.add_pipe("greenkd_parser", config=config)
    return nlp


@pytest.fixture(scope="module")
def trained():
    nlp = new_parser()
    examples = make_examples(nlp)
    loss = train(nlp, examples)
    return nlp, loss


def gold_of(doc):
    return [t.head.i for t in doc], [t.dep_ for t in doc]


def parse(nlp, words, pos=None):
    return nlp(Doc(nlp.vocab, words=words, pos=pos))


def test_overfits_two_sentences(trained):
    nlp, loss = trained
    assert loss < 0.05
    for words, heads, deps, pos in SENTENCES:
        doc = parse(nlp, words, pos)
        assert gold_of(doc) == (heads, deps)
        assert len(list(doc.sents)) == 1


def test_initialize_needs_dependency_annotation():
    nlp = new_parser()
    examples = [Example(Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["a", "b"]))]
    with pytest.raises(ValueError, match="E003"):
        nlp.initialize(lambda: examples)


def test_initialize_rejects_bad_get_examples():
    nlp = new_parser()
    with pytest.raises(TypeError):
        nlp.get_pipe("greenkd_parser").initialize(lambda: [])  # no examples at all


def test_labels_and_root_label(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("greenkd_parser")
    assert "nsubj" in parser.labels and parser.cfg["root_label"] == "ROOT"


def test_bytes_round_trip(trained):
    nlp, _ = trained
    words, heads, deps, pos = SENTENCES[1]
    expected = gold_of(parse(nlp, words, pos))
    nlp2 = new_parser()
    nlp2.from_bytes(nlp.to_bytes())
    assert gold_of(parse(nlp2, words, pos)) == expected
    parser2 = nlp2.get_pipe("greenkd_parser")
    parser = nlp.get_pipe("greenkd_parser")
    parser2_bytes = parser.to_bytes()
    parser2.from_bytes(parser2_bytes)
    assert parser2.labels == parser.labels


def test_disk_round_trip_with_spacy_load(trained, tmp_path):
    nlp, _ = trained
    words, heads, deps, pos = SENTENCES[0]
    expected = gold_of(parse(nlp, words, pos))
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert gold_of(parse(loaded, words, pos)) == expected
    fresh = new_parser()
    fresh.get_pipe("greenkd_parser").from_disk(tmp_path / "model" / "greenkd_parser", exclude=["vocab"])
    assert fresh.get_pipe("greenkd_parser").labels == nlp.get_pipe("greenkd_parser").labels


def test_empty_and_one_token_docs(trained):
    nlp, _ = trained
    assert len(nlp("")) == 0
    docs = list(nlp.pipe(["", "   ", "Hi", ""]))
    assert [len(doc) for doc in docs] == [0, 1, 1, 0]
    assert docs[1][0].head.i == 0 and docs[2][0].head.i == 0  # one-token docs are their own root
    doc = nlp("Hello")
    assert doc[0].head.i == 0 and doc[0].dep_ == "ROOT"


def test_a_long_sentence_the_doc_was_given_warns_without_advising_a_senter(trained):
    nlp, _ = trained
    words = ["green", "eggs", "like", "I"] * 100
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))
    parser = nlp.get_pipe("greenkd_parser")
    max_len = parser.cfg["max_sentence_length"]
    with pytest.warns(UserWarning, match="W005") as caught:
        doc = parser(doc)
    assert not any("W001" in str(w.message) for w in caught)
    assert all(len(sent) <= max_len for sent in doc.sents)


def test_long_doc_without_boundaries_is_bounded(trained):
    nlp, _ = trained
    words = ["green", "eggs", "like", "I"] * 1250  # 5,000 tokens, no punctuation
    doc = Doc(nlp.vocab, words=words)
    start = time.perf_counter()
    with pytest.warns(UserWarning, match="W001"):
        doc = nlp(doc)
    assert time.perf_counter() - start < 60
    max_len = nlp.get_pipe("greenkd_parser").cfg["max_sentence_length"]
    sents = list(doc.sents)
    assert len(sents) >= len(words) // max_len
    for sent in sents:
        assert len(sent) <= max_len
        roots = [t for t in sent if t.head.i == t.i]
        assert len(roots) == 1


def test_trees_are_well_formed_per_sentence(trained):
    nlp, _ = trained
    doc = nlp("I like eggs. She ate the pizza with anchovies. Green eggs!")
    assert len(list(doc.sents)) == 3
    for sent in doc.sents:
        heads = [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
        assert is_tree(heads, single_root=True)
        assert all(sent.start <= t.head.i < sent.end for t in sent)


def test_respects_sentencizer_in_front(trained):
    nlp, _ = trained
    nlp2 = new_parser()
    nlp2.from_bytes(nlp.to_bytes())
    nlp2.add_pipe("sentencizer", first=True, config={"punct_chars": [";"]})
    doc = nlp2("I like eggs ; she ate pizza . with anchovies")
    starts = [s.start for s in doc.sents]
    assert starts == [0, 4]


def test_unknown_gold_label_is_skipped_not_fatal(trained):
    nlp, _ = trained
    reference = Doc(nlp.vocab, words=["I", "ran"], heads=[1, 1], deps=["weird", "ROOT"])
    losses = nlp.update([Example(Doc(nlp.vocab, words=["I", "ran"]), reference)])
    assert numpy.isfinite(losses["greenkd_parser"])


def test_spacy_cnn_tok2vec_as_encoder():
    model = copy.deepcopy(SMALL_PARSER)
    model["tok2vec"] = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 32,
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [500, 100, 100, 50],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 32,
            "depth": 2,
            "window_size": 1,
            "maxout_pieces": 3,
        },
    }
    nlp = new_parser(model)
    examples = make_examples(nlp, copy_pos=False)
    loss = train(nlp, examples, steps=120)
    assert loss < 0.2
    words, heads, deps, _ = SENTENCES[0]
    assert gold_of(parse(nlp, words)) == (heads, deps)


def test_listener_encoder_shares_a_tok2vec():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "tok2vec",
        config={
            "model": {
                "@architectures": "spacy.HashEmbedCNN.v2",
                "width": 32,
                "depth": 1,
                "embed_size": 300,
                "window_size": 1,
                "maxout_pieces": 2,
                "subword_features": True,
                "pretrained_vectors": None,
            }
        },
    )
    model = copy.deepcopy(SMALL_PARSER)
    model["tok2vec"] = {"@architectures": "spacy.Tok2VecListener.v1", "width": 32, "upstream": "*"}
    nlp.add_pipe("greenkd_parser", config={"model": model})
    examples = make_examples(nlp, copy_pos=False)
    train(nlp, examples, steps=60)
    words, heads, deps, _ = SENTENCES[0]
    doc = nlp(Doc(nlp.vocab, words=words))
    assert [t.head.i for t in doc] == heads and [t.dep_ for t in doc] == deps


def test_bilstm_context_over_a_listener_learns_and_round_trips(tmp_path):
    """The parser reads a shared CNN tok2vec through a BiLSTM of its own; the gradient
    reaches the shared tok2vec through the listener, and the model saves and loads."""
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "tok2vec",
        config={
            "model": {
                "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 1, "embed_size": 300,
                "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
            }
        },
    )
    model = copy.deepcopy(SMALL_PARSER)
    model["tok2vec"] = {
        "@architectures": "greenkd.BiLSTMContext.v1", "hidden_width": 16, "depth": 1, "dropout": 0.0,
        "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 32, "upstream": "*"},
    }
    nlp.add_pipe("greenkd_parser", config={"model": model})
    examples = make_examples(nlp, copy_pos=False)
    train(nlp, examples, steps=80)
    embed = nlp.get_pipe("tok2vec").model.get_ref("embed")
    before = [node.get_param("E").copy() for node in embed.walk() if node.has_param("E")]
    nlp.update(examples, sgd=nlp.create_optimizer())
    after = [node.get_param("E") for node in embed.walk() if node.has_param("E")]
    assert any(not numpy.allclose(b, a) for b, a in zip(before, after))
    words, heads, deps, _ = SENTENCES[0]
    doc = nlp(Doc(nlp.vocab, words=words))
    assert [t.head.i for t in doc] == heads and [t.dep_ for t in doc] == deps
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    doc2 = nlp2(Doc(nlp2.vocab, words=words))
    assert [t.head.i for t in doc2] == heads and [t.dep_ for t in doc2] == deps


def test_bilstm_context_needs_a_width_below_it():
    from greenkd_spacy.models.encoder import build_bilstm_context
    from thinc.api import Model

    with pytest.raises(ValueError, match="no output width"):
        build_bilstm_context(Model("no-width", lambda model, X, is_train: (X, lambda d: d)))


def test_multiprocess_pipe_matches_single_process(trained):
    nlp, _ = trained
    texts = ["I like green eggs.", "She ate the pizza with anchovies.", "Green eggs!"] * 4
    single = [gold_of(doc) for doc in nlp.pipe(texts)]
    multi = [gold_of(doc) for doc in nlp.pipe(texts, n_process=2, batch_size=3)]
    assert single == multi


def test_scorer_reports_uas_and_las(trained):
    nlp, _ = trained
    examples = make_examples(nlp)
    scores = nlp.evaluate(examples)
    assert scores["dep_uas"] == pytest.approx(1.0)
    assert scores["dep_las"] == pytest.approx(1.0)
    assert "dep_las_per_type" in scores


def test_bad_max_sentence_length():
    with pytest.raises(ValueError, match="E006"):
        new_parser(max_sentence_length=0)


def test_warns_once_when_a_pos_reading_parser_gets_no_pos():
    """Trained with gold UPOS (SMALL_ENCODER has pos_width 8) and run on docs without
    POS, with no tagger in front: W003 says so, once; docs with POS give no warning, and
    a parser that reads no POS never warns."""
    import warnings

    nlp = new_parser()
    train(nlp, make_examples(nlp), steps=5)
    words, _, _, pos = SENTENCES[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse(nlp, words, pos)
        assert not [w for w in caught if "W003" in str(w.message)]
        parse(nlp, words)
        parse(nlp, words)
    assert len([w for w in caught if "W003" in str(w.message)]) == 1
    model = copy.deepcopy(SMALL_PARSER)
    model["tok2vec"]["pos_width"] = 0
    no_pos = new_parser(model)
    train(no_pos, make_examples(no_pos, copy_pos=False), steps=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse(no_pos, words)
    assert not [w for w in caught if "W003" in str(w.message)]


def test_default_model_is_the_small_cpu_first_one():
    """`add_pipe("greenkd_parser")` gives the CPU-first default, not the
    paper's 3 x 400 model with a POS input: no POS needed, a 1 x 64 BiLSTM over spaCy's
    hash-embedding CNN, a 128-d arc MLP."""
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("greenkd_parser")
    encoder = parser.model.layers[0]
    assert encoder.name == "greenkd_bilstm_context"
    assert encoder.attrs["reads_pos"] is False
    assert encoder.get_dim("nO") == 128
    assert parser.model.attrs["arc_mlp_size"] == 128
    names = [layer.name for layer in encoder.walk()]
    assert any("hashembed" in name for name in names) and any("maxout" in name for name in names)


def test_summed_loss_is_the_mean_times_the_scored_tokens():
    """normalize_loss=False (for a tok2vec shared with spaCy's components) sums the loss
    and gradient, on gold and on a teacher's distributions, where the default averages
    them: same direction, n times the size."""
    from greenkd_spacy.types import ParserInput

    nlp = new_parser(normalize_loss=False)
    parser = nlp.get_pipe("greenkd_parser")
    assert parser.cfg["normalize_loss"] is False
    examples = make_examples(nlp, copy_pos=True)
    nlp.initialize(lambda: examples)
    segments, gold = parser._gold(examples)
    scores = parser.model.predict(ParserInput([eg.predicted for eg in examples], segments, gold[0]))
    total, (d_arc_sum, d_label_sum) = parser._loss(scores, gold)
    parser.cfg["normalize_loss"] = True
    mean, (d_arc_mean, d_label_mean) = parser._loss(scores, gold)
    n = int((gold[0] >= 0).sum())
    assert n > 0 and total == pytest.approx(mean * n, rel=1e-4)
    numpy.testing.assert_allclose(d_arc_sum, d_arc_mean * n, rtol=1e-4, atol=1e-6)
    numpy.testing.assert_allclose(d_label_sum, d_label_mean * n, rtol=1e-4, atol=1e-6)
    # The KL on a teacher's distributions (here: random ones) scales the same way.
    from greenkd_spacy.types import ParserTargets

    rng = numpy.random.default_rng(0)
    teacher = ParserTargets(
        numpy.log(rng.dirichlet(numpy.ones(scores.arc_logits.shape[-1]), scores.arc_logits.shape[:2])),
        numpy.log(rng.dirichlet(numpy.ones(scores.label_logits.shape[-1]), scores.label_logits.shape[:2])),
        gold[0],
    )
    kl_mean, (k_arc_mean, _) = parser.get_teacher_student_loss(teacher, scores)
    parser.cfg["normalize_loss"] = False
    kl_sum, (k_arc_sum, _) = parser.get_teacher_student_loss(teacher, scores)
    tokens = int(sum(scores.lengths))
    assert kl_mean > 0 and kl_sum == pytest.approx(kl_mean * tokens, rel=1e-4)
    numpy.testing.assert_allclose(k_arc_sum, k_arc_mean * tokens, rtol=1e-4, atol=1e-6)


def test_shape_embedding_widens_the_encoder_input():
    from greenkd_spacy.models.encoder import build_bilstm_encoder

    plain = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1)
    shaped = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1, shape_width=6)
    lstm_in = lambda model: model.layers[-1].get_dim("nI")  # noqa: E731
    assert lstm_in(shaped) == lstm_in(plain) + 6 == 8 + 2 * 4 + 6
    docs = [spacy.blank("en")("Apple sold 12 Apples")]
    shaped.initialize(X=docs)
    (vectors,) = shaped.predict(docs)
    assert vectors.shape == (4, 16)


def test_subword_embedding_gives_an_unseen_word_a_vector_from_its_spelling(tmp_path):
    """With subword_width, the encoder also reads the mean of a word's character n-gram
    rows: two words that share no hashed NORM row but most of their spelling get close
    subword vectors, and a saved encoder reads the same rows back."""
    from greenkd_spacy.models.encoder import build_bilstm_encoder

    plain = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1)
    sub = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1, subword_width=6, subword_rows=500)
    lstm_in = lambda model: model.layers[-1].get_dim("nI")  # noqa: E731
    assert lstm_in(sub) == lstm_in(plain) + 6
    nlp = spacy.blank("en")
    docs = [nlp("unbelievable unbelievably zebra")]
    sub.initialize(X=docs)
    (vectors,) = sub.predict(docs)
    assert vectors.shape == (3, 16)
    subwords = next(node for node in sub.walk() if node.name == "subword_embed")
    (rows,) = subwords.predict(docs)
    near, far = numpy.linalg.norm(rows[0] - rows[1]), numpy.linalg.norm(rows[0] - rows[2])
    assert near < far
    loaded = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1, subword_width=6, subword_rows=500)
    loaded.initialize(X=docs)
    loaded.from_bytes(sub.to_bytes())
    numpy.testing.assert_allclose(loaded.predict(docs)[0], vectors, rtol=1e-6)


def test_word_dropout_hides_whole_word_embeddings_in_training_only():
    from greenkd_spacy.models.encoder import build_bilstm_encoder, row_dropout

    layer = row_dropout(0.5, 4)
    X = numpy.ones((2000, 4), dtype="float32")
    Y, backprop = layer(X, is_train=True)
    dropped = (Y == 0).all(axis=1)
    assert ((Y == 0) | (Y == 1)).all()  # whole rows, unscaled
    assert 0.4 < dropped.mean() < 0.6
    assert (backprop(numpy.ones_like(X))[dropped] == 0).all()
    assert (layer.predict(X) == X).all()
    with pytest.raises(ValueError, match="word_dropout"):
        build_bilstm_encoder(word_dropout=1.0)
    encoder = build_bilstm_encoder(word_width=8, affix_width=4, pos_width=0, hidden_width=8, depth=1, word_dropout=0.2)
    docs = [spacy.blank("en")("Apple sold 12 Apples")]
    encoder.initialize(X=docs)
    (vectors,) = encoder.predict(docs)
    assert vectors.shape == (4, 16)
    # spaCy's [training] dropout sets "dropout_rate" attrs; the word dropout keeps its own rate
    from thinc.api import set_dropout_rate

    set_dropout_rate(encoder, 0.0)
    assert [n.attrs["word_dropout_rate"] for n in encoder.walk() if "word_dropout_rate" in n.attrs] == [0.2]


def test_factory_default_encoder_is_the_shipped_default_pipelines():
    """nlp.add_pipe("greenkd_parser") gets the model configs/defaults/parser.cfg trains (the
    one the benchmarks chose): the same scorer and BiLSTM over the same CNN, which the
    shipped pipeline shares with its tagger as a `tok2vec` component."""
    from pathlib import Path

    from spacy.util import load_config, registry

    shipped = load_config(Path(__file__).parent.parent / "configs" / "defaults" / "parser.cfg", interpolate=False)
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_parser")
    own = nlp.config["components"]["greenkd_parser"]["model"]
    shipped_parser = shipped["components"]["greenkd_parser"]["model"]

    def settings(block):
        return {k: v for k, v in block.items() if not isinstance(v, dict) and k != "nO"}

    assert settings(own) == settings(shipped_parser)
    assert settings(own["tok2vec"]) == settings(shipped_parser["tok2vec"])
    filled = lambda block: registry.fill({"x": block})["x"]  # noqa: E731
    assert filled(own["tok2vec"]["tok2vec"]) == filled(shipped["components"]["tok2vec"]["model"])


def test_arc_scores_masked_and_decoded_per_chunk_match_the_whole_batch():
    """The head masks and decodes sentences in chunks of similar length; every arc
    score, every masked arc and every decoded tree must be those of the padded batch
    scored, masked and decoded whole."""
    import torch

    from greenkd_spacy.decoding.mst import decode_batch
    from greenkd_spacy.models.parser import decode_trees
    from greenkd_spacy.models.pytorch.biaffine import MASK_VALUE, BiaffineParserModule

    torch.manual_seed(0)
    module = BiaffineParserModule(8, 6, 4, 3, 0.0, decoder=decode_trees, chunk_size=2)
    module.eval()
    for param in module.parameters():
        torch.nn.init.normal_(param)
    lengths = [5, 1, 7, 3, 0, 2, 7]
    max_len = max(lengths)
    index = numpy.full((len(lengths), max_len), -1, dtype="int64")
    start = 0
    for s, n in enumerate(lengths):
        index[s, :n] = numpy.arange(start, start + n)
        start += n
    flat = torch.randn(start, 8)
    with torch.no_grad():
        arc_logits, _, heads = module(flat, torch.from_numpy(index), None)
        dep = module.arc_attn.project_x(module.arc_dep(flat))
        nodes = module.arc_head(torch.cat((module.root.unsqueeze(0), flat)))
    for s, n in enumerate(lengths):
        rows = index[s, :n]
        expected = numpy.full((max_len, max_len + 1), MASK_VALUE, dtype="float32")
        if n:
            sentence_nodes = nodes[numpy.concatenate(([0], rows + 1))]
            block = (dep[rows] @ sentence_nodes.T).numpy()
            block[numpy.arange(n), numpy.arange(n) + 1] = MASK_VALUE
            expected[:n, : n + 1] = block
        numpy.testing.assert_allclose(arc_logits[s].numpy(), expected, rtol=1e-5, atol=1e-4)
    numpy.testing.assert_array_equal(heads.numpy(), decode_batch(arc_logits.numpy(), lengths))
    # Without the padded arc scores (what the component's predict asks for): the same
    # trees and labels.
    with torch.no_grad():
        no_arcs, labels_only, heads_only = module(flat, torch.from_numpy(index), None, False)
        _, label_logits, _ = module(flat, torch.from_numpy(index), None)
    assert tuple(no_arcs.shape) == (0, 0, 1)
    assert torch.equal(heads_only, heads)
    assert torch.equal(labels_only, label_logits)


def test_label_pairs_in_blocks_match_one_product_and_backpropagate_alike():
    import torch

    from greenkd_spacy.models.pytorch.biaffine import Biaffine

    torch.manual_seed(0)
    biaffine = Biaffine(5, 4, bias_x=True, bias_y=True)
    torch.nn.init.normal_(biaffine.weight)
    x = torch.randn(11, 5, requires_grad=True)
    y = torch.randn(11, 5)
    whole = biaffine.pairs(x, y, block=100)
    blocked = biaffine.pairs(x, y, block=3)
    reference = torch.einsum("ni,oij,nj->no", torch.cat((x, torch.ones(11, 1)), 1), biaffine.weight, torch.cat((y, torch.ones(11, 1)), 1))
    torch.testing.assert_close(whole, reference)
    torch.testing.assert_close(blocked, reference)
    (grad_whole,) = torch.autograd.grad(whole.sum(), x)
    (grad_blocked,) = torch.autograd.grad(blocked.sum(), x)
    torch.testing.assert_close(grad_blocked, grad_whole)
    assert biaffine.pairs(x[:0], y[:0]).shape == (0, 4)


def test_bilstm_gathers_its_packed_batch_as_torch_packs_sequences():
    """StackedBiLSTM packs its batch by one gather and unpacks it by another (their
    backward passes scatter-adds, where the backward of torch's pad_sequence is
    quadratic in the number of sequences): the same outputs and input gradients as
    packing the sequences with torch, empty ones left out, ties in length kept apart."""
    import torch
    from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

    from greenkd_spacy.models.pytorch.bilstm import StackedBiLSTM

    torch.manual_seed(0)
    bilstm = StackedBiLSTM(5, 4, 2, 0.0).eval()
    lengths = torch.tensor([3, 0, 7, 1, 5, 3, 0])
    flat = torch.randn(int(lengths.sum()), 5, requires_grad=True)
    got = bilstm(flat, lengths)
    sequences = [seq for seq in torch.split(flat, lengths.tolist()) if seq.shape[0]]
    packed, _ = bilstm.lstm(pack_sequence(sequences, enforce_sorted=False))
    padded, _ = pad_packed_sequence(packed, batch_first=True)
    kept = lengths[lengths > 0]
    expected = padded[torch.arange(padded.shape[1])[None, :] < kept[:, None]]
    torch.testing.assert_close(got, expected)
    (grad_got,) = torch.autograd.grad(got.sum(), flat)
    (grad_expected,) = torch.autograd.grad(expected.sum(), flat)
    torch.testing.assert_close(grad_got, grad_expected)


def test_bilstm_reads_long_sequences_as_overlapping_windows():
    """With a window, a sequence no longer than it is read whole (the same output as
    without); a longer one as windows overlapping by a quarter window on each side,
    each token taken from the window whose middle holds it, gradients reaching every
    input row once."""
    import torch

    from greenkd_spacy.models.pytorch.bilstm import StackedBiLSTM, overlapping_windows

    torch.manual_seed(0)
    whole = StackedBiLSTM(5, 4, 1, 0.0).eval()
    windowed = StackedBiLSTM(5, 4, 1, 0.0, window=8).eval()
    windowed.load_state_dict(whole.state_dict())
    short = torch.tensor([3, 0, 8, 1])
    flat = torch.randn(int(short.sum()), 5)
    torch.testing.assert_close(windowed(flat, short), whole(flat, short))

    # window 8: margin 2, core 4. A 10-token sequence: cores [0, 4), [4, 8), [8, 10) in
    # windows [0, 6), [2, 10), [6, 10).
    source, window_lengths, rows = overlapping_windows([2, 10], 8)
    assert window_lengths.tolist() == [2, 6, 8, 4]
    assert source.tolist() == [0, 1, *range(2, 8), *range(4, 12), *range(8, 12)]
    assert rows.tolist() == [0, 1, 2, 3, 4, 5, 2 + 6 + 2, 2 + 6 + 3, 2 + 6 + 4, 2 + 6 + 5, 2 + 6 + 8 + 2, 2 + 6 + 8 + 3]
    lengths = torch.tensor([2, 10])
    flat = torch.randn(12, 5, requires_grad=True)
    out = windowed(flat, lengths)
    assert out.shape == (12, 8)
    # The tokens of the middle window's core are what the LSTM makes of that window.
    alone = whole(flat[4:12].detach(), torch.tensor([8]))
    torch.testing.assert_close(out[6:10].detach(), alone[2:6])
    (grad,) = torch.autograd.grad(out.sum(), flat)
    assert bool((grad.abs().sum(dim=1) > 0).all())
    with pytest.raises(ValueError, match="window = 2"):
        from greenkd_spacy.models.encoder import build_bilstm_context
        from thinc.api import Linear

        build_bilstm_context(Linear(nO=4, nI=3), window=2)
