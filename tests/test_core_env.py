"""The core package beside transformers 5: no spacy-transformers needed.

`pip install greenkd-spacy` must give every student component, the distillation loop
and every non-transformer teacher, whatever transformers version the environment has.
.ci/run runs this file, test_distill.py, a textcat distillation and the fresh-interpreter
registry test (spacy.blank takes every component: spaCy loads every installed entry
point, and a broken one breaks all pipelines) in a second virtualenv that has the core
and transformers>=5 and no teacher extra, with GREENKD_CORE_ENV=1 so the checks of that
environment itself run too.
"""
import importlib.metadata
import importlib.util
import os

import pytest
import spacy

CORE_ENV = os.environ.get("GREENKD_CORE_ENV") == "1"


def test_the_core_does_not_require_transformer_packages():
    requires = importlib.metadata.requires("greenkd-spacy") or []
    core = [req for req in requires if "extra ==" not in req]
    assert not [req for req in core if req.lower().startswith(("spacy-transformers", "transformers", "spacy-curated"))]
    teacher = [req for req in requires if 'extra == "teacher"' in req]
    assert any(req.startswith("spacy-transformers") for req in teacher)


@pytest.mark.skipif(not CORE_ENV, reason="checks the core-only environment that .ci/run builds (GREENKD_CORE_ENV=1)")
def test_core_environment_has_transformers_5_and_no_spacy_transformers():
    assert importlib.util.find_spec("spacy_transformers") is None
    major = int(importlib.metadata.version("transformers").split(".")[0])
    assert major >= 5
    nlp = spacy.blank("en")
    nlp.add_pipe("greenkd_parser")
    assert nlp.pipe_names == ["greenkd_parser"]
