import os

import pytest
import torch

# No network in tests: transformers must load from local directories only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Keep tests deterministic and light on a 2-core machine: torch on one thread here and
# in every process a test starts (`spacy train`, `spacy distill`, study runners), which
# would otherwise take one thread per core each. Two test workers, each with a
# two-thread training under it, spin for cores they do not get. Tests of the thread
# settings themselves set the count they check explicitly.
torch.set_num_threads(1)
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory):
    """A tiny trained greenkd_parser teacher (teacher_dir/model) and its two gold
    sentences (teacher_dir/train.spacy), for the distillation tests."""
    from .util import save_trained_parser

    path = tmp_path_factory.mktemp("teacher")
    save_trained_parser(path, "train.spacy")
    return path
