"""Check the text classification targets (the study's and the CPU-first
defaults') against the results files.

Reads results/textcat_sst2.json and textcat_trec.json of projects/textcat (written by
its `spacy project run bench`) and prints each target with the measured figures and
whether it is met, so the claims in the docs come from the JSON and nothing else. With
--output, the checks are also written as JSON.

Usage: python benchmarks/run.py summarize_textcat [RESULTS.json ...] [--output CHECKS.json]
"""
from typing import Dict, List, Optional, Tuple

from benchmarks import target_checks

BATCH = "1000"  # the throughput targets are at batch 1000


def speed(row: Dict) -> float:
    return float(row["docs_per_second_by_batch"].get(BATCH, row["docs_per_second"]))


def speed_ratio(row: Dict, base: Dict) -> Optional[float]:
    """row's docs/s over base's, or None when the two were benched on different days:
    speeds are compared only within one bench run (the machine's load differs between
    runs), and a row's date is its run's."""
    if row.get("date") is None or row.get("date") != base.get("date"):
        return None
    return speed(row) / speed(base)


def not_comparable(row: Dict, base: Dict) -> str:
    return f"speed not comparable (benched {row.get('date')}, {base['system']} {base.get('date')})"


def speed_target(row: Dict, base: Dict, minimum: float, ratio_format: str) -> Tuple[Optional[bool], str]:
    """(met, figures) of "row runs at >= minimum x base's docs/s"; met is None when the
    two rows are not from one bench day."""
    ratio = speed_ratio(row, base)
    if ratio is None:
        return None, not_comparable(row, base)
    return ratio >= minimum, f"{speed(row):,.0f} vs {speed(base):,.0f} docs/s ({ratio:{ratio_format}}x)"


MAX_DISK_BYTES = 30_000_000  # the CPU-first default: <= 30 MB on disk
SCRATCH = ("dan-default", "ngram-linear")  # greenkd_textcat from scratch: the DAN, the linear bag
DISTILLED = ("dan-kd-default", "dan-kd-ft-default", "linear-kd-default")


def cpu_first_checks(task: str, by: Dict[str, Dict]) -> List[Dict]:
    """The CPU-first defaults' targets: from scratch >= spaCy's BOW accuracy at >= 1.5x its docs/s
    and <= 30 MB; distilled >= the better of BOW and TF-IDF + 2. A speed is compared
    only with a BOW row of the same bench day (rows of another run are not comparable)."""
    checks, add = target_checks.collector(task)
    bow, tfidf = by.get("spacy-bow"), by.get("tfidf-svm")
    if bow is None:
        return checks
    for name in SCRATCH:
        row = by.get(name)
        if row is None:
            continue
        size_ok = row.get("disk_bytes") is not None and row["disk_bytes"] <= MAX_DISK_BYTES
        figures = f"{row['accuracy']:.2f} vs spacy-bow {bow['accuracy']:.2f}, {row.get('disk_bytes', 0) / 1e6:.1f} MB"
        ratio = speed_ratio(row, bow)
        if ratio is not None:
            met = row["accuracy"] >= bow["accuracy"] and ratio >= 1.5 and size_ok
            figures += f", {ratio:.2f}x its docs/s (batch {BATCH})"
        else:
            met = None
            figures += ", " + not_comparable(row, bow)
        add(f"{name} from scratch >= spacy-bow accuracy at >= 1.5x its docs/s, <= 30 MB", met, figures)
    if tfidf is not None:
        bar = max(bow["accuracy"], tfidf["accuracy"]) + 2
        for name in DISTILLED:
            row = by.get(name)
            if row is not None:
                add(
                    f"{name} (distilled) >= the better of spacy-bow and tfidf-svm + 2",
                    row["accuracy"] >= bar,
                    f"{row['accuracy']:.2f} vs {bar:.2f} (spacy-bow {bow['accuracy']:.2f}, tfidf-svm {tfidf['accuracy']:.2f})",
                )
    return checks


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
            add(f"{dan['system']} >= 50x the teacher's docs/s (batch {BATCH})", *speed_target(dan, teacher, 50, ".0f"))
            if bow:
                add(f"{dan['system']} >= 1x spaCy's BOW textcat docs/s (batch {BATCH})", *speed_target(dan, bow, 1.0, ".2f"))
    checks.extend(cpu_first_checks(task, by))
    curve = [(100, by.get("dan-kd-ft") or by.get("dan-kd"))] + [(k, by.get(f"dan-pruned-{k}")) for k in (30, 10, 3)]
    if all(row for _, row in curve):
        add(
            "pruning curve: accuracy at 100/30/10/3 % of the n-gram table",
            None,
            ", ".join(f"{k} %: {row['accuracy']:.1f}" for k, row in curve),
        )
    return checks


if __name__ == "__main__":
    target_checks.main(check, __doc__.splitlines()[0], ["results/textcat_sst2.json", "results/textcat_trec.json"], "`spacy project run bench` in projects/textcat")
