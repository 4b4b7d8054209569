"""Teacher targets: one codec per kind, and the stand-in teacher that serves them.

A record is what the teacher pass stores for one doc (keyed by `doc_key`); a codec
turns a teacher's output for a batch into records (`encode_*`) and records back into
the arrays a student's loss reads (`decode_*`). Kinds:

- head distributions (greenkd_parser): per token the top-k head log-probabilities
  (float16) with their head indices, the label log-probabilities at the label head,
  and that head;
- tag marginals (greenkd_ner / greenkd_chunker): per token the BILUO tag marginals;
- class probabilities (textcat of any kind): per doc one row.

During training the loop hands each student a `CachedTeacher` in place of the teacher
component: same name and labels, and the records. A component's `distill` asks the
codec of its kind for targets when given one, and the live teacher component otherwise
(spaCy v4's `distill(teacher_pipe, examples)`), so it never imports the cache or loop.
"""
import hashlib
from typing import Any, Dict, List, Sequence, Tuple

import numpy
from spacy.tokens import Doc, Span

from ..errors import Errors
from ..types import ParserTargets, Segment

# Teacher log-probability given to heads outside the cached top-k.
ABSENT_LOGPROB = -1e4


def doc_key(doc: Doc) -> str:
    """Identify a doc by its words, so any reader of the same corpus finds its row."""
    return hashlib.sha1("\x1f".join(token.text for token in doc).encode("utf8")).hexdigest()


class CachedTeacher:
    """Stands in for a teacher component in the training loop, answering from the
    records of the teacher pass."""

    def __init__(self, name: str, labels: Sequence[str], records: Dict[str, Dict]):
        self.name = name
        self.labels = tuple(labels)
        self.records = records

    def record(self, doc: Doc) -> Dict:
        record = self.records.get(doc_key(doc))
        if record is None:
            raise KeyError(Errors.E022.format(text=doc.text[:40]))
        return record


# ---------------------------------------------------------------------- head distributions


def encode_head_distributions(
    docs: Sequence[Doc], segments: Sequence[Segment], targets: ParserTargets, top_k: int
) -> Dict[str, Dict]:
    """Compress padded parser targets into one record per doc."""
    per_doc: Dict[int, List[int]] = {}
    for s, (d, _, _) in enumerate(segments):
        per_doc.setdefault(d, []).append(s)
    records = {}
    for d, rows in per_doc.items():
        bounds, arc_idx, arc_logp, label_logp, label_heads = [], [], [], [], []
        for s in rows:
            _, start, end = segments[s]
            n = end - start
            k = min(top_k, n + 1) if top_k > 0 else n + 1
            arcs = targets.arc_logprobs[s, :n, : n + 1]
            idx = numpy.argsort(-arcs, axis=1)[:, :k]
            bounds.append((start, end))
            arc_idx.append(idx)
            arc_logp.append(numpy.take_along_axis(arcs, idx, axis=1))
            label_logp.append(targets.label_logprobs[s, :n])
            label_heads.append(targets.label_heads[s, :n])
        width = max(a.shape[1] for a in arc_idx)
        arc_idx = [numpy.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=-1) for a in arc_idx]
        arc_logp = [
            numpy.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=ABSENT_LOGPROB)
            for a in arc_logp
        ]
        records[doc_key(docs[d])] = {
            "segments": [list(b) for b in bounds],
            "arc_idx": numpy.concatenate(arc_idx).astype("int16"),
            "arc_logp": numpy.concatenate(arc_logp).astype("float16"),
            "label_logp": numpy.concatenate(label_logp).astype("float16"),
            "label_heads": numpy.concatenate(label_heads).astype("int16"),
        }
    return records


def decode_head_distributions(
    teacher: CachedTeacher, docs: List[Doc], segments: List[Segment], gold_heads: numpy.ndarray
) -> ParserTargets:
    """The padded targets of a batch's segments, laid out like the student's scores."""
    n_sents, max_len = gold_heads.shape
    n_labels = len(teacher.labels)
    arc = numpy.full((n_sents, max_len, max_len + 1), ABSENT_LOGPROB, dtype="float32")
    label = numpy.zeros((n_sents, max_len, n_labels), dtype="float32")
    heads = numpy.full((n_sents, max_len), -1, dtype="int64")
    cursor: Dict[int, Tuple[Dict, Dict[Tuple[int, int], int]]] = {}
    for s, (d, start, end) in enumerate(segments):
        if d not in cursor:
            record = teacher.record(docs[d])
            offsets, position = {}, 0
            for a, b in record["segments"]:
                offsets[(a, b)] = position
                position += b - a
            cursor[d] = (record, offsets)
        record, offsets = cursor[d]
        if (start, end) not in offsets:
            raise KeyError(
                f"(greenkd-spacy) Sentence {start}-{end} of doc {d} is not in the "
                "teacher cache: the student segments sentences differently from the "
                "run that built it (max_sentence_length?). Delete the cache to rebuild."
            )
        n = end - start
        rows = slice(offsets[(start, end)], offsets[(start, end)] + n)
        idx = record["arc_idx"][rows].astype("int64")
        logp = record["arc_logp"][rows].astype("float32")
        valid = idx >= 0
        token_rows = numpy.nonzero(valid)[0]
        arc[s, token_rows, idx[valid]] = logp[valid]
        label[s, :n] = record["label_logp"][rows]
        heads[s, :n] = record["label_heads"][rows]
    return ParserTargets(arc, label, heads)


# ---------------------------------------------------------------------- tag marginals


def encode_tag_marginals(docs: Sequence[Doc], marginals: Sequence[numpy.ndarray]) -> Dict[str, Dict]:
    """Per-token tag marginals (float16; each row a distribution), one record per doc."""
    return {
        doc_key(doc): {"marginals": numpy.asarray(m).astype("float16"), "normalized": True}
        for doc, m in zip(docs, marginals)
    }


def decode_tag_marginals(teacher: CachedTeacher, docs: Sequence[Doc]) -> List[numpy.ndarray]:
    rows = []
    for doc in docs:
        record = teacher.record(doc)
        marginals = numpy.asarray(record["marginals"], dtype="float32")
        if not record.get("normalized") and not are_distributions(marginals):
            # A cache written before records said so may hold a spaCy tagger's raw
            # scores: Tagger.v2's softmax does not normalize at inference by default.
            marginals = softmax_rows(marginals)
        rows.append(marginals)
    return rows


def softmax_rows(scores: numpy.ndarray) -> numpy.ndarray:
    """Each row of raw scores as a distribution (numerically stable)."""
    shifted = numpy.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def are_distributions(rows: numpy.ndarray, tolerance: float = 1e-2) -> bool:
    """Whether every row is a probability distribution (float16 rounding allowed)."""
    if rows.size == 0:
        return True
    return bool(rows.min() >= 0.0 and rows.max() <= 1.0 + tolerance and numpy.all(numpy.abs(rows.sum(axis=-1) - 1.0) <= tolerance))


# ---------------------------------------------------------------------- class probabilities


def encode_class_probs(docs: Sequence[Doc], probs: numpy.ndarray) -> Dict[str, Dict]:
    """Class probabilities, one row per doc."""
    return {doc_key(doc): {"probs": numpy.asarray(row, dtype="float32")} for doc, row in zip(docs, probs)}


def decode_class_probs(teacher: CachedTeacher, docs: Sequence[Doc]) -> numpy.ndarray:
    rows = [numpy.asarray(teacher.record(doc)["probs"], dtype="float32") for doc in docs]
    return numpy.stack(rows) if rows else numpy.zeros((0, len(teacher.labels)), dtype="float32")


def class_prob_records(teacher_pipe: Any, teacher_docs: Sequence[Doc], student_docs: Sequence[Doc]) -> Dict[str, Dict]:
    """A text classifier teacher's probabilities (spaCy's and ours predict them) for a
    batch, as cache records keyed by the student's docs."""
    return encode_class_probs(student_docs, numpy.asarray(teacher_pipe.predict(teacher_docs), dtype="float32"))


def class_probs_of(teacher_pipe: Any, docs: Sequence[Doc]) -> numpy.ndarray:
    """The teacher's class probabilities for docs: from the cache the loop hands in, or
    from a live text classifier."""
    if isinstance(teacher_pipe, CachedTeacher):
        return decode_class_probs(teacher_pipe, docs)
    return numpy.asarray(teacher_pipe.predict(docs), dtype="float32")


# ---------------------------------------------------------------------- silver annotation


def silver_settings(kind: str) -> Dict[str, str]:
    """The cache-fingerprint settings of silver records of ``kind``. Silver records hold
    only the teacher's annotation, so they depend on the teacher, the corpus and the kind,
    never on the student: every student of one teacher's silver trees (spaCy's parser,
    greenkd_parser) or entities (spaCy's ner, greenkd_ner) must read one teacher pass.
    Students add nothing of their own here (a greenkd_parser's max_sentence_length once
    did, and a second student re-ran a 20-minute teacher pass for identical records)."""
    return {"kind": f"silver_{kind}"}


def is_silver(settings: Dict[str, Any]) -> bool:
    """Whether fingerprint settings (a component's teacher_settings()) are silver ones:
    then [distillation] top_k, which compresses distributions, does not shape them."""
    return str(settings.get("kind", "")).startswith("silver_")


def encode_silver(docs: Sequence[Doc], teacher_docs: Sequence[Doc], kind: str) -> Dict[str, Dict]:
    """The teacher's predicted annotation, one record per (student) doc. Kinds: "ents"
    (start, end, label); "deps" (heads as relative offsets, labels); "lemmas" (one
    string per token); "spans:KEY" (start, end, label of doc.spans[KEY]). Used by
    students that learn from annotation, not distributions."""
    records = {}
    for doc, annotated in zip(docs, teacher_docs):
        if kind == "ents":
            record: Dict = {"ents": [[e.start, e.end, e.label_] for e in annotated.ents]}
        elif kind == "lemmas":
            record = {"lemmas": [t.lemma_ for t in annotated]}
        elif kind.startswith("spans:"):
            group = annotated.spans.get(kind[len("spans:"):], [])
            record = {"spans": [[span.start, span.end, span.label_] for span in group]}
        else:
            record = {
                "heads": numpy.asarray([t.head.i - t.i for t in annotated], dtype="int16"),
                "deps": [t.dep_ for t in annotated],
            }
        records[doc_key(doc)] = record
    return records


def decode_silver(teacher: CachedTeacher, docs: Sequence[Doc], kind: str) -> List[Doc]:
    """Reference docs carrying the teacher's annotation, on the student's tokens."""
    references = []
    for doc in docs:
        record = teacher.record(doc)
        words = [t.text for t in doc]
        spaces = [bool(t.whitespace_) for t in doc]
        if kind == "ents":
            reference = Doc(doc.vocab, words=words, spaces=spaces)
            reference.set_ents([Span(reference, s, e, label=label) for s, e, label in record["ents"]], default="outside")
        elif kind == "lemmas":
            reference = Doc(doc.vocab, words=words, spaces=spaces, lemmas=list(record["lemmas"]))
        elif kind.startswith("spans:"):
            reference = Doc(doc.vocab, words=words, spaces=spaces)
            reference.spans[kind[len("spans:"):]] = [Span(reference, s, e, label=label) for s, e, label in record["spans"]]
        else:
            heads = [i + int(offset) for i, offset in enumerate(record["heads"])]
            reference = Doc(doc.vocab, words=words, spaces=spaces, heads=heads, deps=list(record["deps"]))
        references.append(reference)
    return references


def silver_references(teacher: Any, docs: Sequence[Doc], kind: str) -> List[Doc]:
    """The teacher's annotation of `docs` as reference docs: from the cache, or from a
    live teacher run on copies of the bare student docs, as the teacher pass runs it
    (on a gold reference spaCy's ner would keep the gold entities it finds there)."""
    if isinstance(teacher, CachedTeacher):
        return decode_silver(teacher, docs, kind)
    return list(teacher.pipe([doc.copy() for doc in docs]))
