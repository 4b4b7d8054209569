"""Ablation (spacy train --code): the DAN's n-gram embeddings start at N(0, 0.01), a
tenth of the default's spread (see embed_init_zero.py). (textcat-dan-seed-sweep)"""
import torch

from greenkd_spacy.models.pytorch.dan import DANModule

_build = DANModule.__init__


def small_embeddings(self, *args, **kwargs):
    _build(self, *args, **kwargs)
    with torch.no_grad():
        torch.nn.init.normal_(self.embed.weight, std=0.01)


DANModule.__init__ = small_embeddings
