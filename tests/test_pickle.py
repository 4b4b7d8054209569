"""Every greenkd component, and a pipeline holding it, pickles: `nlp.pipe(n_process=2)`
sends the pipeline to its workers by pickle under the spawn start method (the default
on macOS and Windows)."""
import multiprocessing
import pickle

import pytest
import spacy

from .util import save_tiny_source

COMPONENTS = ["greenkd_parser", "greenkd_ner", "greenkd_chunker", "greenkd_textcat"]
TEXTS = ["the cat sat on the mat .", "John lives here", "good", ""]


def analyses(nlp):
    docs = list(nlp.pipe(TEXTS))
    return [(doc.to_json(), doc.cats, {key: [(s.start, s.end, s.label_) for s in group] for key, group in doc.spans.items()}) for doc in docs]


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_pipeline_with_each_component_pickles_and_annotates_the_same(component, tmp_path):
    save_tiny_source(tmp_path / "model", component)
    nlp = spacy.load(tmp_path / "model")
    copy = pickle.loads(pickle.dumps(nlp))
    assert analyses(copy) == analyses(nlp)


@pytest.mark.slow
def test_pipe_with_two_spawned_processes(tmp_path, monkeypatch):
    save_tiny_source(tmp_path / "model", "greenkd_chunker")
    nlp = spacy.load(tmp_path / "model")
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    context = multiprocessing.get_context("spawn")
    monkeypatch.setattr(multiprocessing, "Process", context.Process)
    monkeypatch.setattr(multiprocessing, "Pipe", context.Pipe)
    monkeypatch.setattr(multiprocessing, "Queue", context.Queue)
    one = [doc.to_json() for doc in nlp.pipe(TEXTS * 4)]
    two = [doc.to_json() for doc in nlp.pipe(TEXTS * 4, n_process=2, batch_size=2)]
    assert one == two
