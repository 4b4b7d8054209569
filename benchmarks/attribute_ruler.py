"""spaCy's attribute_ruler against greenkd_attribute_ruler on a pipeline's own output:
microseconds per word of the ruler alone on one thread, and whether the whole
pipeline's annotation stays the same when one replaces the other.

Usage: python benchmarks/run.py attribute_ruler MODEL TEXT_FILE OUTPUT.json [--limit 2000]
       [--name attribute_ruler] [--note "quiet"]

MODEL holds an attribute_ruler of either kind; the other is built from its patterns.
The components before the ruler run once; then each ruler annotates copies of those
docs, in turns, three times (the fastest pass counts), and the pipeline after the ruler
runs on both results, whose every token attribute (POS, tag, morph, lemma, dependency,
entity) is compared. Each run appends a row to OUTPUT.json.
"""
import argparse
import datetime
import os
import time
from pathlib import Path

import numpy
import spacy
from spacy.attrs import DEP, ENT_IOB, ENT_TYPE, HEAD, LEMMA, MORPH, POS, TAG
from spacy.pipeline import AttributeRuler

from benchmarks.rows import append_row
from greenkd_spacy.bench import one_thread
from greenkd_spacy.data.text_corpus import iter_texts
from greenkd_spacy.pipeline.attribute_ruler import BatchAttributeRuler

COMPARED = [POS, TAG, MORPH, LEMMA, DEP, HEAD, ENT_IOB, ENT_TYPE]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("text", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--name", default="attribute_ruler")
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    source = nlp.get_pipe(args.name)
    rulers = {
        "spacy": AttributeRuler(nlp.vocab, "spacy"),
        "greenkd": BatchAttributeRuler(nlp.vocab, "greenkd"),
    }
    for ruler in rulers.values():
        ruler.add_patterns(source.patterns)
    texts = list(iter_texts(args.text, limit=args.limit))
    position = nlp.pipe_names.index(args.name)
    before, after = nlp.pipe_names[:position], nlp.pipe_names[position + 1:]
    one_thread()
    with nlp.select_pipes(enable=before):
        docs = list(nlp.pipe(texts))
    words = sum(len(doc) for doc in docs)
    best = {name: float("inf") for name in rulers}
    results = {}
    for _ in range(3):
        for name, ruler in rulers.items():
            copies = [doc.copy() for doc in docs]
            start = time.perf_counter()
            results[name] = list(ruler.pipe(copies))
            best[name] = min(best[name], time.perf_counter() - start)
    for name in rulers:
        with nlp.select_pipes(enable=after):
            results[name] = list(nlp.pipe(results[name]))
    differing = sum(
        not numpy.array_equal(a.to_array(COMPARED), b.to_array(COMPARED))
        for a, b in zip(results["spacy"], results["greenkd"])
    )
    row = {
        "model": str(args.model), "text": str(args.text), "docs": len(docs), "words": words,
        "patterns": len(source.patterns), "note": args.note, "cores": os.cpu_count(),
        "date": datetime.date.today().isoformat(),
        "us_per_word": {name: round(seconds / words * 1e6, 2) for name, seconds in best.items()},
        "speedup": round(best["spacy"] / best["greenkd"], 2),
        "docs_with_any_difference": differing,
    }
    append_row(args.output, row)
    for name, value in row["us_per_word"].items():
        print(f"{name:8s} {value:7.2f} us/word")
    print(f"{row['speedup']}x; docs whose annotation differs after the whole pipeline: {differing} of {len(docs)}")


if __name__ == "__main__":
    main()
