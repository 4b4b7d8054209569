"""The classical anchor of the text classification benchmark: scikit-learn's TF-IDF
(word 1-2-grams, sublinear tf) + LinearSVC, trained and timed the way the spaCy rows are.

Why: a DAN or a spaCy BOW model that does not beat a linear SVM trained in seconds is
not worth its training CPU. `fit` trains it and pickles it into a model directory (its
size on disk is comparable; the seconds `fit` itself took are kept beside it); `bench`
scores and times it as `greenkd-bench-textcat` times a pipeline: raw strings to labels
(sklearn's own tokenizer), one thread, the test texts repeated to at least --min-docs
per pass, the best of --repeats passes at each batch size. The study runner
(projects/textcat/spec.yml) runs `fit` as the system's training, inside the cost timer,
and `bench` as its measurement.

Usage: python benchmarks/run.py tfidf_svm fit TRAIN.spacy MODEL_DIR
       python benchmarks/run.py tfidf_svm bench MODEL_DIR TEST.spacy [--output MEASUREMENT.json]
           [--batch-sizes 32,1000] [--repeats 3] [--min-docs 10000]
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
import srsly
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from greenkd_spacy.atomic import atomic_write_json
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


def fit(train: Path, model_dir: Path) -> dict:
    """Fit on TRAIN's texts and gold labels; pickle the model into MODEL_DIR (model.pkl)
    with the wall and CPU seconds of `fit` (fit.json)."""
    train_texts, train_gold = labelled_texts(train)
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1), LinearSVC(C=1.0))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    model.fit(train_texts, train_gold)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    record = {
        "fit_wall_seconds": round(wall, 1),
        "fit_cpu_seconds": round((after.ru_utime + after.ru_stime) - (usage.ru_utime + usage.ru_stime), 1),
        "train_docs": len(train_texts),
        "train": str(train),
    }
    model_dir.mkdir(parents=True, exist_ok=True)
    with (model_dir / "model.pkl").open("wb") as file_:
        pickle.dump(model, file_)
    atomic_write_json(model_dir / "fit.json", record)
    return record


def bench(model_dir: Path, test: Path, batch_sizes: str = "32,1000", repeats: int = 3, min_docs: int = 10000) -> dict:
    """The measurement of the pickled model on TEST: accuracy, macro-F1, per class,
    docs/s by batch size, parameters, size on disk (fields as greenkd-bench-textcat's)."""
    with (model_dir / "model.pkl").open("rb") as file_:
        model = pickle.load(file_)
    fitted = srsly.read_json(model_dir / "fit.json") if (model_dir / "fit.json").exists() else {}
    texts, gold = labelled_texts(test)
    predicted = list(model.predict(texts))
    per_class = class_scores(predicted, gold)
    sizes = [int(b) for b in batch_sizes.split(",")]
    timed_texts = repeated_texts(texts, min_docs)
    by_batch, seconds = {}, {}
    for batch_size in sizes:
        timings = [timed_predict(model, timed_texts, batch_size) for _ in range(repeats)]
        by_batch[str(batch_size)] = round(len(timed_texts) / min(timings), 1)
        seconds[str(batch_size)] = [round(t, 3) for t in timings]
    largest = str(max(sizes))
    vectorizer = model.named_steps["tfidfvectorizer"]
    n_words = sum(len(vectorizer.build_analyzer()(text)) for text in texts)  # unigrams and bigrams per text
    n_tokens = sum(len(vectorizer.build_tokenizer()(text)) for text in texts)
    svm = model.named_steps["linearsvc"]
    return {
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
        "params": int(svm.coef_.size + svm.intercept_.size),
        "features": len(vectorizer.vocabulary_),
        "threads": 1,
        "disk_bytes": disk_bytes(model_dir),
        **{key: fitted[key] for key in ("fit_wall_seconds", "fit_cpu_seconds", "train_docs") if key in fitted},
        "note": f"sklearn TfidfVectorizer(1-2-grams, sublinear tf) + LinearSVC(C=1); {n_words:,} analyzer features in the test texts; words are sklearn's tokens",
        "model": str(model_dir),
        "data": str(test),
    }


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="action", required=True)
    fitting = actions.add_parser("fit", help="fit on TRAIN and pickle the model into MODEL_DIR")
    fitting.add_argument("train", type=Path, help=".spacy file with gold cats to fit on")
    fitting.add_argument("model_dir", type=Path, help="directory for model.pkl and fit.json")
    measuring = actions.add_parser("bench", help="score and time MODEL_DIR's model on TEST")
    measuring.add_argument("model_dir", type=Path, help="a directory written by `fit`")
    measuring.add_argument("test", type=Path, help=".spacy file with gold cats to score and time on")
    measuring.add_argument("--output", "-o", type=Path, help="also write the measurement to this JSON file (one object)")
    measuring.add_argument("--batch-sizes", default="32,1000", help="comma-separated batch sizes to time")
    measuring.add_argument("--repeats", type=int, default=3, help="timed passes per batch size; the fastest counts")
    measuring.add_argument("--min-docs", type=int, default=10000, help="docs per timed pass (test texts repeated)")
    args = parser.parse_args(argv)
    one_thread()
    if args.action == "fit":
        print(fit(args.train, args.model_dir))
        return
    measurement = bench(args.model_dir, args.test, args.batch_sizes, args.repeats, args.min_docs)
    if args.output is not None:
        atomic_write_json(args.output, measurement)
    print({k: v for k, v in measurement.items() if not isinstance(v, (dict, list))})


if __name__ == "__main__":
    main(sys.argv[1:])
