"""The thinc wrapper of our PyTorch modules (greenkd_spacy/models/torch_bridge.py)."""
import numpy
import pytest
import torch
from thinc.api import Adam

from greenkd_spacy.models.torch_bridge import AveragedPyTorchShim, torch_wrapper


def _updated(use_averages: bool, steps: int = 5):
    torch.manual_seed(0)
    model = torch_wrapper(torch.nn.Linear(3, 2))
    model.initialize()
    optimizer = Adam(0.1, use_averages=use_averages)
    X = numpy.ones((4, 3), dtype="float32")
    for _ in range(steps):
        Y, backprop = model.begin_update(X)
        backprop(numpy.ones_like(Y))
        model.finish_update(optimizer)
    return model, optimizer, X


def test_use_params_applies_the_optimizers_averages_to_a_pytorch_layer():
    """thinc keeps a PyTorch layer's averages under (shim id, name), which its own shim
    never looks up: with use_averages = true spaCy would evaluate the raw weights."""
    model, optimizer, X = _updated(use_averages=True)
    shim = model.shims[0]
    assert isinstance(shim, AveragedPyTorchShim)
    module = shim._model
    raw = {name: p.detach().clone() for name, p in module.named_parameters()}
    raw_out = model.predict(X)
    with model.use_params(optimizer.averages):
        for name, p in module.named_parameters():
            average = torch.as_tensor(optimizer.averages[(shim.id, name)])
            assert torch.allclose(p.detach(), average)
            assert not torch.allclose(p.detach(), raw[name])
        averaged_out = model.predict(X)
    assert not numpy.allclose(averaged_out, raw_out)
    # The trained weights are back after the block.
    for name, p in module.named_parameters():
        assert torch.equal(p.detach(), raw[name])
    assert numpy.allclose(model.predict(X), raw_out)


def test_use_params_without_averages_changes_nothing():
    model, optimizer, X = _updated(use_averages=False)
    assert optimizer.averages is None
    out = model.predict(X)
    with model.use_params({}):
        assert numpy.allclose(model.predict(X), out)


def test_round_trip_keeps_the_averaging_shim(tmp_path):
    model, _, X = _updated(use_averages=True)
    copy = torch_wrapper(torch.nn.Linear(3, 2))
    copy.initialize()
    copy.from_bytes(model.to_bytes())
    assert isinstance(copy.shims[0], AveragedPyTorchShim)
    assert numpy.allclose(copy.predict(X), model.predict(X))
