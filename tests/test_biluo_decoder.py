"""The vectorised BILUO decoder writes exactly the spans spaCy's biluo_tags_to_spans does."""
import random

import pytest

import spacy
from spacy.training import biluo_tags_to_spans

from greenkd_spacy.decoding.biluo import BiluoDecoder

TAGS = ["O", "B-PER", "I-PER", "L-PER", "U-PER", "B-ORG", "I-ORG", "L-ORG", "U-ORG"]


def _random_path(rng: random.Random, n: int) -> list:
    """A well-formed BILUO path of n tags."""
    path, i = [], 0
    while i < n:
        label = rng.choice(["PER", "ORG"])
        kind = rng.choice("OOOUB")
        if kind == "B" and i + 1 < n:
            length = rng.randint(2, min(5, n - i))
            path += [f"B-{label}"] + [f"I-{label}"] * (length - 2) + [f"L-{label}"]
            i += length
        else:
            path.append("O" if kind in "OB" else f"U-{label}")
            i += 1
    return path


def test_decoder_matches_spacy_on_well_formed_paths():
    nlp = spacy.blank("en")
    decoder = BiluoDecoder(TAGS)
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 30)
        doc = nlp.make_doc(" ".join(f"w{i}" for i in range(n)))
        path = _random_path(rng, n)
        expected = [(s.start, s.end, s.label_) for s in biluo_tags_to_spans(doc, path)]
        got = [(s.start, s.end, s.label_) for s in decoder.spans(doc, [TAGS.index(t) for t in path])]
        assert got == expected


def test_decoder_falls_back_on_malformed_paths():
    nlp = spacy.blank("en")
    decoder = BiluoDecoder(TAGS)
    doc = nlp.make_doc("a b c d")
    # An I outside any entity, an O inside one, entities whose tags change label.
    paths = (
        ["O", "I-PER", "O", "U-ORG"], ["B-PER", "O", "L-PER", "O"], ["B-PER", "I-ORG", "L-ORG", "O"],
        ["B-PER", "L-ORG", "U-PER", "O"], ["B-PER", "I-PER", "I-PER", "L-PER"],
    )
    for path in paths:
        ids = [TAGS.index(t) for t in path]
        try:
            expected = [(s.start, s.end, s.label_) for s in biluo_tags_to_spans(doc, path)]
        except ValueError:
            with pytest.raises(ValueError):
                decoder.spans(doc, ids)
            continue
        assert [(s.start, s.end, s.label_) for s in decoder.spans(doc, ids)] == expected
    assert decoder.spans(doc[:0].as_doc(), []) == []
