"""Small helpers shared by components, benchmarks and commands."""
import resource
import sys

import torch
from thinc.api import Model


def count_parameters(model: Model) -> int:
    """Trainable parameters of a thinc model, the torch modules it wraps included."""
    total = 0
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                total += int(node.get_param(name).size)
        for shim in node.shims:
            torch_model = getattr(shim, "_model", None)
            if isinstance(torch_model, torch.nn.Module):
                total += sum(p.numel() for p in torch_model.parameters() if p.requires_grad)
    return total


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (a result row reports what a
    run cost, memory included; ru_maxrss is KB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
