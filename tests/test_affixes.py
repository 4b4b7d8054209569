import pickle

import pytest
import spacy

from greenkd_spacy.models.affixes import create_affix_lengths

AFTER = {"@callbacks": "greenkd.affix_lengths.v1", "prefix": 2, "suffix": 5}


def test_affix_lengths_set_prefix_and_suffix_and_survive_a_round_trip(tmp_path):
    nlp = spacy.blank("ta", config={"nlp": {"after_creation": AFTER}})
    doc = nlp.make_doc("மாணவர்களுக்கு புத்தகத்தில் reading")
    assert [t.suffix_ for t in doc] == ["ுக்கு", "்தில்", "ading"]
    assert [t.prefix_ for t in doc] == ["மா", "பு", "re"]
    # The features spaCy's hash embeddings read are these strings' hashes.
    assert doc.to_array("SUFFIX")[0] == nlp.vocab.strings["ுக்கு"]
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert [t.suffix_ for t in loaded.make_doc("reading books")] == ["ading", "books"]
    # A plain pipeline keeps spaCy's lengths: the callback changes only its own vocab.
    assert [t.suffix_ for t in spacy.blank("ta").make_doc("reading")] == ["ing"]


def test_lexemes_made_before_the_callback_get_the_new_lengths():
    nlp = spacy.blank("en")
    nlp.vocab["walking"]
    create_affix_lengths(prefix=1, suffix=4)(nlp)
    assert nlp.vocab["walking"].suffix_ == "king" and nlp.make_doc("walking")[0].suffix_ == "king"


def test_the_vocab_still_pickles_for_multiprocessing():
    nlp = spacy.blank("en", config={"nlp": {"after_creation": AFTER}})
    vocab = pickle.loads(pickle.dumps(nlp.vocab))
    assert vocab["talking"].suffix_ == "lking"


@pytest.mark.parametrize("prefix,suffix", [(0, 3), (1, 0)])
def test_lengths_below_one_are_refused_with_the_fix(prefix, suffix):
    with pytest.raises(ValueError, match=">= 1"):
        create_affix_lengths(prefix=prefix, suffix=suffix)
