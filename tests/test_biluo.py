"""Entities written straight from BILUO paths must be the entities spaCy's own
span route gives, for any batch, and a path that is not well formed must not be
written as if it were."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import biluo_tags_to_spans

from greenkd_spacy.decoding.biluo import BiluoDecoder

TAGS = ["O"] + [f"{kind}-{label}" for label in ("PER", "ORG", "LOC") for kind in "BILU"]


def random_path(rng: numpy.random.Generator, length: int) -> list:
    """A well-formed BILUO path: random entities of random labels and lengths."""
    tags, i = [], 0
    while i < length:
        if rng.random() < 0.6:
            tags.append("O")
            i += 1
            continue
        label = rng.choice(["PER", "ORG", "LOC"])
        size = min(int(rng.integers(1, 5)), length - i)
        tags += [f"U-{label}"] if size == 1 else [f"B-{label}"] + [f"I-{label}"] * (size - 2) + [f"L-{label}"]
        i += size
    return tags


def reference(doc: Doc, tags: list) -> list:
    return [(s.start, s.end, s.label_) for s in biluo_tags_to_spans(doc, tags)]


def test_a_batch_written_at_once_has_the_entities_of_its_paths():
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    decoder = BiluoDecoder(TAGS)
    index = {tag: i for i, tag in enumerate(TAGS)}
    for _ in range(20):
        lengths = rng.integers(0, 30, size=8)
        docs = [Doc(nlp.vocab, words=[f"w{j}" for j in range(n)]) for n in lengths]
        # Entities set earlier must be replaced, as set_ents(default="outside") does.
        for doc in docs:
            if len(doc) > 2:
                doc.ents = [Span(doc, 0, 2, label="OLD")]
        paths = [random_path(rng, len(doc)) for doc in docs]
        decoder.write_entities(docs, [[index[t] for t in path] for path in paths])
        for doc, path in zip(docs, paths):
            assert [(e.start, e.end, e.label_) for e in doc.ents] == reference(doc, path)
            assert all(token.ent_iob_ in ("B", "I", "O") for token in doc)


def test_adjacent_and_single_token_entities_stay_apart():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["a", "b", "c", "d", "e"])
    tags = ["U-PER", "U-PER", "B-ORG", "L-ORG", "U-ORG"]
    BiluoDecoder(TAGS).write_entities([doc], [[TAGS.index(t) for t in tags]])
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [(0, 1, "PER"), (1, 2, "PER"), (2, 4, "ORG"), (4, 5, "ORG")]


def test_a_path_that_is_not_well_formed_takes_spacys_route():
    nlp = spacy.blank("en")
    decoder = BiluoDecoder(TAGS)
    # An entity would run from the first doc into the second if the batch were one path.
    first, second = Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["c", "d"])
    with pytest.raises(ValueError):
        decoder.write_entities([first, second], [[0, TAGS.index("B-PER")], [TAGS.index("L-PER"), 0]])
    # An I with no B before it: spaCy's function refuses it too.
    doc = Doc(nlp.vocab, words=["a", "b"])
    with pytest.raises(ValueError):
        decoder.write_entities([doc], [[TAGS.index("I-PER"), TAGS.index("L-PER")]])
