"""How our weights are stored on disk: full precision, or compacted to float16.

On disk our components are mostly weights: hashed embedding tables (thinc) and the
PyTorch modules (BiLSTM, biaffine head, the DAN's n-gram table), four bytes a number.
Kept as float16 they take half the space; they are cast back to float32 when loaded,
so the loaded model has the same shapes, dtypes and speed, and can be trained on. The
values are rounded to float16's 11 significant bits; benchmarks/archive/compact.json
gives what that did to the scores of the default models.

What is compacted: every PyTorch module wrapped by models/torch_bridge.torch_wrapper
(it loads through load_weights_only, whose load_state_dict casts back), wherever it
sits; and the thinc parameters of greenkd's own components, which cast them back after
loading (pipeline/serialize.py). Thinc parameters of spaCy's components (a `tok2vec`
component running our encoder included) are written as they are: spaCy would load
them as float16 into its float32 layers.

Compaction is a step on a trained pipeline (`spacy greenkd-compact`), not a training
setting: checkpoints keep full precision, so a resumed run goes on from the weights it
stopped at.
"""
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import numpy
import torch
from spacy.language import Language
from thinc.api import Model
from thinc.shims import PyTorchShim

from ..atomic import save_pipeline

# The module attribute that asks serialize_weights for a storage dtype.
STORAGE_ATTR = "greenkd_storage_dtype"
STORAGE_DTYPES = {"float16": (torch.float16, numpy.float16)}
# Components that cast float16 parameters back after loading carry this class attribute.
UPCASTS_ATTR = "upcasts_stored_weights"


def serialize_weights(module: torch.nn.Module) -> bytes:
    """The module's state dict as torch.save bytes, its floating-point tensors cast to
    the module's storage dtype where one is set (see save_compacted)."""
    dtype: Optional[torch.dtype] = getattr(module, STORAGE_ATTR, None)
    state = module.state_dict()
    if dtype is not None:
        state = {key: value.to(dtype) if value.is_floating_point() else value for key, value in state.items()}
    buffer = BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def upcast_params(model: Model) -> None:
    """Give every float16 thinc parameter of the model back its float32 (after loading
    a compacted model)."""
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                value = node.get_param(name)
                if value.dtype == numpy.float16:
                    node.set_param(name, node.ops.asarray(value, dtype="float32"))


@contextmanager
def _compacted(nlp: Language, dtype: str) -> Iterator[Dict[str, int]]:
    """Within the block, greenkd's weights are set to be written as `dtype`; on leaving
    it (also by an exception), everything is as before."""
    torch_dtype, numpy_dtype = STORAGE_DTYPES[dtype]
    counts: Dict[str, int] = {}
    modules: Dict[int, torch.nn.Module] = {}  # by id: a module reached twice is marked once
    params: List[Tuple[Model, str, object]] = []
    try:
        for name, proc in nlp.components:
            model = getattr(proc, "model", None)
            if not isinstance(model, Model):
                continue
            ours = bool(getattr(proc, UPCASTS_ATTR, False))
            n_parts = 0
            for node in model.walk():
                for shim in node.shims:
                    if isinstance(shim, PyTorchShim) and getattr(shim, "_serialize_model", None) is serialize_weights:
                        setattr(shim._model, STORAGE_ATTR, torch_dtype)
                        modules[id(shim._model)] = shim._model
                        n_parts += 1
                if ours:
                    for param in node.param_names:
                        if node.has_param(param) and node.get_param(param).dtype == numpy.float32:
                            value = node.get_param(param)
                            params.append((node, param, value))
                            node.set_param(param, value.astype(numpy_dtype))
                            n_parts += 1
            if n_parts:
                counts[name] = n_parts
        yield counts
    finally:
        for node, param, value in reversed(params):
            node.set_param(param, value)
        for module in modules.values():
            module.__dict__.pop(STORAGE_ATTR, None)


def save_compacted(nlp: Language, path: Union[str, Path], dtype: str = "float16") -> Dict[str, int]:
    """Write the pipeline to `path` with greenkd's weights stored as `dtype`; the
    pipeline in memory is left as it was.

    RETURNS (Dict[str, int]): Per component, how many weight tensors and modules were
        stored compacted (components with nothing of greenkd's are left out).
    """
    if dtype not in STORAGE_DTYPES:
        raise ValueError(
            f"(greenkd-spacy) Unknown storage dtype '{dtype}': use one of {', '.join(STORAGE_DTYPES)}."
        )
    with _compacted(nlp, dtype) as counts:
        if counts:
            save_pipeline(nlp, Path(path))
    return counts
