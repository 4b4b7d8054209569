"""Check the pipeline-distillation targets for a transformer pipeline distilled into CPU pipelines.

Reads projects/pipeline-ewt/results/pipeline_ewt.json (LAS) and/or
ner_distill_conll03.json (F1), each written by its study project's bench, and prints, from the rows
alone: how far the teacher is above the gold-only baseline (the issue asks to say so
when that is under 3 points), the share of that gap each student closes, and the
targets, each met if any student meets both halves: >= baseline + 2.0 at >= 1.0x its
words/s, and (parsing) within 2.0 of the teacher at >= 15x the teacher's words/s. Speeds are compared only
between rows benched on the same date (one bench run).

Usage: python benchmarks/run.py summarize_pipeline [RESULTS.json ...] [--output CHECKS.json]
"""
from typing import Callable, Dict, List

from benchmarks.target_checks import collector, main

BASELINES = {"pipeline": "spacy-cnn-gold", "ner": "spacy-ner-gold"}
METRICS = {"pipeline": "las", "ner": "f1"}


def check(task: str, rows: List[Dict]) -> List[Dict]:
    checks, add = collector(task)
    metric = METRICS.get(task)
    by = {row["system"]: row for row in rows}
    baseline, teacher = by.get(BASELINES.get(task, "")), by.get("teacher-trf")
    students = [row for name, row in by.items() if name.startswith("student-")]
    if metric is None or baseline is None or teacher is None or not students:
        add("teacher, students and gold baseline benched", False, "rows missing: run the bench first")
        return checks
    name = metric.upper()
    gap = teacher[metric] - baseline[metric]
    add(
        f"teacher at least 3 {name} above the gold baseline (else: a small teacher, said so)",
        gap >= 3.0,
        f"teacher {teacher[metric]:.2f}, {baseline['system']} {baseline[metric]:.2f}: {gap:+.2f}",
    )
    for student in sorted(students, key=lambda r: -r[metric]):
        share = f"{(student[metric] - baseline[metric]) / gap:.0%} of {gap:.2f}" if gap > 0 else "no gap to close"
        add(f"{student['system']}: share of the teacher-minus-baseline gap closed", None, f"{student[metric]:.2f} {name}: {share}")

    def target(goal: str, reference: Dict, meets: Callable[[Dict], bool], figures: Callable[[Dict], str]) -> None:
        """Met if any student benched with `reference` meets it; the figures are those of
        the student that meets it, else of the most accurate one."""
        comparable = [s for s in students if s.get("date") == reference.get("date")]
        winners = [s for s in comparable if meets(s)]
        shown = max(winners or students, key=lambda r: r[metric])
        note = "" if shown in comparable else f" (benched {shown.get('date')} vs {reference.get('date')}: speed not comparable)"
        add(goal, bool(winners) if comparable else None, figures(shown) + note)

    def speed(student: Dict, reference: Dict) -> float:
        return student["words_per_second"] / reference["words_per_second"]

    target(
        f"a student >= gold baseline + 2.0 {name} at >= 1.0x its words/s",
        baseline,
        lambda s: s[metric] - baseline[metric] >= 2.0 and speed(s, baseline) >= 1.0,
        lambda s: f"{s['system']} {s[metric]:.2f} vs {baseline[metric]:.2f} ({s[metric] - baseline[metric]:+.2f}) at {speed(s, baseline):.2f}x",
    )
    if task == "pipeline":
        target(
            f"a student within 2.0 {name} of the teacher at >= 15x its words/s",
            teacher,
            lambda s: teacher[metric] - s[metric] <= 2.0 and speed(s, teacher) >= 15,
            lambda s: f"{s['system']} {teacher[metric] - s[metric]:.2f} below the teacher at {speed(s, teacher):.1f}x",
        )
    return checks


if __name__ == "__main__":
    main(
        check,
        __doc__.splitlines()[0],
        ["projects/pipeline-ewt/results/pipeline_ewt.json", "projects/ner-conll03/results/ner_distill_conll03.json"],
        "the study project's bench",
    )
