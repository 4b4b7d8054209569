"""Check the text classification study's targets (issue 4) against its results files.

Reads benchmarks/results/textcat_sst2.json and textcat_trec.json (written by
`spacy project run bench-textcat`) and prints each target with the measured figures and
whether it is met, so the claims in the docs come from the JSON and nothing else. With
--output, the checks are also written as JSON.

Usage: python benchmarks/summarize_textcat.py [RESULTS.json ...] [--output CHECKS.json]
"""
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).parent))
import target_checks  # noqa: E402  (benchmarks/ is not a package)

BATCH = "1000"  # the throughput targets are at batch 1000


def speed(row: Dict) -> float:
    return float(row["docs_per_second_by_batch"].get(BATCH, row["docs_per_second"]))


def check(task: str, rows: List[Dict]) -> List[Dict]:
    by = {row["system"]: row for row in rows}
    checks, add = target_checks.collector(task)

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


if __name__ == "__main__":
    target_checks.main(check, __doc__.splitlines()[0], ["benchmarks/results/textcat_sst2.json", "benchmarks/results/textcat_trec.json"], "`textcat_study.sh TASK bench`")
