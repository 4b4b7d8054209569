"""greenkd.CachedTokenizer.v1: spaCy's tokens exactly (first call and from the cache),
rule changes empty the cache, and a pipeline saves, loads and pickles with it."""
import pickle

import pytest
import spacy

from greenkd_spacy.tokenization import cached
from greenkd_spacy.tokenization.cached import CachedTokenizer

CONFIG = {"nlp": {"tokenizer": {"@tokenizers": "greenkd.CachedTokenizer.v1"}}}

TEXTS = [
    "",
    " ",
    "   leading and trailing   ",
    "What's the (U.S.) capital? Don't!",
    "it 's a charming and often affecting journey . does n't",
    "great!!  \n\n\"film\" ... -- old-fashioned",
    "well-known $5 50% e-mail: a@b.org https://spacy.io/usage?x=1 :) :-( <3",
    "\ttabs\tand\r\nnew lines\n \n",
    "naïve café – «quoted» 東京 ¡hola! Mr. Smith's 3 a.m. flight",
    "हिन्दी में पाठ।",
    "emoji 🙂 and ☃ symbols™ 🙂🙂",
    "mark the root _ NOUN nsubj ORTH of it",
    "a",
]


def tokens(doc):
    return [(t.text, t.whitespace_, t.orth, t.idx) for t in doc]


def test_is_compiled():
    assert cached.ChunkCache is not None, "run `pip install -e .` to build the chunk cache"


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_are_spacys_first_time_and_from_the_cache(text):
    nlp = spacy.blank("en")
    ours = CachedTokenizer(nlp.tokenizer)
    first = ours(text)
    again = ours(text)
    assert tokens(first) == tokens(again) == tokens(nlp.tokenizer(text))
    assert again.text == text


def test_chunks_shared_between_texts_come_from_the_cache():
    nlp = spacy.blank("en")
    ours = CachedTokenizer(nlp.tokenizer)
    ours("Don't go. Don't!")
    assert ours.cached_chunks == 3  # "Don't", "go.", "Don't!"
    doc = ours("go. Don't")
    assert ours.cached_chunks == 3
    assert tokens(doc) == tokens(nlp.tokenizer("go. Don't"))


def test_rule_changes_through_the_wrapper_empty_the_cache():
    nlp = spacy.blank("en")
    ours = CachedTokenizer(nlp.tokenizer)
    assert [t.text for t in ours("fooBar that")] == ["fooBar", "that"]
    ours.add_special_case("fooBar", [{"ORTH": "foo"}, {"ORTH": "Bar"}])
    assert [t.text for t in ours("fooBar that")] == ["foo", "Bar", "that"]
    ours("a-b")
    ours.infix_finditer = None  # no infixes: "a-b" stays whole
    assert [t.text for t in ours("a-b")] == ["a-b"] == [t.text for t in nlp.tokenizer("a-b")]


def test_nothing_is_remembered_inside_a_memory_zone():
    nlp = spacy.blank("en")
    ours = CachedTokenizer(nlp.tokenizer)
    with nlp.memory_zone():
        assert [t.text for t in ours("zonal words")] == ["zonal", "words"]
        assert ours.cached_chunks == 0
    assert tokens(ours("zonal words")) == tokens(nlp.tokenizer("zonal words"))


def test_refuses_what_it_cannot_wrap_or_tokenize():
    nlp = spacy.blank("en")
    with pytest.raises(TypeError, match="spaCy's rule tokenizer"):
        CachedTokenizer(lambda text: nlp.make_doc(text))
    with pytest.raises(TypeError, match="tokenizes a str"):
        CachedTokenizer(nlp.tokenizer)(b"bytes")


def test_pipeline_from_config_saves_loads_and_pickles(tmp_path):
    nlp = spacy.blank("en", config=CONFIG)
    assert isinstance(nlp.tokenizer, CachedTokenizer)
    nlp.tokenizer.add_special_case("fooBar", [{"ORTH": "foo"}, {"ORTH": "Bar"}])
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert isinstance(loaded.tokenizer, CachedTokenizer)
    assert [t.text for t in loaded("fooBar (that)")] == ["foo", "Bar", "(", "that", ")"]
    # the data on disk is spaCy's tokenizer's: a pipeline with spaCy's tokenizer reads it
    plain = spacy.blank("en").from_disk(tmp_path / "model")
    assert [t.text for t in plain("fooBar (that)")] == ["foo", "Bar", "(", "that", ")"]
    copy = pickle.loads(pickle.dumps(loaded))
    assert isinstance(copy.tokenizer, CachedTokenizer)
    assert [t.text for t in copy("fooBar (that)")] == ["foo", "Bar", "(", "that", ")"]


def test_docs_read_with_it_share_spacys_tokenizer_digest():
    from greenkd_spacy.data.source_key import tokenizer_digest

    assert tokenizer_digest(spacy.blank("en", config=CONFIG)) == tokenizer_digest(spacy.blank("en"))
    other = spacy.blank("en")
    other.tokenizer.add_special_case("fooBar", [{"ORTH": "foo"}, {"ORTH": "Bar"}])
    assert tokenizer_digest(other) != tokenizer_digest(spacy.blank("en"))


def test_a_student_takes_its_teachers_rules_and_forgets_what_it_cached():
    from greenkd_spacy.tokenization.rules import adopt_teacher_tokenizer

    teacher = spacy.blank("en")
    teacher.tokenizer.add_special_case("fooBar", [{"ORTH": "foo"}, {"ORTH": "Bar"}])
    student = spacy.blank("en", config=CONFIG)
    assert [t.text for t in student("fooBar now")] == ["fooBar", "now"]  # now in its cache
    assert adopt_teacher_tokenizer(student, teacher)
    assert [t.text for t in student("fooBar now")] == ["foo", "Bar", "now"]
    # a plain spaCy tokenizer takes them too; the teacher's own is left as it was
    plain = spacy.blank("en")
    assert adopt_teacher_tokenizer(plain, teacher) and [t.text for t in plain("fooBar")] == ["foo", "Bar"]
    assert isinstance(student.tokenizer, CachedTokenizer) and not isinstance(teacher.tokenizer, CachedTokenizer)


def test_a_teacher_of_another_language_or_kind_is_said_not_to_hand_its_rules_over():
    from greenkd_spacy.tokenization.rules import adopt_teacher_tokenizer

    student = spacy.blank("en", config=CONFIG)
    with pytest.warns(UserWarning, match="teacher_tokenizer = false"):
        assert not adopt_teacher_tokenizer(student, spacy.blank("de"))
    custom = spacy.blank("en")
    custom.tokenizer = lambda text: spacy.tokens.Doc(custom.vocab, words=text.split())
    with pytest.warns(UserWarning, match="not the teacher's kind"):
        assert not adopt_teacher_tokenizer(student, custom)
    assert [t.text for t in student("fooBar")] == ["fooBar"]
