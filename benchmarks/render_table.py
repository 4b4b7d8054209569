"""Render a results JSON list as a Markdown table.

Usage: python benchmarks/render_table.py benchmarks/results/parser_ewt.json
Columns that no row has are left out, so one renderer serves the parser and the text
classification results; a dotted key reads a nested field.
"""
import sys

import srsly

COLUMNS = [
    ("system", "system"),
    ("uas", "UAS"),
    ("las", "LAS"),
    ("uas_with_punct", "UAS+punct"),
    ("las_with_punct", "LAS+punct"),
    ("accuracy", "accuracy"),
    ("f1", "F1"),
    ("words_per_second", "words/s (1 thread)"),
    ("docs_per_second_by_batch.32", "docs/s b=32"),
    ("docs_per_second_by_batch.1000", "docs/s b=1000"),
    ("batch_size", "batch"),
    ("mst_share_of_parse_time", "MST share"),
    ("lm_flops_per_token", "LM FLOPs/token"),
    ("params", "params"),
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


def render(path: str) -> str:
    rows = srsly.read_json(path)
    keys = [key for key, _ in COLUMNS if any(field(row, key) is not None for row in rows)]
    names = dict(COLUMNS)
    lines = ["| " + " | ".join(names[k] for k in keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = []
        for key in keys:
            value = field(row, key)
            if isinstance(value, float) and key == "mst_share_of_parse_time":
                value = f"{100 * value:.1f} %"
            elif isinstance(value, (int, float)) and key.startswith("docs_per"):
                value = f"{value:,.0f}"
            elif isinstance(value, int) and key in ("params", "disk_bytes", "words_per_second", "lm_flops_per_token"):
                value = f"{value:,}"
            cells.append("" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(sys.argv[1]))
