"""Where a student's tagging errors beyond its teacher's are: on words the student never
met in training (neither in the labeled corpus nor in the unlabeled text), rare ones, or
frequent ones. Both pipelines tag the gold sentences of DATA (gold tokens and sentence
starts, one sentence at a time, as the bench does); UPOS and morphology errors are
counted per bucket of the word's count in the training texts, and, with --vectors, how
many of the unseen tokens a static-vectors table has a row for.

Usage: python scripts/unseen_words.py STUDENT TEACHER DATA.spacy --texts TRAIN.spacy
           UNLABELED.txt.gz [--vectors PIPELINE] --output OUT.json
"""
import argparse
import gzip
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin

BUCKETS = ("unseen", "seen 1-4 times", "seen 5+ times")


def word_counts(paths: Iterable[Path], nlp: Language) -> Counter:
    """Lowercased word counts over .spacy corpora and text files (one text per line)."""
    counts: Counter = Counter()
    for path in paths:
        if path.suffix == ".spacy":
            for doc in DocBin().from_disk(path).get_docs(nlp.vocab):
                counts.update(token.lower_ for token in doc)
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf8") as file_:
            for line in file_:
                counts.update(token.lower_ for token in nlp.make_doc(line.strip()))
    return counts


def bucket(count: int) -> str:
    return BUCKETS[0] if count == 0 else BUCKETS[1] if count < 5 else BUCKETS[2]


def tag(model: str, sentences: List[Doc]) -> List[Doc]:
    """The pipeline's annotation of each gold sentence (its tokens and sentence start)."""
    nlp = spacy.load(model)
    docs = []
    for sent in sentences:
        doc = Doc(nlp.vocab, words=[t.text for t in sent], spaces=[bool(t.whitespace_) for t in sent])
        doc[0].is_sent_start = True
        for token in doc[1:]:
            token.is_sent_start = False
        docs.append(doc)
    return list(nlp.pipe(docs, batch_size=256))


def main(args: argparse.Namespace) -> Dict:
    blank = spacy.blank("en")
    counts = word_counts(args.texts, blank)
    gold = [sent.as_doc() for doc in DocBin().from_disk(args.data).get_docs(blank.vocab) for sent in doc.sents]
    systems = {"student": tag(args.student, gold), "teacher": tag(args.teacher, gold)}
    # String hashes are the same in every vocab: the table is looked up by them.
    vectors = spacy.load(args.vectors).vocab.vectors if args.vectors else None
    table = {name: Counter() for name in BUCKETS}
    for i, sent in enumerate(gold):
        for j, token in enumerate(sent):
            row = table[bucket(counts[token.lower_])]
            row["tokens"] += 1
            if vectors is not None:
                row["with_vector"] += int(token.orth in vectors or token.lower in vectors)
            for name, docs in systems.items():
                predicted = docs[i][j]
                row[f"{name}_upos_errors"] += predicted.pos_ != token.pos_
                row[f"{name}_morph_errors"] += str(predicted.morph) != str(token.morph)
    result = {
        "student": args.student, "teacher": args.teacher, "data": str(args.data),
        "texts": [str(p) for p in args.texts], "vectors": args.vectors,
        "buckets": {name: dict(row) for name, row in table.items()},
    }
    for name, row in table.items():
        excess = row["student_upos_errors"] - row["teacher_upos_errors"]
        vec = f", {row['with_vector']} with a vector" if vectors is not None else ""
        print(f"{name}: {row['tokens']} tokens{vec}; UPOS errors student {row['student_upos_errors']}, "
              f"teacher {row['teacher_upos_errors']} ({excess:+d}); morph errors student "
              f"{row['student_morph_errors']}, teacher {row['teacher_morph_errors']}")
    srsly.write_json(args.output, result)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("student")
    parser.add_argument("teacher")
    parser.add_argument("data", type=Path)
    parser.add_argument("--texts", type=Path, nargs="+", required=True, help="the student's training texts")
    parser.add_argument("--vectors", help="a pipeline whose vectors table to check the unseen words against")
    parser.add_argument("--output", type=Path, required=True)
    main(parser.parse_args())
