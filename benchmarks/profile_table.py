"""Render stage profiles (`python -m spacy greenkd-profile ... -o FILE.json`) side by
side as one Markdown table: a row per stage (microseconds per word), a column per
profile, and the words/s of each pass at the bottom.

Usage: python benchmarks/run.py profile_table NAME=PROFILE.json [NAME=PROFILE.json ...]

Stages of the same name share a row (the tokenizer, a tok2vec); a component only one
pipeline has gets its own. Each profile is of one model on one text: compare columns
only when they ran on the same text on the same machine.
"""
import argparse
from typing import Dict, List, Tuple

import srsly


def stage_rows(profiles: List[Tuple[str, dict]]) -> List[List[str]]:
    """The table's body: stage name, then each profile's microseconds per word."""
    order: List[str] = []
    values: Dict[Tuple[str, str], float] = {}
    for name, profile in profiles:
        for stage in profile["stages"]:
            if stage["stage"] not in order:
                order.append(stage["stage"])
            values[(name, stage["stage"])] = stage["us_per_word"]
    rows = []
    for stage in order:
        cells = [values.get((name, stage)) for name, _ in profiles]
        rows.append([stage] + ["" if v is None else f"{v:.1f}" for v in cells])
    totals = [sum(s["us_per_word"] for s in profile["stages"]) for _, profile in profiles]
    rows.append(["**all stages**"] + [f"**{t:.1f}**" for t in totals])
    rows.append(["words/s"] + [f"{profile['words_per_second']:,.0f}" for _, profile in profiles])
    return rows


def render(profiles: List[Tuple[str, dict]]) -> str:
    header = ["stage (µs/word)"] + [name for name, _ in profiles]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in stage_rows(profiles)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="+", help="NAME=PROFILE.json, in column order")
    args = parser.parse_args()
    profiles = []
    for item in args.profiles:
        name, sep, path = item.partition("=")
        if not sep:
            parser.error(f"{item}: give NAME=PROFILE.json")
        profiles.append((name, srsly.read_json(path)))
    print(render(profiles))


if __name__ == "__main__":
    main()
