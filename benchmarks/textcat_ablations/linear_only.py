"""Ablation (spacy train --code): only the linear bag of greenkd.DAN.v2 (`linear = true`),
the deep part left out of the logits: spaCy's BOW model, trained the DAN's way
(SparseAdam, cross-entropy, its batches and stopping). Tells whether the DAN's gap to
BOW on SST-2 is the training recipe or the representation. (textcat-dan-seed-sweep)"""
from greenkd_spacy.models.pytorch.dan import DANModule


def linear_logits(self, ids, offsets):
    return self.linear(ids, offsets) + self.output.bias


DANModule.forward = linear_logits
