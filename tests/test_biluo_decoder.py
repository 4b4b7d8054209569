"""The vectorised BILUO decoder writes exactly the spans spaCy's biluo_tags_to_spans does,
and entities written straight from a batch's paths are the entities of those spans."""
import random

import pytest

import spacy
from spacy.tokens import Doc, Span
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


def _random_batch(rng: random.Random):
    """Eight docs of 0 to 30 tokens and a well-formed random BILUO path (tag names) for each."""
    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=[f"w{j}" for j in range(rng.randint(0, 30))]) for _ in range(8)]
    return docs, [_random_path(rng, len(doc)) for doc in docs]


def test_a_batch_written_at_once_has_the_entities_of_its_paths():
    rng = random.Random(0)
    decoder = BiluoDecoder(TAGS)
    for _ in range(20):
        docs, paths = _random_batch(rng)
        # Entities set earlier must be replaced, as set_ents(default="outside") does.
        for doc in docs:
            if len(doc) > 2:
                doc.ents = [Span(doc, 0, 2, label="OLD")]
        decoder.write_entities(docs, [[TAGS.index(t) for t in path] for path in paths])
        for doc, path in zip(docs, paths):
            assert [(e.start, e.end, e.label_) for e in doc.ents] == [(s.start, s.end, s.label_) for s in biluo_tags_to_spans(doc, path)]
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


def test_a_batchs_spans_are_each_docs_spans():
    nlp = spacy.blank("en")
    rng = random.Random(1)
    decoder = BiluoDecoder(TAGS)
    for _ in range(20):
        docs, tag_paths = _random_batch(rng)
        paths = [[TAGS.index(t) for t in path] for path in tag_paths]
        batch = decoder.batch_spans(docs, paths)
        assert [[(s.start, s.end, s.label_, s.doc is doc) for s in spans] for doc, spans in zip(docs, batch)] == [
            [(s.start, s.end, s.label_, True) for s in decoder.spans(doc, path)] for doc, path in zip(docs, paths)
        ]
    assert decoder.batch_spans([], []) == [] and decoder.batch_spans([Doc(nlp.vocab, words=[])], [[]]) == [[]]
    # A span that would run from one doc into the next: each doc is decoded alone (and
    # refused, as spaCy's function refuses it).
    first, second = Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["c", "d"])
    with pytest.raises(ValueError):
        decoder.batch_spans([first, second], [[0, TAGS.index("B-PER")], [TAGS.index("L-PER"), 0]])
