"""greenkd_attribute_ruler sets exactly what spaCy's attribute_ruler sets."""
import pickle

import numpy
import pytest
import spacy
from spacy.attrs import DEP, LEMMA, MORPH, NORM, POS, TAG
from spacy.tokens import Doc

from greenkd_spacy.pipeline.attribute_ruler import BatchAttributeRuler

# Every kind of pattern spaCy's English rulers hold, plus ones the masks cannot decide.
PATTERNS = [
    {"patterns": [[{"TAG": "NN"}]], "attrs": {"POS": "NOUN", "MORPH": "Number=Sing"}},
    {"patterns": [[{"TAG": {"IN": ["VBZ", "VBP"]}}]], "attrs": {"POS": "VERB", "MORPH": "Tense=Pres"}},
    {"patterns": [[{"TAG": "VBZ", "LOWER": "is"}]], "attrs": {"POS": "AUX", "LEMMA": "be"}},  # later wins
    {"patterns": [[{"LOWER": {"REGEX": "^n'?t$"}}]], "attrs": {"LEMMA": "not"}},
    {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "to"}, "index": 1},
    {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "go"}, "index": -2},
    {"patterns": [[{"DEP": {"NOT_IN": ["det", ""]}, "TAG": {"IN": ["DT"]}}]], "attrs": {"POS": "PRON"}},
    {"patterns": [[{"IS_SPACE": True}]], "attrs": {"POS": "SPACE", "TAG": "_SP"}},
    {"patterns": [[{"DEP": "expl"}, {"LOWER": {"IN": ["is", "was"]}}]], "attrs": {"POS": "VERB"}, "index": 1},
    {"patterns": [[{"TAG": "VBZ", "LOWER": "gets"}], [{"TAG": "VBD", "LOWER": "got"}]], "attrs": {"LEMMA": "get"}},
    {"patterns": [[{"LOWER": "very"}, {"LOWER": "very", "OP": "*"}, {"TAG": "JJ"}]], "attrs": {"DEP": "advmod"}},
]

WORDS = [
    (["It", "is", "gon", "na", "rain"], ["PRP", "VBZ", "VBG", "TO", "VB"], ["nsubj", "ROOT", "aux", "aux", "xcomp"]),
    (["There", "is", "a", "dog", "."], ["EX", "VBZ", "DT", "NN", "."], ["expl", "ROOT", "det", "attr", "punct"]),
    (["That", "gets", "n't", "\n", "very", "very", "big"], ["DT", "VBZ", "RB", "_SP", "RB", "RB", "JJ"], ["nsubj", "ROOT", "neg", "dep", "advmod", "advmod", "acomp"]),
    (["gon"], ["VBG"], ["ROOT"]),  # a match must not run on into the next doc
    (["na", "got"], ["TO", "VBD"], ["aux", "ROOT"]),
    ([], [], []),
]


def make_docs(vocab, with_deps: bool = True):
    docs = []
    for words, tags, deps in WORDS:
        if not words:
            docs.append(Doc(vocab, words=[]))
            continue
        heads = [1 if i != 1 else 1 for i in range(len(words))] if len(words) > 1 else [0]
        docs.append(Doc(vocab, words=words, tags=tags, deps=deps if with_deps else None, heads=heads if with_deps else None))
    return docs


def annotations(docs):
    return [doc.to_array([POS, TAG, MORPH, LEMMA, DEP, NORM]).tolist() if len(doc) else [] for doc in docs]


def both(patterns, with_deps=True):
    nlp = spacy.blank("en")
    theirs = nlp.add_pipe("attribute_ruler")
    theirs.add_patterns(patterns)
    ours = spacy.blank("en", vocab=nlp.vocab).add_pipe("greenkd_attribute_ruler")
    ours.add_patterns(patterns)
    expected = [theirs(doc) for doc in make_docs(nlp.vocab, with_deps)]
    got = list(ours.pipe(make_docs(nlp.vocab, with_deps), batch_size=4))  # a batch boundary inside
    return expected, got, ours


@pytest.mark.parametrize("with_deps", [True, False])
def test_same_annotations_as_spacys_ruler(with_deps):
    expected, got, ours = both(PATTERNS, with_deps)
    assert annotations(got) == annotations(expected)
    assert len(ours._fallback) == 1  # only the pattern with an operator needs the Matcher
    assert got[0][3].lemma_ == "to" and got[0][2].lemma_ == "go" and got[0][1].pos_ == "AUX"
    assert got[3][0].lemma_ == "" and got[4][0].lemma_ == ""  # "gon" / "na" in two docs


def test_a_ruler_setting_other_attributes_runs_as_spacys():
    patterns = PATTERNS + [{"patterns": [[{"LOWER": "dog"}]], "attrs": {"NORM": "hound"}}]
    expected, got, ours = both(patterns)
    assert not ours._batched
    assert annotations(got) == annotations(expected)
    assert got[1][3].norm_ == "hound"


def test_a_bad_index_is_spacys_error():
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("greenkd_attribute_ruler")
    ruler.add([[{"LOWER": "a"}]], {"LEMMA": "x"}, index=2)
    with pytest.raises(ValueError, match="E1001"):
        nlp("a b")


def test_saved_loaded_and_pickled_with_its_patterns(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_attribute_ruler").add_patterns(PATTERNS)
    nlp.to_disk(tmp_path / "p")
    for loaded in (spacy.load(tmp_path / "p"), pickle.loads(pickle.dumps(nlp))):
        ruler = loaded.get_pipe("greenkd_attribute_ruler")
        assert isinstance(ruler, BatchAttributeRuler) and ruler.patterns == nlp.get_pipe("greenkd_attribute_ruler").patterns
        doc = ruler(Doc(loaded.vocab, words=["the", "dog"], tags=["DT", "NN"]))
        assert doc[1].pos_ == "NOUN" and str(doc[1].morph) == "Number=Sing"


def test_patterns_added_after_a_call_are_used():
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("greenkd_attribute_ruler")
    ruler.add([[{"LOWER": "dog"}]], {"LEMMA": "dog"})
    assert nlp("a dog")[1].lemma_ == "dog"
    ruler.add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
    assert nlp("a dog")[1].lemma_ == "hound"
    ruler.initialize(lambda: [], patterns=[{"patterns": [[{"LOWER": "a"}]], "attrs": {"LEMMA": "an"}}])
    doc = nlp("a dog")
    assert doc[0].lemma_ == "an" and doc[1].lemma_ == ""
    assert numpy.array_equal(doc.to_array([POS]), numpy.zeros((2,), dtype="uint64"))


def test_replacing_a_pipelines_ruler_as_the_docs_say():
    nlp = spacy.blank("en")
    nlp.add_pipe("attribute_ruler").add_patterns(PATTERNS)
    before = [nlp(doc) for doc in make_docs(nlp.vocab)]
    patterns = nlp.get_pipe("attribute_ruler").patterns
    nlp.replace_pipe("attribute_ruler", "greenkd_attribute_ruler").add_patterns(patterns)
    assert isinstance(nlp.get_pipe("attribute_ruler"), BatchAttributeRuler)
    assert annotations(list(nlp.pipe(make_docs(nlp.vocab)))) == annotations(before)


def test_an_error_handler_that_swallows_decides_what_a_call_returns():
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("greenkd_attribute_ruler")
    ruler.add([[{"LOWER": "a"}]], {"LEMMA": "x"}, index=2)  # fails when applied
    seen = []

    def swallow(name, pipe, docs, error):
        seen.append((name, len(docs), type(error).__name__))
        return "handled"

    ruler.set_error_handler(swallow)
    doc = nlp.make_doc("a b")
    assert ruler(doc) == "handled"
    # A failing batch is redone doc by doc, as spaCy's ruler (whose pipe calls it per
    # doc) does: the handler's value in place of a failing doc, the others annotated.
    spacys = spacy.blank("en").add_pipe("attribute_ruler")
    spacys.add([[{"LOWER": "a"}]], {"LEMMA": "x"}, index=2)
    spacys.set_error_handler(swallow)
    for pipe in (ruler, spacys):
        out = list(pipe.pipe([nlp.make_doc("a"), nlp.make_doc("b")]))
        assert out[0] == "handled" and out[1].text == "b"
    assert [kind for *_, kind in seen] == ["ValueError"] * 3
