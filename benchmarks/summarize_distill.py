"""Check the distillation study's targets against a results file.

Reads projects/parser-distill/results/parser_distill_ewt.json (written by that project's
`bench`) and prints each target with the measured figures and whether it is met, so the claims in the
docs come from the JSON and nothing else. With --output, the checks are also written as
JSON.

Speeds are compared only between rows benched on the same date: a session may get a
different machine, so words/s from two bench runs on different days are not comparable
(the rows of one bench run share a date).

Usage: python benchmarks/run.py summarize_distill [RESULTS.json] [--output CHECKS.json]
"""
import argparse
import json
import re
from typing import Dict, List, Optional

BASE_RE = re.compile(r"^base-(\d+)(-.+)?$")


def same_run(a: Dict, b: Dict) -> bool:
    """Whether two rows' words/s can be compared (benched the same day, same machine)."""
    return a.get("date") == b.get("date")


def other_run(a: Dict, b: Dict) -> str:
    return f"words/s not comparable: {a['system']} benched {a.get('date')}, {b['system']} {b.get('date')}"


def check(rows: List[Dict]) -> List[Dict]:
    by = {row["system"]: row for row in rows}
    checks: List[Dict] = []

    def add(target: str, met: Optional[bool], figures: str) -> None:
        checks.append({"target": target, "met": met, "figures": figures})

    # base-X pairs with d-X and d-X-drop; base-X-SUFFIX (a second step budget, e.g.
    # "-1k") pairs only with d-X-SUFFIX and d-X-drop-SUFFIX, so that every comparison is
    # between two models trained for the same number of steps.
    for suffix in [""] + sorted({m.group(2) for m in map(BASE_RE.match, by) if m and m.group(2)}):
        budget = f", {suffix.lstrip('-')} steps" if suffix else ""
        for x in (10, 20, 40, 60, 80):
            b = by.get(f"base-{x}{suffix}")
            d, drop = by.get(f"d-{x}{suffix}"), by.get(f"d-{x}-drop{suffix}")
            if d and b:
                add(f"D-{x} beats Base-{x} (LAS{budget})", d["las"] > b["las"], f"D-{x} {d['las']:.2f} vs Base-{x} {b['las']:.2f}")
            if drop and b:  # ours: distilled with dropout (not a target of the issue, reported beside it)
                add(f"D-{x} with dropout beats Base-{x} (LAS; ours{budget})", drop["las"] > b["las"], f"D-{x}-drop {drop['las']:.2f} vs Base-{x} {b['las']:.2f}")
    full, d20 = by.get("full"), by.get("d-20")
    if full and d20:
        gap = full["las"] - d20["las"]
        add("D-20 within ~1.5 LAS of Full", gap <= 1.5, f"Full {full['las']:.2f}, D-20 {d20['las']:.2f} (gap {gap:.2f})")
        drop = by.get("d-20-drop")
        if drop:  # ours, reported beside the target
            gap = full["las"] - drop["las"]
            add("D-20 with dropout within ~1.5 LAS of Full (ours)", gap <= 1.5, f"Full {full['las']:.2f}, D-20-drop {drop['las']:.2f} (gap {gap:.2f})")
        if same_run(d20, full):
            ratio = d20["words_per_second"] / full["words_per_second"]
            add("D-20 at least 2.3x faster than Full", ratio >= 2.3, f"{d20['words_per_second']:,} vs {full['words_per_second']:,} words/s ({ratio:.2f}x)")
        else:
            add("D-20 at least 2.3x faster than Full", None, other_run(d20, full))
    teacher = by.get("teacher-trf")
    if teacher:
        students = [row for name, row in by.items() if name.startswith("student-trf")]
        for s in students:
            gap = teacher["las"] - s["las"]
            target = f"{s['system']}: >= 15x faster than the teacher and <= 2.0 LAS below it"
            accuracy = f"{gap:.2f} LAS below (teacher {teacher['las']:.2f}, student {s['las']:.2f})"
            if not same_run(s, teacher):
                # The LAS part can still fail; the speed part cannot be judged.
                add(target, False if gap > 2.0 else None, f"{accuracy}; {other_run(s, teacher)}")
                continue
            speed = s["words_per_second"] / teacher["words_per_second"]
            add(target, speed >= 15 and gap <= 2.0, f"{speed:.1f}x faster, {accuracy}")
    spacy_cnn = by.get("spacy-cnn")
    if spacy_cnn:
        # Students: the distilled systems (D-x and the transformer's students).
        better = [
            r for n, r in by.items()
            if n.startswith(("d-", "student-trf")) and r["las"] > spacy_cnn["las"] and same_run(r, spacy_cnn)
        ]
        if better:
            fastest = max(better, key=lambda r: r["words_per_second"])
            ratio = fastest["words_per_second"] / spacy_cnn["words_per_second"]
            add(
                "fastest student above spacy-cnn's LAS is > 1.5x its words/s",
                ratio > 1.5,
                f"{fastest['system']} LAS {fastest['las']:.2f} at {fastest['words_per_second']:,} words/s vs spacy-cnn "
                f"{spacy_cnn['las']:.2f} at {spacy_cnn['words_per_second']:,} ({ratio:.2f}x)",
            )
        else:
            add("fastest student above spacy-cnn's LAS is > 1.5x its words/s", False, f"no student benched with spacy-cnn beats its LAS {spacy_cnn['las']:.2f}")
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default="projects/parser-distill/results/parser_distill_ewt.json")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    with open(args.results, encoding="utf8") as file_:
        checks = check(json.load(file_))
    for c in checks:
        mark = {True: "met", False: "NOT met", None: "n/a"}[c["met"]]
        print(f"- {c['target']}: {mark} ({c['figures']})")
    if args.output:
        with open(args.output, "w", encoding="utf8") as file_:
            json.dump(checks, file_, indent=2)


if __name__ == "__main__":
    main()
