"""How a distilled student grows with its transfer set, from a study's results rows alone.

For each student row named: the words its teacher pass labelled (the transfer set, read
from the row's distillation cost), each metric, the share of the teacher's lead over the
gold-trained baseline it keeps, and what the point cost: teacher pass + training CPU
seconds. Users planning their own run read it as "how much text, for how much of the
teacher, at what cost". Printed as a Markdown table; --json writes the points, --plot a
picture (one panel per metric, the teacher and the baseline as lines).

Usage (from a study project; --plot needs matplotlib: pip install -e ".[lab]"):
    python ../../benchmarks/run.py transfer_curve RESULTS.json --systems S10 S30 S100 \
        [--systems T10 T30 T100] --metrics las upos_acc --baseline spacy-cnn-gold --teacher teacher-trf \
        [--json CURVE.json] [--plot CURVE.png] [--data A B: RESULTS, CURVE paths with {data}]
"""
import argparse
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import srsly

from greenkd_spacy.atomic import atomic_write_json


class CurveError(ValueError):
    """A row the curve needs is missing or has no transfer set."""


def transfer_words(row: Dict) -> int:
    """Words the row's teacher pass labelled: one pass labels every component of a
    pipeline student, so the largest entry is the pass (not their sum)."""
    annotation = (row.get("distillation_cost") or {}).get("annotation") or {}
    words = [int(info.get("words_labelled") or 0) for info in annotation.values() if info]
    if not words or not max(words):
        raise CurveError(
            f"Row '{row.get('system')}' records no teacher pass (distillation_cost.annotation."
            "*.words_labelled): bench a `spacy distill` run with its distill_summary.json."
        )
    return max(words)


def lead_kept(value: float, baseline: float, teacher: float) -> Optional[float]:
    """(student - baseline) / (teacher - baseline); None where the teacher has no lead."""
    gap = teacher - baseline
    return (value - baseline) / gap if gap > 0 else None


def curve(rows: List[Dict], series: Sequence[Sequence[str]], metrics: Sequence[str], baseline: str, teacher: str) -> Dict:
    """The curve's points, one series per student (its rows at several transfer sizes),
    each series ordered by transfer words, with the two reference rows. A point's
    `series` is the name of its series' largest row."""
    by = {row["system"]: row for row in rows}
    systems = [name for names in series for name in names]
    missing = [name for name in [*systems, baseline, teacher] if name not in by]
    if missing:
        raise CurveError(f"No row named {missing} in the results (rows: {sorted(by)}). Bench them first.")
    for name in [*systems, baseline, teacher]:
        absent = [m for m in metrics if m not in by[name]]
        if absent:
            raise CurveError(f"Row '{name}' has no {absent}; its keys: {sorted(k for k, v in by[name].items() if isinstance(v, (int, float)))}.")
    points = []
    for names in series:
        line = []
        for name in names:
            row = by[name]
            teacher_cpu = float(row.get("teacher_annotation_cpu_seconds") or 0.0)
            train_cpu = float(row.get("train_cpu_seconds") or 0.0)
            point = {
                "system": name,
                "transfer_words": transfer_words(row),
                "teacher_pass_cpu_seconds": round(teacher_cpu, 1),
                "train_cpu_seconds": round(train_cpu, 1),
                "cpu_seconds": round(teacher_cpu + train_cpu, 1),
                "train_steps": row.get("train_steps"),
            }
            for metric in metrics:
                point[metric] = row[metric]
                kept = lead_kept(row[metric], by[baseline][metric], by[teacher][metric])
                point[f"{metric}_lead_kept"] = None if kept is None else round(kept, 3)
            line.append(point)
        line.sort(key=lambda p: p["transfer_words"])
        for point in line:
            point["series"] = line[-1]["system"]
        points.extend(line)
    return {
        "metrics": list(metrics),
        "baseline": {"system": baseline, **{m: by[baseline][m] for m in metrics}},
        "teacher": {"system": teacher, **{m: by[teacher][m] for m in metrics}},
        "points": points,
    }


def table(result: Dict) -> str:
    metrics = result["metrics"]
    header = ["system", "transfer words"]
    for metric in metrics:
        header += [metric, "lead kept"]
    header += ["teacher pass CPU-s", "training CPU-s", "CPU-s in all"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for point in result["points"]:
        cells = [point["system"], f"{point['transfer_words']:,}"]
        for metric in metrics:
            kept = point[f"{metric}_lead_kept"]
            cells += [f"{point[metric]:.2f}", "" if kept is None else f"{kept:.0%}"]
        cells += [f"{point['teacher_pass_cpu_seconds']:,.0f}", f"{point['train_cpu_seconds']:,.0f}", f"{point['cpu_seconds']:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    for key in ("teacher", "baseline"):
        ref = result[key]
        lines.append(f"{key}: {ref['system']} " + ", ".join(f"{m} {ref[m]:.2f}" for m in metrics))
    return "\n".join(lines)


def plot(result: Dict, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    metrics = result["metrics"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.0), squeeze=False)
    words = sorted({p["transfer_words"] for p in result["points"]})
    names = list(dict.fromkeys(p["series"] for p in result["points"]))
    colours = ["tab:green", "tab:blue", "tab:orange", "tab:purple"]
    for ax, metric in zip(axes[0], metrics):
        for index, name in enumerate(names):
            line = [p for p in result["points"] if p["series"] == name]
            ax.plot([p["transfer_words"] for p in line], [p[metric] for p in line], marker="o",
                    color=colours[index % len(colours)], label=name)
        if len(names) > 1:
            ax.legend(fontsize=7, loc="upper left")
        for point in result["points"]:
            # The first line's costs above its points, the next one's below, so they do not overlap.
            below = names.index(point["series"]) % 2
            ax.annotate(f"{point['cpu_seconds'] / 3600:.1f} CPU-h", (point["transfer_words"], point[metric]),
                        textcoords="offset points", xytext=(0, -12 if below else 6), ha="center", fontsize=7)
        for key, style in (("teacher", "--"), ("baseline", ":")):
            ax.axhline(result[key][metric], linestyle=style, color="grey", linewidth=1)
            ax.annotate(result[key]["system"], (words[-1], result[key][metric]), textcoords="offset points",
                        xytext=(0, 2), ha="right", fontsize=7, color="grey")
        ax.set_xscale("log")
        # The points' own sizes as ticks (140k, 1.4M), none in between.
        ax.xaxis.set_major_locator(FixedLocator(words))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1e6:.2g}M" if x >= 1e6 else f"{x / 1e3:.3g}k"))
        ax.margins(x=0.15, y=0.2)  # room for the points' labels under the title
        ax.set_xlabel("words the teacher labelled")
        ax.set_title(metric, fontsize=9)
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a study's results file (JSON list of rows); with --data, a path with {data} in it")
    parser.add_argument("--systems", nargs="+", action="append", required=True,
                        help="one student's rows at several transfer sizes; repeat for another student (a line each)")
    parser.add_argument("--metrics", nargs="+", required=True, help="row keys, e.g. las upos_acc f1 accuracy")
    parser.add_argument("--baseline", required=True, help="the gold-trained baseline's row")
    parser.add_argument("--teacher", required=True, help="the teacher's row")
    parser.add_argument("--json", help="write the points here ({data} as in RESULTS)")
    parser.add_argument("--plot", help="write the picture (PNG) here ({data} as in RESULTS)")
    parser.add_argument("--data", nargs="+", default=[None],
                        help="one curve per data set, {data} in RESULTS, --json and --plot standing for its name")
    args = parser.parse_args(argv)
    for data in args.data:
        if data is not None and "{data}" not in args.results:
            raise SystemExit(f"transfer_curve: --data {data} needs {{data}} in the results path ({args.results}).")
        path = Path(args.results.format(data=data))
        if not path.exists():
            raise SystemExit(f"transfer_curve: {path}: no such results file; bench the curve's systems first.")
        try:
            result = curve(srsly.read_json(path), args.systems, args.metrics, args.baseline, args.teacher)
        except CurveError as err:
            raise SystemExit(f"transfer_curve: {path}: {err}")
        print(f"{path}:\n{table(result)}")
        if args.json:
            atomic_write_json(Path(args.json.format(data=data)), result)
            print(f"Wrote {args.json.format(data=data)}")
        if args.plot:
            plot(result, Path(args.plot.format(data=data)))
            print(f"Wrote {args.plot.format(data=data)}")


if __name__ == "__main__":
    main()
