"""Check the LD-Net study's targets against its results files.

Reads projects/ner-conll03/results/ner_conll03.json and
projects/chunk-conll00/results/chunk_conll00.json (written by each study project's
`bench`) and prints each target with the measured figures and whether it is met, so the
claims in the docs come from the JSON alone. With --output, the checks are also written
as JSON.

Usage: python benchmarks/run.py summarize_labeller [RESULTS.json ...] [--output CHECKS.json]
"""
from typing import Dict, List

from benchmarks import target_checks

# The pruning target: at least this share of the LM's FLOPs gone ...
MIN_FLOPS_CUT = 0.80
# ... for no more than this many F1 points lost (NER).
MAX_F1_LOSS = 0.5


def check(task: str, rows: List[Dict]) -> List[Dict]:
    by = {row["system"]: row for row in rows}
    checks, add = target_checks.collector(task)

    full, pruned, spacy_cnn = by.get("ldnet"), by.get("ldnet-pruned"), by.get("spacy-cnn")
    if full and pruned and full["lm_flops_per_token"]:
        cut = 1 - pruned["lm_flops_per_token"] / full["lm_flops_per_token"]
        loss = full["f1"] - pruned["f1"]
        figures = (
            f"LM FLOPs/token {full['lm_flops_per_token']:,} -> {pruned['lm_flops_per_token']:,} "
            f"({cut:.1%} cut); F1 {full['f1']:.2f} -> {pruned['f1']:.2f}"
        )
        if task == "ner":
            add(
                f"LM pruned by >= {MIN_FLOPS_CUT:.0%} of its FLOPs with <= {MAX_F1_LOSS} F1 lost",
                cut >= MIN_FLOPS_CUT and loss <= MAX_F1_LOSS,
                figures,
            )
        else:
            add("LM pruning: FLOPs cut and F1 (no target for chunking)", None, figures)
    if pruned and spacy_cnn:
        ratio = pruned["words_per_second"] / spacy_cnn["words_per_second"]
        figures = (
            f"F1 {pruned['f1']:.2f} vs {spacy_cnn['f1']:.2f}; "
            f"{pruned['words_per_second']:,} vs {spacy_cnn['words_per_second']:,} words/s ({ratio:.2f}x)"
        )
        if task == "ner":
            add(
                "LD-Net pruned beats spaCy's CPU NER F1 at equal or better words/s",
                pruned["f1"] > spacy_cnn["f1"] and ratio >= 1.0,
                figures,
            )
        else:
            add("LD-Net pruned against spaCy's CPU ner on chunks (no target)", None, figures)
    teacher, student = by.get("teacher-trf"), by.get("student-trf")
    if teacher and student:
        ratio = student["words_per_second"] / teacher["words_per_second"]
        add(
            "distilled student against its transformer teacher (no target)",
            None,
            f"F1 {student['f1']:.2f} vs {teacher['f1']:.2f}; "
            f"{student['words_per_second']:,} vs {teacher['words_per_second']:,} words/s ({ratio:.1f}x)",
        )
    return checks


if __name__ == "__main__":
    target_checks.main(check, __doc__.splitlines()[0], ["projects/ner-conll03/results/ner_conll03.json", "projects/chunk-conll00/results/chunk_conll00.json"], "the study project's `bench`")
