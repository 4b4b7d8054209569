"""The classical anchor of the text classification benchmark: scikit-learn's TF-IDF
(word 1-2-grams, sublinear tf) + LinearSVC, trained and timed the way the spaCy rows are.

Why: a DAN or a spaCy BOW model that does not beat a linear SVM trained in seconds is
not worth its training CPU. The row is timed as `greenkd-bench-textcat`
times a pipeline: raw strings to labels (sklearn's own tokenizer), one thread, the test
texts repeated to at least --min-docs per pass, the best of --repeats passes at each
batch size; the training wall and CPU seconds are measured around `fit`. The fitted
model is pickled beside the results so its size on disk is comparable.

Usage: python benchmarks/run.py tfidf_svm TRAIN.spacy TEST.spacy --output RESULT.json
           [--system tfidf-svm] [--model-dir training/TASK/tfidf-svm]
"""
import argparse
import gc
import pickle
import resource
import sys
import time
from pathlib import Path
from typing import List, Sequence, Tuple

import spacy
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from benchmarks.rows import stamp, write_row
from greenkd_spacy.bench import class_scores, disk_bytes, macro_f1, one_thread, repeated_texts
from greenkd_spacy.data.corpus import load_docs


def labelled_texts(path: Path) -> Tuple[List[str], List[str]]:
    """Texts and their gold label (the highest of doc.cats) from a .spacy file."""
    docs = [doc for doc in load_docs(path, spacy.blank("xx").vocab) if doc.cats]
    return [doc.text for doc in docs], [max(doc.cats, key=doc.cats.get) for doc in docs]


def timed_predict(model, texts: Sequence[str], batch_size: int) -> float:
    gc.collect()  # as greenkd_spacy.bench.timed_pass: earlier passes' garbage not timed here
    start = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        model.predict(texts[i : i + batch_size])
    return time.perf_counter() - start


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train", type=Path, help=".spacy file with gold cats to fit on")
    parser.add_argument("test", type=Path, help=".spacy file with gold cats to score and time on")
    parser.add_argument("--output", "-o", type=Path, required=True, help="results file (JSON list) to add the row to")
    parser.add_argument("--system", default="tfidf-svm", help="row name")
    parser.add_argument("--model-dir", type=Path, default=None, help="where to pickle the fitted model (for its size on disk)")
    parser.add_argument("--batch-sizes", default="32,1000", help="comma-separated batch sizes to time")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per batch size; the fastest counts")
    parser.add_argument("--min-docs", type=int, default=10000, help="docs per timed pass (test texts repeated)")
    args = parser.parse_args(argv)
    one_thread()
    train_texts, train_gold = labelled_texts(args.train)
    texts, gold = labelled_texts(args.test)
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1), LinearSVC(C=1.0))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    model.fit(train_texts, train_gold)
    train_wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    train_cpu = (after.ru_utime + after.ru_stime) - (usage.ru_utime + usage.ru_stime)
    predicted = list(model.predict(texts))
    per_class = class_scores(predicted, gold)
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    timed_texts = repeated_texts(texts, args.min_docs)
    by_batch, seconds = {}, {}
    for batch_size in sizes:
        timings = [timed_predict(model, timed_texts, batch_size) for _ in range(args.repeats)]
        by_batch[str(batch_size)] = round(len(timed_texts) / min(timings), 1)
        seconds[str(batch_size)] = [round(t, 3) for t in timings]
    largest = str(max(sizes))
    analyzer = model.named_steps["tfidfvectorizer"].build_analyzer()
    n_words = sum(len(analyzer(text)) for text in texts)  # unigrams and bigrams per text
    n_tokens = sum(len(model.named_steps["tfidfvectorizer"].build_tokenizer()(text)) for text in texts)
    model_dir = args.model_dir
    if model_dir is not None:
        model_dir.mkdir(parents=True, exist_ok=True)
        with (model_dir / "model.pkl").open("wb") as file_:
            pickle.dump(model, file_)
    row = {
        "system": args.system,
        "accuracy": round(100 * sum(p == g for p, g in zip(predicted, gold)) / len(gold), 2),
        "macro_f1": macro_f1(per_class),
        "per_class": per_class,
        "docs": len(texts),
        "words": n_tokens,
        "timed_docs": len(timed_texts),
        "docs_per_second": by_batch[largest],
        "docs_per_second_by_batch": by_batch,
        "words_per_second": round(n_tokens * by_batch[largest] / len(texts)),
        "seconds": seconds,
        "params": int(model.named_steps["linearsvc"].coef_.size + model.named_steps["linearsvc"].intercept_.size),
        "features": len(model.named_steps["tfidfvectorizer"].vocabulary_),
        "threads": 1,
        "disk_bytes": disk_bytes(model_dir) if model_dir is not None else None,
        "train_wall_seconds": round(train_wall, 1),
        "train_cpu_seconds": round(train_cpu, 1),
        "train_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "train_docs": len(train_texts),
        "note": f"sklearn TfidfVectorizer(1-2-grams, sublinear tf) + LinearSVC(C=1); {n_words:,} analyzer features in the test texts; words are sklearn's tokens",
    }
    stamp(row, model_dir or "(not saved)", args.test)
    write_row(args.output, row)
    print({k: v for k, v in row.items() if not isinstance(v, (dict, list))})


if __name__ == "__main__":
    main(sys.argv[1:])
