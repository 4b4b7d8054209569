"""Conversions between thinc's lists of arrays and flat torch tensors.

Our torch modules take all tokens of a batch as one flat (N, width) tensor plus the
length of each sequence, and pad inside torch; the thinc side only flattens and
unflattens with its own ops, so nobody pads by hand.
"""
import contextlib
from io import BytesIO
from typing import Any, Callable, List, Optional, Tuple, cast

import torch
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v3, torch2xp, xp2torch
from thinc.shims import PyTorchShim
from thinc.types import Floats2d

from . import torch_threads
from .storage import serialize_weights


def load_weights_only(module: torch.nn.Module, state_bytes: bytes, device: "torch.device") -> torch.nn.Module:
    """Load a module's saved state without unpickling arbitrary objects.

    thinc's default deserializer calls `torch.load` with the library default, which
    unpickles anything before torch 2.6; our modules keep only tensors in their
    state dicts, so `weights_only=True` loads every model we save and refuses a
    tampered file instead of running code from it.
    """
    state = torch.load(BytesIO(state_bytes), map_location=device, weights_only=True)
    module.load_state_dict(state)
    module.to(device)
    return module


class AveragedPyTorchShim(PyTorchShim):
    """thinc's PyTorchShim, whose use_params also finds the averages thinc's optimizer
    keeps for it, and whose forward and backward run on greenkd's torch threads.

    The optimizer stores a PyTorch layer's averages under (shim id, parameter name),
    while thinc's use_params looks for "pytorch_<id>_<name>" keys only, so with
    `use_averages = true` spaCy would evaluate and save the raw weights of every
    PyTorch layer without a word. Both kinds of key are accepted here.

    Threads: one to annotate, torch's own setting to train (torch_threads.py says why).
    """

    def __call__(self, inputs: Any, is_train: bool) -> Tuple[Any, Callable]:
        with torch_threads.limited(is_train):
            output, backprop = super().__call__(inputs, is_train)

        def backprop_limited(*args: Any, **kwargs: Any) -> Any:
            with torch_threads.limited(is_train):
                return backprop(*args, **kwargs)

        return output, backprop_limited

    @contextlib.contextmanager
    def use_params(self, params):
        names = {name for name, _ in self._model.named_parameters()}
        state = {}
        for key, value in params.items():
            if isinstance(key, tuple) and len(key) == 2 and key[0] == self.id and key[1] in names:
                state[key[1]] = xp2torch(value, device=self.device)
        if not state:
            with super().use_params(params):
                yield
            return
        backup = {k: v.detach().clone() for k, v in self._model.state_dict().items()}
        self._model.load_state_dict(state, strict=False)
        try:
            yield
        finally:
            self._model.load_state_dict(backup)


def torch_wrapper(
    module: torch.nn.Module,
    convert_inputs: Optional[Callable] = None,
    convert_outputs: Optional[Callable] = None,
) -> Model:
    """Wrap a torch module as a thinc model that loads its weights safely, can store
    them compacted (models/storage.py) and evaluates with the optimizer's averages."""
    model = PyTorchWrapper_v3(
        module,
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        serialize_model=serialize_weights,
        deserialize_model=load_weights_only,
    )
    # The shim thinc built, with our use_params (same state, same serialization).
    model.shims[0].__class__ = AveragedPyTorchShim
    return model


def module_of(model: Model) -> torch.nn.Module:
    """The torch module inside a PyTorchWrapper model."""
    return cast(PyTorchShim, model.shims[0])._model


def sync_dropout(model: Model) -> None:
    """Pass the thinc dropout rate (set by spaCy's [training] dropout) to torch."""
    rate = model.attrs.get("dropout_rate")
    module = module_of(model)
    if rate is not None and hasattr(module, "set_dropout"):
        module.set_dropout(rate)


def flatten_list(
    model: Model, X: List[Floats2d], is_train: bool
) -> Tuple[torch.Tensor, List[int], Callable[[Any], List[Floats2d]]]:
    """Concatenate a list of (n_i, width) arrays into one torch tensor."""
    lengths = [x.shape[0] for x in X]
    width = X[0].shape[1] if X else model.get_dim("nI")
    flat = model.ops.flatten(X) if sum(lengths) else model.ops.alloc2f(0, width)
    flat_t = xp2torch(flat, requires_grad=is_train)

    def unflatten_grad(grad: Any) -> List[Floats2d]:
        if grad is None:
            return [model.ops.alloc2f(n, width) for n in lengths]
        return model.ops.unflatten(torch2xp(grad), lengths)

    return flat_t, lengths, unflatten_grad


def list_to_flat_inputs(model: Model, X: List[Floats2d], is_train: bool):
    """convert_inputs for modules called as module(flat, lengths)."""
    sync_dropout(model)
    flat_t, lengths, unflatten_grad = flatten_list(model, X, is_train)

    def backprop(d_inputs: ArgsKwargs) -> List[Floats2d]:
        return unflatten_grad(d_inputs.args[0])

    args = (flat_t, torch.tensor(lengths, dtype=torch.long))
    return ArgsKwargs(args=args, kwargs={}), backprop


def flat_to_list_outputs(model: Model, inputs_outputs: Tuple, is_train: bool):
    """convert_outputs for modules returning one flat (N, width) tensor."""
    X, Y_t = inputs_outputs
    lengths = [x.shape[0] for x in X]
    Y = model.ops.unflatten(torch2xp(Y_t), lengths) if sum(lengths) else [
        model.ops.alloc2f(0, Y_t.shape[1]) for _ in lengths
    ]

    def backprop(dY: List[Floats2d]) -> ArgsKwargs:
        d_flat = model.ops.flatten(dY) if sum(lengths) else model.ops.alloc2f(0, Y_t.shape[1])
        return ArgsKwargs(args=(Y_t,), kwargs={"grad_tensors": xp2torch(d_flat)})

    return Y, backprop
