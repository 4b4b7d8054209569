"""Distillation: the contract components implement (contract.py, with the run's
DistillSettings and the one KL; contract_torch.py, contract_textcat.py), the
teacher-target codecs and the stand-in teacher (targets.py), the on-disk teacher cache
(cache.py), the teacher pass and its shard worker (annotate.py, worker.py,
ray_backend.py) and the training loop behind `spacy distill` (loop.py), with the gold
weight it applies as copies of gold docs for a shared encoder's group (copies.py).
Components import the contract and targets only; the loop imports no component."""
