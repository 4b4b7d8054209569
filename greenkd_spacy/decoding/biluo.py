"""Spans from BILUO tag indices without a Python step per token.

The CRF's Viterbi path is well formed (its constraints forbid O -> I, B -> O ...), so
the k-th B of a path closes at the k-th L and each U is a span alone: the spans are two
`numpy.flatnonzero` calls and one `Span` per entity, where spaCy's
`biluo_tags_to_spans` reads every token's tag string. Entities need no spans at all:
each tag maps to a token's entity IOB state and type, so a whole batch's paths are
checked once and written with one `Doc.from_array` per doc. A path that is not well
formed (only possible from a hand-made tag sequence) goes through spaCy's function.
"""
from typing import List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import ENT_ID, ENT_IOB, ENT_KB_ID, ENT_TYPE
from spacy.tokens import Doc, Span
from spacy.training import biluo_tags_to_spans

OUT, BEGIN, INSIDE, LAST, UNIT = range(5)
_KINDS = {"O": OUT, "B": BEGIN, "I": INSIDE, "L": LAST, "U": UNIT}
# A token's ent_iob per tag kind, as spaCy stores it (Token.iob_strings(): "", I, O, B):
# an entity's first token is B, its others I; a single-token entity is B.
_IOB = {OUT: 2, BEGIN: 3, INSIDE: 1, LAST: 1, UNIT: 3}
_ENT_ATTRS = [ENT_IOB, ENT_TYPE, ENT_KB_ID, ENT_ID]


class BiluoDecoder:
    """Tag indices -> spans for one tag set ("O", "B-PER", "I-PER", ...)."""

    def __init__(self, tags: Sequence[str]):
        self.tags = list(tags)
        parts = [("O", "") if tag == "O" else tuple(tag.split("-", 1)) for tag in self.tags]
        self.kinds = numpy.asarray([_KINDS[kind] for kind, _ in parts], dtype="int8")
        self.labels = [label for _, label in parts]
        names = sorted(set(self.labels))
        self.label_ids = numpy.asarray([names.index(label) for label in self.labels], dtype="int64")

    def spans(self, doc: Doc, tag_ids: Sequence[int]) -> List[Span]:
        """The spans of one doc's path (its length is the doc's)."""
        ids = numpy.asarray(tag_ids, dtype="int64")
        if not len(ids):
            return []
        kinds = self.kinds[ids]
        bounds = self._bounds(kinds, self.label_ids[ids])
        if bounds is None:
            return biluo_tags_to_spans(doc, [self.tags[int(i)] for i in ids])
        starts, ends = bounds
        labels = self.labels
        return [Span(doc, int(s), int(e), label=labels[int(ids[s])]) for s, e in zip(starts, ends)]

    def batch_spans(self, docs: Sequence[Doc], paths: Sequence[Sequence[int]]) -> List[List[Span]]:
        """Each doc's spans, as `spans` gives them, with the batch's paths checked and
        bounded in one go: chunks are about every other word, and per-doc array work
        cost more than the network on sentence-length docs."""
        docs = list(docs)
        ids = [numpy.asarray(path, dtype="int64") for path in paths]
        bounds = self._batch_bounds(ids)
        if bounds is None:
            return [self.spans(doc, path) for doc, path in zip(docs, ids)]
        starts, ends, offsets = bounds
        if not len(starts):
            return [[] for _ in docs]
        strings = docs[0].vocab.strings
        hashes = numpy.asarray([strings.add(label) if label else 0 for label in self.labels], dtype="uint64")
        labels = hashes[numpy.concatenate(ids)[starts]].tolist()
        cuts = numpy.searchsorted(starts, offsets).tolist()
        starts, ends, offsets = starts.tolist(), ends.tolist(), offsets.tolist()
        result = []
        for d, doc in enumerate(docs):
            base = offsets[d]
            result.append([Span(doc, starts[k] - base, ends[k] - base, label=labels[k]) for k in range(cuts[d], cuts[d + 1])])
        return result

    def _batch_bounds(self, ids: List[numpy.ndarray]) -> Optional[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]:
        """(starts, ends) of every span of the concatenated paths and each doc's offset
        into them (one more than the docs: the total); None if a path is not well
        formed or a span would run from one doc into the next."""
        lengths = numpy.asarray([len(path) for path in ids], dtype="int64")
        offsets = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
        if not len(ids) or not offsets[-1]:
            return numpy.zeros(0, dtype="int64"), numpy.zeros(0, dtype="int64"), offsets
        flat = numpy.concatenate(ids)
        bounds = self._bounds(self.kinds[flat], self.label_ids[flat])
        if bounds is None:
            return None
        starts, ends = bounds
        doc_of = numpy.repeat(numpy.arange(len(ids)), lengths)
        if not numpy.array_equal(doc_of[starts], doc_of[ends - 1]):
            return None
        return starts, ends, offsets

    def write_entities(self, docs: Sequence[Doc], paths: Sequence[Sequence[int]]) -> None:
        """Set every doc's entities from its path (one per doc, of the doc's length),
        replacing the ones it had (tokens outside every entity become "O"), as
        `doc.set_ents(self.spans(doc, path), default="outside")` would. The batch's
        paths are checked in one go; building a Span per entity and validating them
        per doc cost more than the network on sentence-length docs."""
        docs = list(docs)
        ids = [numpy.asarray(path, dtype="int64") for path in paths]
        if not len(docs) or not sum(len(path) for path in ids):
            for doc in docs:
                doc.set_ents([], default="outside")
            return
        bounds = self._batch_bounds(ids)
        if bounds is None:
            for doc, path in zip(docs, ids):
                doc.set_ents(self.spans(doc, path), default="outside")
            return
        offsets = bounds[2]
        values = self._entity_table(docs[0])[numpy.concatenate(ids)]
        for doc, start, end in zip(docs, offsets[:-1], offsets[1:]):
            if end > start:
                doc.from_array(_ENT_ATTRS, values[start:end])

    def _entity_table(self, doc: Doc) -> numpy.ndarray:
        """(n_tags, 4) uint64: each tag's ENT_IOB, ENT_TYPE, ENT_KB_ID, ENT_ID values,
        the label strings added to the vocab's string store."""
        strings = doc.vocab.strings
        table = numpy.zeros((len(self.tags), len(_ENT_ATTRS)), dtype="uint64")
        for i, (kind, label) in enumerate(zip(self.kinds, self.labels)):
            table[i, 0] = _IOB[int(kind)]
            table[i, 1] = strings.add(label) if label else 0
        return table

    @staticmethod
    def _bounds(kinds: numpy.ndarray, labels: numpy.ndarray) -> Optional[Tuple[numpy.ndarray, numpy.ndarray]]:
        begins = numpy.flatnonzero(kinds == BEGIN)
        lasts = numpy.flatnonzero(kinds == LAST)
        units = numpy.flatnonzero(kinds == UNIT)
        if len(begins) != len(lasts) or not _well_formed(kinds, labels, begins, lasts):
            return None
        starts = numpy.concatenate([begins, units])
        ends = numpy.concatenate([lasts, units]) + 1
        order = numpy.argsort(starts, kind="stable")
        return starts[order], ends[order]


def _well_formed(kinds: numpy.ndarray, labels: numpy.ndarray, begins: numpy.ndarray, lasts: numpy.ndarray) -> bool:
    """Each B closes at the next L of its label with only I of that label between, and
    every I is inside one."""
    if not len(begins):
        return not numpy.any(kinds == INSIDE)
    if numpy.any(lasts < begins) or numpy.any(begins[1:] <= lasts[:-1]):
        return False
    if numpy.any(labels[begins] != labels[lasts]):
        return False
    inside = numpy.zeros(len(kinds) + 1, dtype="int64")
    numpy.add.at(inside, begins + 1, 1)
    numpy.add.at(inside, lasts, -1)
    within = numpy.cumsum(inside)[: len(kinds)] > 0
    if not numpy.all((kinds == INSIDE) == within):
        return False
    # The label of the entity each token is in, carried from its B.
    entity = numpy.zeros(len(kinds) + 1, dtype="int64")
    numpy.add.at(entity, begins, numpy.arange(1, len(begins) + 1))
    numpy.add.at(entity, lasts + 1, -numpy.arange(1, len(begins) + 1))
    owner = numpy.cumsum(entity)[: len(kinds)]
    inner = numpy.flatnonzero(kinds == INSIDE)
    return bool(numpy.all(labels[inner] == labels[begins[owner[inner] - 1]]))
