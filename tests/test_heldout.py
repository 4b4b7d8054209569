"""How the teacher segments the held-out texts, checked before the teacher pass."""
import warnings

import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab

from greenkd_spacy.distillation.segmentation import LONG_SENTENCE, check_segmentation, sentence_lengths


def doc_of(vocab: Vocab, lengths):
    """A doc whose sentences have these lengths (None: no boundaries set)."""
    words = [f"w{i}" for i in range(sum(lengths))]
    starts = []
    for n in lengths:
        starts += [True] + [False] * (n - 1)
    return Doc(vocab, words=words, sent_starts=starts)


def test_a_teacher_that_makes_one_tree_per_text_is_warned_about():
    vocab = Vocab()
    one_tree = [doc_of(vocab, [LONG_SENTENCE + 50]), doc_of(vocab, [12, 9])]
    info = {"docs": 2, "sentences": sentence_lengths(one_tree)}
    assert info["sentences"] == {"count": 3, "longest": LONG_SENTENCE + 50, "long_share": round(150 / 171, 4)}
    with pytest.warns(UserWarning, match=r"W006.*3 sentences.*sentencizer"):
        check_segmentation(info)


def test_running_text_and_unsegmented_docs_are_not_warned_about():
    vocab = Vocab()
    sentences = [doc_of(vocab, [20, 31, LONG_SENTENCE + 1]), doc_of(vocab, [25] * 20)]
    info = {"docs": 2, "sentences": sentence_lengths(sentences)}
    assert info["sentences"]["longest"] == LONG_SENTENCE + 1 and info["sentences"]["long_share"] < 0.2
    no_boundaries = [Doc(vocab, words=["a", "b"])]
    assert sentence_lengths(no_boundaries) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_segmentation(info)
        check_segmentation({"docs": 1, "sentences": None})
