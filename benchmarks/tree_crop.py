"""Write a treebank's training set with cropped copies of its sentences added
(Sahin & Steedman 2018, "Data augmentation via dependency tree morphing for
low-resource languages": a sentence cut down to its root and some of the root's
dependents is still a well-formed tree with the same heads and labels).

An exploration for the parser default's small-treebank miss (Tamil-TTB, 400 training sentences):
the copies are made once, with a fixed seed, and trained on with the shipped config
unchanged (`--paths.train` pointing at the output), so the probe needs no reader
change. Each sentence whose root has at least two dependents that are not punctuation
gets `copies` crops: each such dependent's subtree is kept with probability 1/2 (at
least one kept and at least one dropped); of the root's punctuation, only its first
punctuation dependent after the last kept word is kept (so a crop may end on a comma:
7 of Tamil-TTB's 379), the rest is dropped.

Usage: python benchmarks/run.py tree_crop TRAIN.spacy OUT.spacy [--copies 1] [--seed 0]
"""
import argparse
import random
from pathlib import Path
from typing import List, Optional

import spacy
from spacy.tokens import Doc, DocBin, Span


def crop(sent: Span, rng: random.Random) -> Optional[Doc]:
    """One cropped copy of a sentence, or None when its root has fewer than two
    dependents that are not punctuation."""
    root = sent.root
    children = [c for c in root.children if c.dep_ != "punct"]
    if len(children) < 2:
        return None
    kept = [c for c in children if rng.random() < 0.5]
    if not kept:
        kept = [rng.choice(children)]
    if len(kept) == len(children):
        kept.remove(rng.choice(kept))
    keep = {root.i}
    for child in kept:
        keep.update(t.i for t in child.subtree)
    last = max(keep)
    for child in root.children:
        if child.dep_ == "punct" and child.i > last:
            keep.update(t.i for t in child.subtree)
            break
    tokens = [t for t in sent if t.i in keep]
    index = {t.i: n for n, t in enumerate(tokens)}
    return Doc(
        sent.doc.vocab,
        words=[t.text for t in tokens],
        spaces=[bool(t.whitespace_) for t in tokens],
        tags=[t.tag_ for t in tokens],
        pos=[t.pos_ for t in tokens],
        morphs=[str(t.morph) for t in tokens],
        lemmas=[t.lemma_ for t in tokens],
        heads=[index[t.head.i] if t.i != root.i else index[t.i] for t in tokens],
        deps=[t.dep_ for t in tokens],
        sent_starts=[n == 0 for n in range(len(tokens))],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nlp = spacy.blank("xx")
    docs = list(DocBin().from_disk(args.train).get_docs(nlp.vocab))
    out = DocBin(store_user_data=False)
    added: List[Doc] = []
    sents = 0
    for doc in docs:
        out.add(doc)
        for sent in doc.sents:
            sents += 1
            for _ in range(args.copies):
                cropped = crop(sent, rng)
                if cropped is not None:
                    added.append(cropped)
    for cropped in added:
        out.add(cropped)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    out.to_disk(args.output)
    print(f"{sents} sentences, {len(added)} crops ({sum(len(d) for d in added)} tokens) -> {args.output}")


if __name__ == "__main__":
    main()
