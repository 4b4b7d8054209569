"""The core package beside transformers 5 (issue 19): no spacy-transformers needed.

`pip install greenkd-spacy` must give every student component, the distillation loop
and every non-transformer teacher, whatever transformers version the environment has.
.ci/run runs this file (with test_distill.py and the component tests) in a second
virtualenv that has the core and transformers>=5 and no teacher extra, and sets
GREENKD_CORE_ENV=1 there so the checks of that environment itself run too.
"""
import importlib.metadata
import importlib.util
import os
import subprocess
import sys

import pytest
import spacy

FACTORIES = ["greenkd_parser", "greenkd_textcat", "greenkd_textcat_multilabel", "greenkd_ner", "greenkd_chunker"]
CORE_ENV = os.environ.get("GREENKD_CORE_ENV") == "1"


def test_the_core_does_not_require_transformer_packages():
    requires = importlib.metadata.requires("greenkd-spacy") or []
    core = [req for req in requires if "extra ==" not in req]
    assert not [req for req in core if req.lower().startswith(("spacy-transformers", "transformers", "spacy-curated"))]
    teacher = [req for req in requires if 'extra == "teacher"' in req]
    assert any(req.startswith("spacy-transformers") for req in teacher)


def test_blank_pipeline_takes_every_component_in_a_fresh_interpreter():
    """spaCy loads every installed package's entry points on spacy.blank: a broken
    one (spacy-transformers under transformers 5) breaks all pipelines."""
    code = (
        "import spacy\n"
        f"for name in {FACTORIES!r}:\n"
        "    spacy.blank('en').add_pipe(name)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.skipif(not CORE_ENV, reason="checks the core-only environment that .ci/run builds (GREENKD_CORE_ENV=1)")
def test_core_environment_has_transformers_5_and_no_spacy_transformers():
    assert importlib.util.find_spec("spacy_transformers") is None
    major = int(importlib.metadata.version("transformers").split(".")[0])
    assert major >= 5
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_parser")
    assert nlp.pipe_names == ["greenkd_parser"]
