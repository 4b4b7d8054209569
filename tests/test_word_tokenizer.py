"""greenkd.WordTokenizer.v1: the rule, the compiled split against its Python reference,
and what a spaCy pipeline does with a tokenizer (config, save, load)."""
import pytest
import spacy

from greenkd_spacy import tokenization
from greenkd_spacy.tokenization import WordTokenizer
from greenkd_spacy.tokenization.split import split_words

CONFIG = {"nlp": {"tokenizer": {"@tokenizers": "greenkd.WordTokenizer.v1"}}}

TEXTS = [
    "",
    " ",
    "   leading and trailing   ",
    "What's the (U.S.) capital?",
    "great!!  \n\n\"film\" ...",
    "well-known $5 50% e-mail: a@b.org",
    "\ttabs\tand\r\nnew lines\n",
    "naïve café – «quoted» 東京 ¡hola!",
    "हिन्दी में पाठ।",  # combining vowel signs stay in their words
    "emoji 🙂 and ☃ symbols™",
    "...",
    "a",
]


def test_split_words_splits_edge_punctuation_only():
    words, spaces = split_words("What's the (U.S.) capital?  Don't!")
    assert words == ["What's", "the", "(", "U.S", ".", ")", "capital", "?", " ", "Don't", "!"]
    assert spaces == [True, True, False, False, False, True, False, True, False, False, False]
    assert split_words("हिन्दी में")[0] == ["हिन्दी", "में"]


@pytest.mark.parametrize("text", TEXTS)
def test_doc_text_is_the_text_and_compiled_equals_reference(text):
    assert tokenization._CompiledSplitter is not None, "run `pip install -e .` to build the compiled split"
    nlp = spacy.blank("en")
    doc = WordTokenizer(nlp.vocab)(text)
    assert doc.text == text
    words, spaces = split_words(text)
    assert [t.text for t in doc] == words
    assert [bool(t.whitespace_) for t in doc] == spaces


@pytest.mark.parametrize("text", TEXTS + ["mark the root _ NOUN nsubj ORTH of it: mark!"])
def test_known_words_find_the_vocabs_lexemes(text):
    """The second time a text is split every lexeme is known (the compiled split then
    hashes ASCII tokens in place): each token is the vocab's lexeme of its text, spaCy's
    symbol names (hashed by their symbol table) included."""
    nlp = spacy.blank("en")
    tokenizer = WordTokenizer(nlp.vocab)
    first = tokenizer(text)
    again = tokenizer(text)
    words, _ = split_words(text)
    assert [t.text for t in again] == [t.text for t in first] == words
    assert [t.orth for t in again] == [nlp.vocab.strings[w] for w in words]
    assert [t.lex_id for t in again] == [nlp.vocab[w].rank for w in words]


def test_differs_from_spacys_tokenizer_where_documented():
    nlp = spacy.blank("en")
    ours = [t.text for t in WordTokenizer(nlp.vocab)("Don't go.")]
    theirs = [t.text for t in nlp.tokenizer("Don't go.")]
    assert ours == ["Don't", "go", "."] and theirs == ["Do", "n't", "go", "."]


def test_refuses_non_text_with_a_clear_error():
    nlp = spacy.blank("en")
    with pytest.raises(TypeError):
        WordTokenizer(nlp.vocab)(42)


def test_pipeline_from_config_saves_and_loads(tmp_path):
    nlp = spacy.blank("en", config=CONFIG)
    assert isinstance(nlp.tokenizer, WordTokenizer)
    nlp.add_pipe("greenkd_textcat")
    textcat = nlp.get_pipe("greenkd_textcat")
    textcat.add_label("POS")
    textcat.add_label("NEG")
    from spacy.training import Example

    examples = [Example.from_dict(nlp.make_doc(t), {"cats": {"POS": float(p), "NEG": float(not p)}})
                for t, p in [("great film!", 1), ("awful, dull film.", 0)] * 4]
    nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert isinstance(loaded.tokenizer, WordTokenizer)
    text = "great, dull film!"
    assert [t.text for t in loaded(text)] == [t.text for t in nlp(text)]
    assert loaded(text).cats == pytest.approx(nlp(text).cats)
    again = spacy.blank("en", config=CONFIG).from_bytes(nlp.to_bytes())
    assert [t.text for t in again(text)] == ["great", ",", "dull", "film", "!"]


def test_data_of_another_tokenizer_is_refused(tmp_path):
    nlp = spacy.blank("en")
    nlp.tokenizer.to_disk(tmp_path / "tokenizer")
    with pytest.raises(ValueError, match="not greenkd.WordTokenizer.v1"):
        WordTokenizer(nlp.vocab).from_disk(tmp_path / "tokenizer")


def test_textcat_bench_counts_spacys_words_whatever_the_tokenizer():
    """words/s of two pipelines on the same texts must divide the same word count."""
    from greenkd_spacy.bench import bench_textcat

    nlp = spacy.blank("en", config=CONFIG)
    nlp.add_pipe("greenkd_textcat")
    nlp.get_pipe("greenkd_textcat").add_label("A")
    nlp.get_pipe("greenkd_textcat").add_label("B")
    nlp.initialize()
    texts = ["Don't stop.", "It's fine, isn't it?"]
    row = bench_textcat(nlp, texts, ["A", "B"], batch_sizes=[2], repeats=1, min_docs=2)
    assert row["words"] == sum(len(spacy.blank("en")(t)) for t in texts) == 12
    assert sum(len(nlp.make_doc(t)) for t in texts) == 9


def test_pickles_for_other_processes():
    import pickle

    nlp = spacy.blank("en", config=CONFIG)
    copy = pickle.loads(pickle.dumps(nlp))
    assert isinstance(copy.tokenizer, WordTokenizer)
    assert [t.text for t in copy("(hello) world!")] == ["(", "hello", ")", "world", "!"]
