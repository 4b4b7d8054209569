"""Every component on messy input: well-formed annotation, no exception from
inside torch or numpy, bounded time. Bound: a 5,000-token doc with no sentence
boundaries is annotated in under 20 s by each tiny model here (linear-time chunking:
the parser's max_sentence_length, the labeller's max_length)."""
import time

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Span

from ..util import save_tiny_source

COMPONENTS = ["greenkd_parser", "greenkd_textcat", "greenkd_ner", "greenkd_chunker"]
TEXTS = {
    "empty": "",
    "whitespace": " \n\t  ",
    "one token": "Hello",
    "control characters": "a\x00b\x07c \x1b[31m red \u200b zero-width",
    "emoji and non-ASCII": "🙂🚀 naïve café Здравствуйте 東京 مرحبا",
    "very long token": "x" * 20000,
    "5,000 tokens, no boundaries": " ".join(["word"] * 5000),
}


@pytest.fixture(scope="module", params=COMPONENTS)
def pipeline(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(request.param) / "model"
    save_tiny_source(path, request.param)
    return request.param, spacy.load(path)


def check_annotation(name, doc):
    if name == "greenkd_parser":
        for token in doc:
            assert 0 <= token.head.i < len(doc) and token.dep_
        roots = [t for t in doc if t.head.i == t.i]
        assert len(doc) == 0 or len(roots) >= 1
    elif name == "greenkd_textcat":
        assert set(doc.cats) == {"pos", "neg"}
        assert abs(sum(doc.cats.values()) - 1.0) < 1e-4
    elif name == "greenkd_ner":
        assert all(0 <= e.start < e.end <= len(doc) for e in doc.ents)
    else:
        assert all(0 <= s.start < s.end <= len(doc) for s in doc.spans["chunks"])


@pytest.mark.parametrize("case", list(TEXTS))
def test_messy_text(pipeline, case):
    name, nlp = pipeline
    start = time.perf_counter()
    doc = nlp(TEXTS[case])
    assert time.perf_counter() - start < 20
    check_annotation(name, doc)


def test_partial_annotation_is_overwritten_cleanly(pipeline):
    name, nlp = pipeline
    doc = nlp.make_doc("John lives in Paris now")
    # What an earlier component or a user may leave: one entity with the other tokens'
    # annotation missing, one chunk, one of two classes.
    doc.set_ents([Span(doc, 0, 1, label="PER")], default="missing")
    doc.spans["chunks"] = [Span(doc, 3, 4, label="NP")]
    doc.cats = {"pos": 1.0}
    assert doc[1].ent_iob_ == ""  # missing, as set
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    check_annotation(name, doc)
    if name == "greenkd_ner":
        assert all(token.ent_iob_ in ("B", "I", "O") for token in doc)  # nothing left missing


def test_two_processes_match_one(pipeline):
    name, nlp = pipeline
    texts = ["John lives in Paris .", "", "the cat sat on the mat", "🙂 ok"] * 3
    def key(doc):
        return (
            [(t.head.i, t.dep_) for t in doc],
            sorted(doc.cats.items()),
            [(e.start, e.end, e.label_) for e in doc.ents],
            [(s.start, s.end, s.label_) for s in doc.spans.get("chunks", [])],
        )
    single = [key(doc) for doc in nlp.pipe(texts)]
    multi = [key(doc) for doc in nlp.pipe(texts, n_process=2, batch_size=3)]
    assert single == multi


@settings(max_examples=30, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_random_text_gives_well_formed_annotation(pipeline, text):
    name, nlp = pipeline
    check_annotation(name, nlp(text))
