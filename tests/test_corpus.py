"""greenkd.Corpus.v1 seeds predicted docs with the gold annotation asked for."""
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from greenkd_spacy.data.corpus import create_corpus_reader


@pytest.fixture
def corpus_path(tmp_path):
    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab,
        words=["Hello", "world", ".", "Bye", "now"],
        spaces=[True, False, True, True, False],
        heads=[0, 0, 0, 3, 3],
        deps=["ROOT", "dep", "punct", "ROOT", "dep"],
        pos=["INTJ", "NOUN", "PUNCT", "INTJ", "ADV"],
        sent_starts=[True, False, False, True, False],
    )
    path = tmp_path / "tiny.spacy"
    DocBin(docs=[doc]).to_disk(path)
    return path


def test_paper_setting_copies_pos_and_sentences(corpus_path):
    nlp = spacy.blank("en")
    (eg,) = list(create_corpus_reader(corpus_path, gold_pos=True)(nlp))
    assert [t.pos_ for t in eg.predicted] == ["INTJ", "NOUN", "PUNCT", "INTJ", "ADV"]
    assert [s.start for s in eg.predicted.sents] == [0, 3]
    assert not eg.predicted.has_annotation("DEP")


def test_raw_setting_has_no_pos(corpus_path):
    nlp = spacy.blank("en")
    (eg,) = list(create_corpus_reader(corpus_path, gold_sents=False)(nlp))
    assert not eg.predicted.has_annotation("POS")
    assert not eg.predicted.has_annotation("SENT_START")
    assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]


def test_gold_preproc_gives_one_doc_per_sentence(corpus_path):
    nlp = spacy.blank("en")
    examples = list(create_corpus_reader(corpus_path, gold_preproc=True)(nlp))
    assert [len(eg.predicted) for eg in examples] == [3, 2]


def test_missing_path_says_how_to_fix(tmp_path):
    with pytest.raises(ValueError, match="E004"):
        create_corpus_reader(tmp_path / "nope.spacy")


def test_treebank_language_comes_from_the_file_name():
    """A UD treebank's files start with its ISO code: train with that `lang`, or `xx`
    where spaCy has no class for it (the recipe in README, "Any language")."""
    from greenkd_spacy.data.conllu import spacy_lang_for

    assert spacy_lang_for("assets/ud/ta_ttb/ta_ttb-ud-train.conllu") == "ta"
    assert spacy_lang_for("en_ewt-ud-dev.conllu") == "en"
    assert spacy_lang_for("wo_wtb-ud-train.conllu") == "xx"  # Wolof: no spaCy class
