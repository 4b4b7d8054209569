import os

import pytest
import torch

# No network in tests: transformers must load from local directories only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Keep tests deterministic and light on a 2-core machine.
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory):
    """A tiny trained greenkd_parser teacher (teacher_dir/model) and its two gold
    sentences (teacher_dir/train.spacy), for the distillation tests."""
    from .util import save_trained_parser

    path = tmp_path_factory.mktemp("teacher")
    save_trained_parser(path, "train.spacy")
    return path
