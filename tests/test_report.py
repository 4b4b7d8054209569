"""The distillation report's scores (greenkd_spacy/distillation/report.py)."""
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from greenkd_spacy.distillation.report import agreement


def test_agreement_scores_references_read_into_another_vocab():
    """A gold corpus is read into a vocab of its own: a morph analysis the pipeline
    predicts that no reference holds is still scored (spaCy's morph scorer looks the
    prediction up in the reference's strings)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("morphologizer")
    words = ["cats", "sleep"]
    train = Doc(nlp.vocab, words=words, morphs=["Number=Plur", "Mood=Ind"], pos=["NOUN", "VERB"])
    nlp.initialize(lambda: [Example(nlp.make_doc("cats sleep"), train)])
    for _ in range(20):
        nlp.update([Example(nlp.make_doc("cats sleep"), train)])
    # The reference knows only an analysis the pipeline never predicts.
    reference = Doc(Vocab(), words=words, morphs=["Number=Sing", "Number=Sing"], pos=["NOUN", "VERB"])
    assert "Mood=Ind" not in reference.vocab.strings
    scores = agreement(nlp, [reference])
    assert scores["pos_acc"] == 100.0
    assert 0.0 <= scores["morph_acc"] < 100.0
