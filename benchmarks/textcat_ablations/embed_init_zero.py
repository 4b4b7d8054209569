"""Ablation (spacy train --code): the DAN's n-gram embeddings start at zero instead of
N(0, 0.1). A row SparseAdam touches a few times moves by ~0.002 per step, so a rare
n-gram keeps its random start and adds noise to the mean; BOW's weights start at zero.
(textcat-dan-seed-sweep)"""
import torch

from greenkd_spacy.models.pytorch.dan import DANModule

_build = DANModule.__init__


def zero_embeddings(self, *args, **kwargs):
    _build(self, *args, **kwargs)
    with torch.no_grad():
        self.embed.weight.zero_()


DANModule.__init__ = zero_embeddings
