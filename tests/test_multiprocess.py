"""nlp.pipe(n_process=2) under torch's default thread count.

tests/conftest.py runs the suite on one torch thread, which hides what a user sees
with the default (one thread per core): a forked worker whose first parallel op
waits forever on the parent's OpenMP pool. So this runs in a fresh interpreter
that never imports the conftest, with a time limit.
"""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import spacy, torch
    from spacy.training import Example
    from tests.util import make_examples, train

    torch.set_num_threads(2)  # the default on a 2-core machine, set for any machine
    torch.ones(4_000_000).sum()  # the parent's thread pool is in use before the fork

    parser = spacy.blank("en")
    # The paper's full size (the architectures' own defaults): big enough to run in parallel.
    paper = {{"@architectures": "greenkd.BiaffineParser.v1", "tok2vec": {{"@architectures": "greenkd.BiLSTMEncoder.v1", "pos_width": 0}}}}
    parser.add_pipe("greenkd_parser", config={{"model": paper}})
    train(parser, make_examples(parser, copy_pos=False), steps=2)

    textcat = spacy.blank("en")
    textcat.add_pipe("greenkd_textcat", config={{"model": {{"@architectures": "greenkd.DAN.v1", "ngram_size": 2, "max_ngrams": 5000}}}})
    examples = [
        Example.from_dict(textcat.make_doc(text), {{"cats": {{"pos": float(p), "neg": float(not p)}}}})
        for text, p in (("a good film", 1), ("a bad film", 0))
    ]
    train(textcat, examples, steps=2)

    texts = ["the cat sat on the mat with a hat and a bat ." * 5, "", "one"] * 8
    for nlp in (parser, textcat):
        one = [(doc.to_json(), doc.cats) for doc in nlp.pipe(texts)]
        two = [(doc.to_json(), doc.cats) for doc in nlp.pipe(texts, n_process=2, batch_size=4)]
        assert one == two, nlp.pipe_names
    print("ok")
    """
)


@pytest.mark.slow
def test_two_processes_under_default_threads_do_not_hang(tmp_path: Path):
    script = tmp_path / "pipe_two_processes.py"
    script.write_text(SCRIPT.format())
    # The repository root on the path, for tests.util (the fresh interpreter runs the
    # script from tmp_path).
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("ok")
