"""greenkd_attribute_ruler: spaCy's attribute_ruler with the same patterns and the same
results, set for a batch of docs at a time.

Why: spaCy's English pipelines map every tag to its POS and morphology with an
`attribute_ruler` of about 180 patterns. It runs the Matcher over each doc and then sets
each match's attributes in a Python call per match, about 30 us per word on one thread:
as much as the rest of a distilled student's tagger, parser and ner together. A student
copies this component from its teacher unchanged, so it paid the teacher's cost.

Almost all of those patterns are one token long and test equality (or `IN`) on the
token's tag, lowercase form, dependency label or `IS_SPACE`. Those are compiled to
boolean masks over the attribute columns of the whole batch; the rest (several tokens,
`REGEX`, other operators or attributes) still go through a Matcher. As in spaCy, the
matches are all found on the docs as they came in, and where several patterns set one
attribute of one token the later pattern wins. Only the attributes spaCy's ruler sets
on the token (`POS`, `TAG`, `MORPH`, `LEMMA`, `DEP`) are compiled; a ruler whose
patterns set anything else (`NORM`, a lexical flag, extension attributes) runs as
spaCy's does, so nothing changes meaning.

The component is spaCy's AttributeRuler (same patterns file, same `initialize`, same
scorer); only how a batch is annotated differs.
"""
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
from spacy.errors import Errors as SpacyErrors
from spacy.attrs import DEP, IS_SPACE, LEMMA, LOWER, MORPH, NORM, ORTH, POS, TAG
from spacy.language import Language
from spacy.matcher import Matcher
from spacy.pipeline import AttributeRuler
from spacy.tokens import Doc
from spacy.util import minibatch

# Token attributes a pattern may test in the compiled path: their values are string
# hashes (or 0/1 for IS_SPACE) in Doc.to_array, compared as spaCy's Matcher compares them.
_TESTED = {"TAG": TAG, "LOWER": LOWER, "ORTH": ORTH, "NORM": NORM, "DEP": DEP, "IS_SPACE": IS_SPACE}
# Attributes the compiled path sets, as Doc.from_array writes them.
_SET = (POS, TAG, MORPH, LEMMA, DEP)
# Each set attribute's row in the batch's (attributes, tokens) arrays.
_ROW = {attr: row for row, attr in enumerate(_SET)}
_READ = tuple(_TESTED.values())

# One condition of a token pattern: a column of the tested attributes, how it tests
# ("in", "not_in", "regex") and what it tests against (hashes, or a compiled regex).
Condition = Tuple[int, str, Any]
# A fixed-length pattern: the conditions of each of its tokens.
Compiled = List[List[Condition]]


def _condition(vocab: Any, name: str, test: Any) -> Optional[Condition]:
    """The compiled form of one `NAME: test` of a token pattern, or None if the
    Matcher must handle it."""
    if name not in _TESTED:
        return None
    column = _READ.index(_TESTED[name])
    if isinstance(test, dict):
        if len(test) != 1:
            return None
        (operator, values), = test.items()
        if operator == "REGEX" and isinstance(values, str) and name != "IS_SPACE":
            return column, "regex", re.compile(values)
        if operator not in ("IN", "NOT_IN") or not isinstance(values, (list, tuple)):
            return None
        kind = operator.lower()
    else:
        kind, values = "in", [test]
    keys = []
    for value in values:
        if name == "IS_SPACE":
            if not isinstance(value, bool):
                return None
            keys.append(int(value))
        elif isinstance(value, str):
            keys.append(vocab.strings.add(value))
        else:
            return None
    return column, kind, numpy.asarray(keys, dtype="uint64")


def _compile_pattern(vocab: Any, pattern: List[Dict[str, Any]]) -> Optional[Compiled]:
    """A fixed-length token pattern as conditions on the batch's columns; None if the
    masks cannot decide it (an operator, another attribute or predicate)."""
    compiled = []
    for token in pattern:
        if not isinstance(token, dict) or "OP" in token:
            return None
        conditions = [_condition(vocab, name, test) for name, test in token.items()]
        if any(condition is None for condition in conditions):
            return None
        compiled.append(conditions)  # type: ignore[arg-type]
    return compiled or None


def _token_mask(vocab: Any, tested: numpy.ndarray, conditions: List[Condition]) -> numpy.ndarray:
    """Which tokens of the batch pass every condition of one pattern token."""
    hit = numpy.ones(tested.shape[0], dtype=bool)
    for column, kind, against in conditions:
        values = tested[:, column]
        if kind == "regex":
            # Each distinct string once, as spaCy's predicate does with re.search.
            unique, inverse = numpy.unique(values, return_inverse=True)
            passed = numpy.asarray([bool(against.search(vocab.strings[int(key)])) for key in unique], dtype=bool)
            hit &= passed[inverse.reshape(-1)]
        elif kind == "in":
            hit &= values == against[0] if against.shape[0] == 1 else numpy.isin(values, against)
        else:
            hit &= ~numpy.isin(values, against)
    return hit


class BatchAttributeRuler(AttributeRuler):
    """spaCy's AttributeRuler, annotating a batch at a time (see the module docstring)."""

    def __init__(self, *args: Any, batch_size: int = 1000, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batch_size = batch_size
        self._compiled_for: Optional[int] = None

    def clear(self) -> None:
        super().clear()
        self._compiled_for = None

    def _compile(self) -> None:
        """Split the patterns into compiled ones and those left to a Matcher; done again
        whenever patterns were added since."""
        n_patterns = len(self.attrs)
        self._masks: List[Tuple[int, List[Compiled]]] = []
        self._fallback = Matcher(self.vocab, validate=self.validate)
        self._values: Dict[int, numpy.ndarray] = {attr: numpy.zeros(n_patterns, dtype="uint64") for attr in _SET}
        self._sets: List[Tuple[int, ...]] = []
        self._batched = True
        for attr_id, entry in enumerate(self.patterns):
            attrs = self.attrs[attr_id]
            if any(key not in _ROW for key in attrs):
                self._batched = False  # NORM, a lexical flag or "_": spaCy's own way
                break
            self._sets.append(tuple(attrs))
            for attr, value in attrs.items():
                self._values[attr][attr_id] = value
            alternatives = [_compile_pattern(self.vocab, pattern) for pattern in entry["patterns"]]
            index = self.indices[attr_id]
            if all(alt is not None and -len(alt) <= index < len(alt) for alt in alternatives):
                self._masks.append((attr_id, alternatives))  # type: ignore[arg-type]
            else:  # the Matcher decides, and raises spaCy's error for a bad index
                self._fallback.add(str(attr_id), entry["patterns"])
        self._compiled_for = n_patterns

    def __call__(self, doc: Doc) -> Doc:
        """Annotate one doc; on an error, return what the error handler returns, as
        spaCy's ruler does."""
        error_handler = self.get_error_handler()
        try:
            self._annotate_batch([doc])
            return doc
        except Exception as error:
            return error_handler(self.name, self, [doc], error)

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        """Annotate the docs batch by batch, with the same result as spaCy's ruler.

        When a batch fails, its docs are redone one by one through __call__, so the
        error handler sees each failing doc and what it returns is yielded in the
        doc's place, as spaCy's ruler (whose pipe calls it doc by doc) does."""
        for docs in minibatch(stream, size=batch_size or self.batch_size):
            try:
                self._annotate_batch(docs)
            except Exception:
                yield from (self(doc) for doc in docs)
            else:
                yield from docs

    def _annotate_batch(self, docs: List[Doc]) -> None:
        if self._compiled_for != len(self.attrs):
            self._compile()
        if self._batched:
            self._annotate(docs)
        else:
            for doc in docs:
                self.set_annotations(doc, self.match(doc))

    def _annotate(self, docs: Sequence[Doc]) -> None:
        docs = [doc for doc in docs if len(doc)]
        if not docs:
            return
        lengths = [len(doc) for doc in docs]
        tested = numpy.concatenate([doc.to_array(list(_READ)) for doc in docs]).astype("uint64")
        current = numpy.concatenate([doc.to_array(list(_SET)) for doc in docs]).astype("uint64")
        # winner[a][i]: the last pattern that sets attribute a of token i (-1: none).
        winner = numpy.full((len(_SET), tested.shape[0]), -1, dtype="int64")
        n_tokens = tested.shape[0]
        doc_of = numpy.repeat(numpy.arange(len(docs)), lengths)
        for attr_id, alternatives in self._masks:
            targets = numpy.zeros(n_tokens, dtype=bool)
            for pattern in alternatives:
                # starts[i]: the pattern matches from token i, inside one doc.
                width = len(pattern)
                starts = _token_mask(self.vocab, tested, pattern[0])
                for k in range(1, width):
                    following = numpy.zeros(n_tokens, dtype=bool)
                    following[: n_tokens - k] = _token_mask(self.vocab, tested, pattern[k])[k:] & (doc_of[k:] == doc_of[:-k])
                    starts &= following
                index = self.indices[attr_id] % width
                targets[numpy.flatnonzero(starts) + index] = True
            for attr in self._sets[attr_id]:
                winner[_ROW[attr], targets] = attr_id
        if len(self._fallback):
            offsets = numpy.cumsum([0] + lengths[:-1])
            for doc, offset in zip(docs, offsets):
                for match_id, start, end in self._fallback(doc, allow_missing=True, as_spans=False):
                    attr_id = int(self.vocab.strings[match_id])
                    span = doc[start:end]
                    try:
                        token = span[self.indices[attr_id]].i
                    except IndexError:  # spaCy's ruler says it so
                        raise ValueError(SpacyErrors.E1001.format(
                            patterns=self._fallback.get(match_id), span=[t.text for t in span], index=self.indices[attr_id],
                        )) from None
                    for attr in self._sets[attr_id]:
                        row = _ROW[attr]
                        if attr_id > winner[row, offset + token]:
                            winner[row, offset + token] = attr_id
        changed = winner >= 0
        if not changed.any():
            return
        for attr, row in _ROW.items():
            where = changed[row]
            current[where, row] = self._values[attr][winner[row, where]]
        ends = numpy.cumsum(lengths)
        for doc, start, end in zip(docs, ends - lengths, ends):
            if changed[:, start:end].any():
                doc.from_array(list(_SET), current[start:end])


@Language.factory(
    "greenkd_attribute_ruler",
    default_config={"validate": False, "scorer": {"@scorers": "spacy.attribute_ruler_scorer.v1"}},
    default_score_weights={"tag_acc": None, "pos_acc": None, "morph_acc": None, "lemma_acc": None},
)
def make_attribute_ruler(nlp: Language, name: str, validate: bool, scorer: Optional[Callable]) -> BatchAttributeRuler:
    """spaCy's attribute_ruler (same patterns and results), annotating a batch at a time."""
    return BatchAttributeRuler(nlp.vocab, name, validate=validate, scorer=scorer)
