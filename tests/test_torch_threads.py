"""greenkd's torch layers annotate on one thread and train on torch's own setting
unless GREENKD_TORCH_THREADS says otherwise, and give torch its own setting back."""
import numpy
import pytest
import torch
from thinc.api import ArgsKwargs

from greenkd_spacy.models import torch_threads
from greenkd_spacy.models.torch_bridge import torch_wrapper


class Recorder(torch.nn.Module):
    """A linear layer that notes the thread count in its forward and backward."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.seen = []

    def forward(self, x):
        self.seen.append(("forward", torch.get_num_threads()))
        out = self.linear(x)
        if out.requires_grad:
            out.register_hook(lambda grad: self.seen.append(("backward", torch.get_num_threads())) or grad)
        return out


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _model(module):
    def inputs(model, X, is_train):
        return ArgsKwargs(args=(torch.tensor(X),), kwargs={}), lambda d: X

    return torch_wrapper(module, convert_inputs=inputs)


def test_inference_runs_on_one_thread_training_on_torchs_and_torch_is_restored(two_threads, monkeypatch):
    monkeypatch.delenv(torch_threads.ENV, raising=False)
    module = Recorder()
    model = _model(module)
    X = numpy.ones((4, 3), dtype="float32")
    torch.set_num_threads(1)
    model.predict(X)
    torch.set_num_threads(2)
    model.predict(X)
    Y, backprop = model.begin_update(X)
    backprop(numpy.ones_like(Y))
    assert module.seen == [("forward", 1), ("forward", 1), ("forward", 2), ("backward", 2)]
    assert torch.get_num_threads() == 2


def test_the_environment_sets_the_threads(two_threads, monkeypatch):
    module = Recorder()
    model = _model(module)
    X = numpy.ones((4, 3), dtype="float32")
    monkeypatch.setenv(torch_threads.ENV, "0")  # torch's own setting
    model.predict(X)
    monkeypatch.setenv(torch_threads.ENV, "3")
    model.predict(X)
    Y, backprop = model.begin_update(X)
    backprop(numpy.ones_like(Y))
    assert module.seen == [("forward", 2), ("forward", 3), ("forward", 3), ("backward", 3)]
    assert torch.get_num_threads() == 2
    for bad in ("two", "-1"):
        monkeypatch.setenv(torch_threads.ENV, bad)
        with pytest.raises(ValueError, match="GREENKD_TORCH_THREADS"):
            model.predict(X)
