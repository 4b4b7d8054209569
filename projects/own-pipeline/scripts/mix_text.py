"""Text of several sources as one file to learn from: up to a word budget from each
source, the texts shuffled together (a fixed seed), so the held-out first texts that
`spacy distill` labels as the dev set are a mix too.

Usage: python scripts/mix_text.py OUTPUT.txt SOURCE:WORDS [SOURCE:WORDS ...] [--seed N]
SOURCE is a .txt.gz with one text per line, or a .jsonl.gz with a "text" field (HTML
line breaks as in IMDB's reviews become spaces); each source gives its texts in file order
until WORDS whitespace words (0: all of it).
"""
import argparse
import gzip
import json
import random
import re
from pathlib import Path
from typing import List, Tuple

BREAKS = re.compile(r"<br\s*/?>", re.IGNORECASE)


def texts_of(path: str, budget: int) -> Tuple[List[str], int]:
    """The source's texts in file order up to `budget` words (0: all), and their words."""
    texts, words = [], 0
    with gzip.open(path, "rt", encoding="utf8") as lines:
        for line in lines:
            text = json.loads(line)["text"] if path.endswith(".jsonl.gz") else line
            text = " ".join(BREAKS.sub(" ", text).split())
            if not text:
                continue
            texts.append(text)
            words += len(text.split())
            if budget and words >= budget:
                break
    return texts, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("sources", nargs="+", help="SOURCE:WORDS")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts: List[str] = []
    for spec in args.sources:
        path, _, budget = spec.rpartition(":")
        if not path or not budget.isdigit():
            raise SystemExit(f"{spec}: give SOURCE:WORDS, e.g. unlabeled/abc_news.txt.gz:0")
        part, words = texts_of(path, int(budget))
        print(f"{path}: {len(part):,} texts, {words:,} words")
        texts += part
    random.Random(args.seed).shuffle(texts)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text("".join(t + "\n" for t in texts), encoding="utf8")
    print(f"Wrote {len(texts):,} texts to {args.output}")


if __name__ == "__main__":
    main()
