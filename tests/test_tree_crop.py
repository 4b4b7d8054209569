"""benchmarks/tree_crop.py: a cropped sentence is a well-formed tree that keeps the
original's heads and labels."""
import random

import spacy
from spacy.tokens import Doc

from benchmarks.tree_crop import crop


def _sentence():
    # "She quickly gave the boy a book yesterday ." with gave as root.
    words = ["She", "quickly", "gave", "the", "boy", "a", "book", "yesterday", "."]
    heads = [2, 2, 2, 4, 2, 6, 2, 2, 2]
    deps = ["nsubj", "advmod", "ROOT", "det", "iobj", "det", "obj", "obl", "punct"]
    return Doc(spacy.blank("en").vocab, words=words, heads=heads, deps=deps)


def test_crops_are_trees_that_keep_the_roots_and_the_kept_subtrees_arcs():
    doc = _sentence()
    original = {t.text: (t.head.text, t.dep_) for t in doc}
    seen = set()
    for seed in range(30):
        cropped = crop(doc[:], random.Random(seed))
        words = [t.text for t in cropped]
        seen.add(tuple(words))
        assert "gave" in words and 2 <= len(words) < len(doc)
        assert [t.dep_ for t in cropped].count("ROOT") == 1
        for token in cropped:
            assert (token.head.text, token.dep_) == original[token.text]
        # A determiner never loses its noun; punctuation ends the crop only after kept words.
        assert ("the" in words) == ("boy" in words) and ("a" in words) == ("book" in words)
        if "." in words:
            assert words.index(".") == len(words) - 1
    assert len(seen) > 5


def test_a_root_with_one_dependent_is_not_cropped():
    doc = Doc(spacy.blank("en").vocab, words=["Go", "home", "."], heads=[0, 0, 0], deps=["ROOT", "obj", "punct"])
    assert crop(doc[:], random.Random(0)) is None


def test_a_later_sentence_of_a_doc_is_cropped_within_itself():
    # Two sentences in one doc (the treebank's docs hold ten): "Go ." and
    # "A , B saw C ." with saw as root and two punctuation dependents.
    words = ["Go", ".", "A", ",", "B", "saw", "C", "."]
    heads = [0, 0, 5, 5, 5, 5, 5, 5]
    deps = ["ROOT", "punct", "nsubj", "punct", "nsubj", "ROOT", "obj", "punct"]
    doc = Doc(spacy.blank("en").vocab, words=words, heads=heads, deps=deps,
              sent_starts=[True, False, True, False, False, False, False, False])
    first, second = list(doc.sents)
    assert crop(first, random.Random(0)) is None
    for seed in range(20):
        words_kept = [t.text for t in crop(second, random.Random(seed))]
        assert "saw" in words_kept and "Go" not in words_kept
        # The comma inside is dropped; a final punctuation mark only follows kept words.
        assert "," not in words_kept
        assert words_kept[-1] == "." or words_kept[-1] in ("C", "saw")


def test_a_one_token_sentence_is_not_cropped():
    doc = Doc(spacy.blank("en").vocab, words=["Stop"], heads=[0], deps=["ROOT"])
    assert crop(doc[:], random.Random(0)) is None
