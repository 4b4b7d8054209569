"""Render a results JSON list as a Markdown table.

Usage: python benchmarks/render_table.py benchmarks/results/parser_ewt.json
"""
import sys

import srsly

COLUMNS = [
    ("system", "system"),
    ("uas", "UAS"),
    ("las", "LAS"),
    ("uas_with_punct", "UAS+punct"),
    ("las_with_punct", "LAS+punct"),
    ("words_per_second", "words/s (1 thread)"),
    ("batch_size", "batch"),
    ("mst_share_of_parse_time", "MST share"),
    ("params", "params"),
    ("disk_bytes", "disk bytes"),
    ("date", "date"),
    ("cores", "cores"),
]


def render(path: str) -> str:
    rows = srsly.read_json(path)
    keys = [key for key, _ in COLUMNS if any(key in row for row in rows)]
    names = dict(COLUMNS)
    lines = ["| " + " | ".join(names[k] for k in keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = []
        for key in keys:
            value = row.get(key)
            if isinstance(value, float) and key == "mst_share_of_parse_time":
                value = f"{100 * value:.1f} %"
            elif isinstance(value, int) and key in ("params", "disk_bytes", "words_per_second"):
                value = f"{value:,}"
            cells.append("" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(sys.argv[1]))
