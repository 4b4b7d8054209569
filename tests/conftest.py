import os

import torch

# No network in tests: transformers must load from local directories only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Keep tests deterministic and light on a 2-core machine.
torch.set_num_threads(1)
