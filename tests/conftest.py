import pytest
import torch

# Keep tests deterministic and light on this 2-core machine.
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "slow" in item.keywords and config.getoption("-m") in ("", None):
            pass
