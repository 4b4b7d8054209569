"""Check the text classification study's targets (issue 4) against its results files.

Reads benchmarks/results/textcat_sst2.json and textcat_trec.json (written by
`textcat_study.sh TASK bench`) and prints each target with the measured figures and
whether it is met, so the claims in the docs come from the JSON and nothing else. With
--output, the checks are also written as JSON.

Usage: python benchmarks/summarize_textcat.py [RESULTS.json ...] [--output CHECKS.json]
"""
import argparse
import json
from pathlib import Path
from typing import Dict, List, Optional

BATCH = "1000"  # the throughput targets are at batch 1000


def speed(row: Dict) -> float:
    return float(row["docs_per_second_by_batch"].get(BATCH, row["docs_per_second"]))


def check(task: str, rows: List[Dict]) -> List[Dict]:
    by = {row["system"]: row for row in rows}
    checks: List[Dict] = []

    def add(target: str, met: Optional[bool], figures: str) -> None:
        checks.append({"task": task, "target": target, "met": met, "figures": figures})

    teacher, scratch, bow = by.get("teacher-trf"), by.get("dan-scratch"), by.get("spacy-bow")
    dans = [by[name] for name in ("dan-kd", "dan-kd-ft") if name in by]
    if teacher and dans:
        best = max(dans, key=lambda r: r["accuracy"])
        gap = teacher["accuracy"] - best["accuracy"]
        add(
            "DAN (KD or KD+FT) within 3.0 accuracy points of the teacher",
            gap <= 3.0,
            f"{best['system']} {best['accuracy']:.1f} vs teacher {teacher['accuracy']:.1f} (gap {gap:.1f})",
        )
        if scratch:
            add(
                "DAN (KD or KD+FT) above DAN from scratch",
                best["accuracy"] > scratch["accuracy"],
                f"{best['system']} {best['accuracy']:.1f} vs dan-scratch {scratch['accuracy']:.1f}",
            )
        for dan in dans:
            ratio = speed(dan) / speed(teacher)
            add(
                f"{dan['system']} >= 50x the teacher's docs/s (batch {BATCH})",
                ratio >= 50,
                f"{speed(dan):,.0f} vs {speed(teacher):,.0f} docs/s ({ratio:.0f}x)",
            )
            if bow:
                ratio = speed(dan) / speed(bow)
                add(
                    f"{dan['system']} >= 1x spaCy's BOW textcat docs/s (batch {BATCH})",
                    ratio >= 1.0,
                    f"{speed(dan):,.0f} vs {speed(bow):,.0f} docs/s ({ratio:.2f}x)",
                )
    curve = [(100, by.get("dan-kd-ft") or by.get("dan-kd"))] + [(k, by.get(f"dan-pruned-{k}")) for k in (30, 10, 3)]
    if all(row for _, row in curve):
        add(
            "pruning curve: accuracy at 100/30/10/3 % of the n-gram table",
            None,
            ", ".join(f"{k} %: {row['accuracy']:.1f}" for k, row in curve),
        )
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "results", nargs="*", default=["benchmarks/results/textcat_sst2.json", "benchmarks/results/textcat_trec.json"]
    )
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    checks: List[Dict] = []
    for path in map(Path, args.results):
        if not path.exists():
            print(f"- {path}: not found (run `textcat_study.sh TASK bench` first)")
            continue
        task = path.stem.split("_", 1)[-1]
        checks.extend(check(task, json.loads(path.read_text(encoding="utf8"))))
    for c in checks:
        mark = {True: "met", False: "NOT met", None: "measured"}[c["met"]]
        print(f"- {c['task']}: {c['target']}: {mark} ({c['figures']})")
    if args.output:
        Path(args.output).write_text(json.dumps(checks, indent=2) + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
