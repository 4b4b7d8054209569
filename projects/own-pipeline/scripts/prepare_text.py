"""The texts of the study: what the student learns from, and held-out text of another
source to report on.

Usage: python scripts/prepare_text.py SOURCE.txt.gz OUTPUT.txt [--limit N]
Writes the non-empty lines of SOURCE (one text per line), the first N only with --limit.
"""
import argparse
import gzip
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source")
    parser.add_argument("output")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with gzip.open(args.source, "rt", encoding="utf8") as lines, open(args.output, "w", encoding="utf8") as out:
        for line in lines:
            if line.strip():
                out.write(line.strip() + "\n")
                count += 1
                if args.limit and count >= args.limit:
                    break
    print(f"Wrote {count:,} texts to {args.output}")


if __name__ == "__main__":
    main()
