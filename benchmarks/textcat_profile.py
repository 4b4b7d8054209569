"""Where a text classifier's time goes, stage by stage, beside spaCy's BOW.

The textcat bench times raw text to label. When the DAN misses its speed target against
spaCy's bag-of-words textcat, this says why: each pipeline's pass is split into the
tokenizer (shared by both: spaCy's `nlp.make_doc`), the classifier's prediction on the
tokenized docs (for a greenkd_textcat also split into n-gram featurization, i.e. making
and looking up the 1-4-gram keys, and the torch forward pass), and the rest of
`nlp.pipe` (setting `doc.cats`, batching). One thread, stages timed in alternating
rounds over the same texts, best round each. It also states the ceiling the tokenizer
puts on any speed ratio: if a classifier's own work cost nothing, its docs/s would be
(tokenizer + BOW's own work) / tokenizer times BOW's.

Usage: python benchmarks/run.py textcat_profile DAN_MODEL BOW_MODEL DATA.spacy
           [--rounds 5] [--batch-size 1000] [--min-docs 10000] [--output RESULT.json]
"""
import argparse
import datetime
import gc
import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import spacy
import torch
from spacy.language import Language
from spacy.tokens import DocBin

from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.bench import repeated_texts
from greenkd_spacy.models.dan import dan_module


def batches(items: List, size: int) -> List[List]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def classifier(nlp: Language):
    """The pipeline's one text classifier (the component whose predict is timed)."""
    pipes = [pipe for name, pipe in nlp.pipeline if hasattr(pipe, "predict")]
    if len(pipes) != 1:
        sys.exit(f"Expected one trainable component in {nlp.pipe_names}, found {len(pipes)}.")
    return pipes[0]


def stages(nlp: Language, texts: List[str], batch_size: int) -> Dict[str, Callable[[], None]]:
    """One callable per stage; each runs the stage over all the texts."""
    pipe = classifier(nlp)
    docs = [nlp.make_doc(text) for text in texts]
    doc_batches = batches(docs, batch_size)
    result: Dict[str, Callable[[], None]] = {
        "pipe": lambda: [None for _ in nlp.pipe(texts, batch_size=batch_size)],
        "tokenizer": lambda: [nlp.make_doc(text) for text in texts],
        "predict": lambda: [pipe.predict(batch) for batch in doc_batches],
    }
    if pipe.model.attrs.get("ngrams") is not None:  # greenkd_textcat's DAN
        table = pipe.model.attrs["ngrams"]
        module = dan_module(pipe.model)
        inputs = [table.batch_ids(batch) for batch in doc_batches]

        def forward() -> None:
            with torch.no_grad():
                for ids, offsets in inputs:
                    module(torch.from_numpy(ids), torch.from_numpy(offsets))

        result["featurize"] = lambda: [table.batch_ids(batch) for batch in doc_batches]
        result["forward"] = forward
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dan", help="greenkd_textcat pipeline directory")
    parser.add_argument("bow", help="spaCy textcat pipeline directory (the baseline)")
    parser.add_argument("data", help=".spacy file with the texts to classify")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--min-docs", type=int, default=10000)
    parser.add_argument("--output", help="write the profile to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    nlps = {"dan": spacy.load(args.dan), "bow": spacy.load(args.bow)}
    texts = [doc.text for doc in DocBin().from_disk(args.data).get_docs(nlps["dan"].vocab)]
    if not texts:
        sys.exit(f"{args.data} has no docs.")
    texts = repeated_texts(texts, args.min_docs)
    n_words = sum(len(doc) for doc in nlps["dan"].tokenizer.pipe(texts))
    jobs = {name: stages(nlp, texts, args.batch_size) for name, nlp in nlps.items()}
    for model_stages in jobs.values():  # warm up: lazy tables, allocator
        for run in model_stages.values():
            run()
    best: Dict[str, Dict[str, float]] = {name: {} for name in jobs}
    for _ in range(args.rounds):
        for name, model_stages in jobs.items():
            for stage, run in model_stages.items():
                gc.collect()
                start = time.perf_counter()
                run()
                seconds = time.perf_counter() - start
                best[name][stage] = min(best[name].get(stage, seconds), seconds)
    result = {
        "models": {"dan": args.dan, "bow": args.bow},
        "data": args.data,
        "docs_per_pass": len(texts),
        "words_per_pass": n_words,
        "batch_size": args.batch_size,
        "rounds": args.rounds,
        "threads": 1,
        "seconds_best": {name: {k: round(v, 4) for k, v in s.items()} for name, s in best.items()},
    }
    for name, s in best.items():
        rest = s["pipe"] - s["tokenizer"] - s["predict"]
        result.setdefault("share_of_pipe", {})[name] = {
            "tokenizer": round(s["tokenizer"] / s["pipe"], 3),
            "predict": round(s["predict"] / s["pipe"], 3),
            "rest": round(rest / s["pipe"], 3),
        }
        if "featurize" in s:
            result["share_of_pipe"][name]["featurize"] = round(s["featurize"] / s["pipe"], 3)
            result["share_of_pipe"][name]["forward"] = round(s["forward"] / s["pipe"], 3)
    dan, bow = best["dan"], best["bow"]
    result["docs_per_second"] = {name: round(len(texts) / s["pipe"], 1) for name, s in best.items()}
    result["ratio_dan_to_bow"] = round(bow["pipe"] / dan["pipe"], 3)
    # A classifier whose own work took no time would still pay the tokenizer and the
    # pipe's bookkeeping: the best ratio any such classifier could reach against BOW.
    floor = bow["tokenizer"] + max(0.0, bow["pipe"] - bow["tokenizer"] - bow["predict"])
    result["ratio_ceiling_tokenizer_bound"] = round(bow["pipe"] / floor, 3)
    result.update(
        command="python " + " ".join(sys.argv),
        date=datetime.date.today().isoformat(),
        cores=os.cpu_count(),
    )
    for name, s in best.items():
        parts = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in s.items())
        print(f"{name}: {parts}")
    print(
        f"DAN/BOW docs/s: {result['ratio_dan_to_bow']:.3f}x; ceiling with a free "
        f"classifier: {result['ratio_ceiling_tokenizer_bound']:.3f}x"
    )
    if args.output:
        atomic_write_json(Path(args.output), result)


if __name__ == "__main__":
    main()
