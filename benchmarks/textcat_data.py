"""The data of the text classification study (sparse-distillation-dan.md), per task:
the labeled sets and the distillation transfer set. The training and bench stages are
the study's runner (projects/textcat/spec.yml); this holds what differs between the tasks.

Usage: python benchmarks/run.py textcat_data TASK [TASK ...] STAGE [--data DIR] [options]
  TASK:  sst2 (evaluated on the GLUE dev set) | trec (evaluated on TREC_10, 6 coarse classes)
  STAGE: convert (corpus/TASK/{train,heldout,eval}.spacy; sst2 also test.spacy, SST's labeled test split)
         transfer (corpus/TASK/transfer.txt.gz, its lines shuffled: a prefix is a sample of the whole)
  --data: datasets in the layout of ../shared/data (default: assets)
  --imdb-sentences N: sst2: sentences of IMDB's unlabeled reviews in the transfer set (200,000)
  --aug-variants N: trec: augmented variants per training question (8)
  --imdb-questions 0|1: trec: add the questions of IMDB's unlabeled reviews (1)
"""
import argparse
import gzip
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from greenkd_spacy.atomic import atomic_write_lines

TASKS = {
    # Model selection on 10 % of GLUE train's whole sentences, whose phrases leave
    # training (data/heldout.py: a random 5 % of phrases sat 88 % inside training ones
    # until 2026-11-26); the GLUE dev set is the test set.
    "sst2": {"format": "sst2", "train": "sst2/train.tsv", "eval": "sst2/dev.tsv", "heldout": 0.1, "whole_texts": True,
             # SST's labeled binary test split (GLUE withholds its labels): a second test set
             "test": "sst2/test_labeled.tsv"},
    "trec": {"format": "trec", "train": "trec/train_5500.label", "eval": "trec/TREC_10.label", "heldout": 0.1},
}
QUESTION = re.compile(r"\?\s*$")


def spacy_cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "spacy", *args], check=True)


def lines_of(*paths: Path) -> Iterator[str]:
    for path in paths:
        with gzip.open(path, "rt", encoding="utf8") as file_:
            for line in file_:
                yield line.rstrip("\n")


def convert(task: str, data: Path, corpus: Path) -> None:
    spec = TASKS[task]
    spacy_cli("greenkd-convert-textcat", str(data / spec["train"]), str(corpus / "train.spacy"), "-f", spec["format"],
              "--dev-output", str(corpus / "heldout.spacy"), "--dev-fraction", str(spec["heldout"]),
              *(["--dev-whole-texts"] if spec.get("whole_texts") else []))
    spacy_cli("greenkd-convert-textcat", str(data / spec["eval"]), str(corpus / "eval.spacy"), "-f", spec["format"])
    if "test" in spec:
        if (data / spec["test"]).exists():
            spacy_cli("greenkd-convert-textcat", str(data / spec["test"]), str(corpus / "test.spacy"), "-f", spec["format"])
        else:
            print(f"no {data / spec['test']}: corpus/{task}/test.spacy not made (only the seeds summary reads it)")


def transfer(task: str, data: Path, corpus: Path, args: argparse.Namespace) -> None:
    out = corpus / "transfer.txt.gz"
    if task == "trec":
        # The paper distils TREC on 65M PAQ questions, which are not available offline:
        # variants of each training question (Tang et al. 2019), the questions found in
        # the Brown corpus and the movie reviews, and those of IMDB's unlabeled reviews.
        spacy_cli("greenkd-augment-text", str(corpus / "train.spacy"), str(corpus / "augmented.txt.gz"),
                  "--variants", str(args.aug_variants), "--seed", "0")
        imdb = corpus / "imdb_unsup_cased.txt.gz"
        if args.imdb_questions:
            spacy_cli("greenkd-split-text", str(data / "imdb/unsup.jsonl.gz"), str(imdb), "--keep-case", "--max-words", "40")
        found = lines_of(data / "unlabeled/brown_untagged.txt.gz", data / "unlabeled/movie_reviews_polarity2.txt.gz")
        parts = [lines_of(corpus / "augmented.txt.gz"), (line for line in found if QUESTION.search(line))]
        if args.imdb_questions:
            parts.append(line for line in lines_of(imdb) if line.endswith("?"))
    else:
        # Review-domain sentences, lowercased and tokenised like SST-2 (no RT snippets).
        sentences = corpus / "imdb_unsup_sentences.txt.gz"
        spacy_cli("greenkd-split-text", str(data / "imdb/unsup.jsonl.gz"), str(sentences),
                  "--limit", str(args.imdb_sentences), "--max-words", "60")
        parts = [lines_of(data / "unlabeled/movie_reviews_polarity2.txt.gz", sentences)]
    # Shuffled (seed 0): the sources come one after another, and a transfer-size curve
    # reads prefixes of this file (paths.unlabeled_limit), which must be samples of the
    # whole set rather than its first source alone.
    lines = [line for part in parts for line in part]
    random.Random(0).shuffle(lines)
    count = atomic_write_lines(out, lines)
    print(f"transfer set: {count} texts in {out}, shuffled (seed 0)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", nargs="+", choices=sorted(TASKS))
    parser.add_argument("stage", choices=["convert", "transfer"])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--imdb-sentences", type=int, default=200000)
    parser.add_argument("--aug-variants", type=int, default=8)
    parser.add_argument("--imdb-questions", type=int, choices=[0, 1], default=1)
    args = parser.parse_args()
    for task in args.task:
        corpus = Path("corpus") / task
        corpus.mkdir(parents=True, exist_ok=True)
        if args.stage == "convert":
            convert(task, args.data, corpus)
        else:
            transfer(task, args.data, corpus, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
