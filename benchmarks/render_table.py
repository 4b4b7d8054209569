"""Render a results JSON list as a Markdown table.

Usage: python benchmarks/run.py render_table RESULTS.json [--baseline SYSTEM] [--teacher SYSTEM]
Columns that no row has are left out, so one renderer serves the parser and the text
classification results; a dotted key reads a nested field.
--baseline adds each row's speed as a multiple of that system's (same bench run).
--teacher adds "CPU s in all": a row's own training, plus, for a distilled row, the
teacher pass and the teacher's training, since a student exists only because both ran.
"""
import argparse

import srsly

COLUMNS = [
    ("system", "system"),
    ("uas", "UAS"),
    ("las", "LAS"),
    ("uas_with_punct", "UAS+punct"),
    ("las_with_punct", "LAS+punct"),
    ("upos_acc", "UPOS"),
    ("tag_acc", "tag acc"),
    ("morph_acc", "morph acc"),
    ("accuracy", "accuracy"),
    ("macro_f1", "macro-F1"),
    ("f1", "F1"),
    ("words_per_second", "words/s (1 thread)"),
    ("docs_per_second_by_batch.32", "docs/s b=32"),
    ("docs_per_second_by_batch.1000", "docs/s b=1000"),
    ("batch_size", "batch"),
    ("mst_share_of_parse_time", "MST share"),
    ("lm_flops_per_token", "LM FLOPs/token"),
    ("params", "params"),
    ("train_steps", "train steps"),
    ("train_wall_seconds", "train wall s"),
    ("train_cpu_seconds", "train CPU s"),
    ("teacher_annotation_cpu_seconds", "teacher pass CPU s"),
    ("train_max_rss_mb", "train peak MB"),
    ("train_steps_per_second", "train steps/s"),
    ("disk_bytes", "disk bytes"),
    ("date", "date"),
    ("cores", "cores"),
]


def field(row: dict, key: str):
    for part in key.split("."):
        row = row.get(part) if isinstance(row, dict) else None
    return row


def speed(row: dict):
    return row.get("words_per_second") or row.get("docs_per_second")


def add_derived(rows: list, baseline: str = "", teacher: str = "") -> list:
    by_name = {row["system"]: row for row in rows}
    base = by_name.get(baseline)
    teacher_row = by_name.get(teacher) or {}
    out = []
    for row in rows:
        row = dict(row)
        if base is not None and speed(row) and speed(base):
            ratio = speed(row) / speed(base)
            row["speed_ratio"] = f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.4f}x"
        if teacher:
            own = row.get("train_cpu_seconds")
            if own is not None:
                total = own
                if row.get("teacher_annotation_cpu_seconds") is not None:
                    total += row["teacher_annotation_cpu_seconds"] + (teacher_row.get("train_cpu_seconds") or 0.0)
                row["cpu_in_all"] = round(total, 1)
        out.append(row)
    return out


# --compact: what a reader compares first (the quickstart's table), sizes in M and MB.
COMPACT = [
    "system", "accuracy", "macro_f1", "f1", "uas", "las", "words_per_second", "speed_ratio", "params", "disk_bytes",
    "train_cpu_seconds", "teacher_annotation_cpu_seconds", "cpu_in_all",
]


def readable_size(value: int, unit: str, scale: float) -> str:
    """One decimal below 100 (22.7 M, 6.5 MB), none above (268 MB)."""
    scaled = value / scale
    return f"{scaled:.1f} {unit}" if scaled < 100 else f"{scaled:,.0f} {unit}"


def render(path: str, baseline: str = "", teacher: str = "", compact: bool = False) -> str:
    rows = add_derived(srsly.read_json(path), baseline, teacher)
    columns = list(COLUMNS)
    if baseline:
        columns.insert(columns.index(("docs_per_second_by_batch.32", "docs/s b=32")), ("speed_ratio", f"speed vs {baseline}"))
    if teacher:
        columns.insert(columns.index(("disk_bytes", "disk bytes")), ("cpu_in_all", "CPU s in all"))
    if compact:
        columns = [(key, "disk" if key == "disk_bytes" else name) for key, name in columns if key in COMPACT]
    keys = [key for key, _ in columns if any(field(row, key) is not None for row in rows)]
    names = dict(columns)
    lines = ["| " + " | ".join(names[k] for k in keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = []
        for key in keys:
            value = field(row, key)
            if isinstance(value, float) and key == "mst_share_of_parse_time":
                value = f"{100 * value:.1f} %"
            elif isinstance(value, (int, float)) and key.startswith("docs_per"):
                value = f"{value:,.0f}"
            elif isinstance(value, int) and compact and key == "params":
                value = readable_size(value, "M", 1e6)
            elif isinstance(value, int) and compact and key == "disk_bytes":
                value = readable_size(value, "MB", 1e6)
            elif isinstance(value, int) and key in ("params", "disk_bytes", "words_per_second", "lm_flops_per_token"):
                value = f"{value:,}"
            elif isinstance(value, float) and key.endswith(("seconds", "per_second", "_mb")):
                value = f"{value:,.1f}" if value >= 10 else f"{value:.2f}"
            cells.append("" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results")
    parser.add_argument("--baseline", default="", help="System whose speed is 1.00x")
    parser.add_argument("--teacher", default="", help="System that taught the distilled rows")
    parser.add_argument("--compact", action="store_true", help="Accuracy, speed, size and training cost only")
    args = parser.parse_args()
    print(render(args.results, args.baseline, args.teacher, args.compact))
