"""The README's results table and picture, made from the studies' results files alone.

Each headline row names a study's results file and the rows in it: ours (our default,
trained for the same minutes as spaCy's, or a distilled student), spaCy's own component
(the baseline) and, where there is one, the teacher. A list of rows is a seed set: its
scores are averaged and its speed ratios given as a range, each against the baseline of
the same seed (benched in the same run; timed in turns in one process where the study's
speed file has the pair). Nothing here is typed in by hand but the names.

Usage (from the repository root; --plot needs matplotlib: pip install -e ".[lab]"):
    python benchmarks/run.py headline [--plot docs/images/accuracy_speed.png] [--json OUT.json]
"""
import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import srsly

from greenkd_spacy.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parent.parent
Rows = Union[str, List[str]]


@dataclass(frozen=True)
class Headline:
    task: str
    metric: str  # the results rows' key, e.g. "las", "f1", "accuracy"
    results: str  # results file, relative to the repository root
    ours: Rows
    baseline: Rows
    teacher: Optional[str] = None
    teacher_results: Optional[str] = None  # where the teacher's row is, if not in `results`
    speed: str = "words_per_second"
    how: str = ""  # what "ours" is, one short phrase
    student: bool = False  # ours learnt from the teacher: say how much of its lead it keeps


# The timing of a study's in-turns speed file that gives a ratio: each system's fastest
# pass, as the bench rows take the fastest of their repeats.
IN_TURNS_TIMING = "best"


def _seeds(base: str, n: int) -> List[str]:
    return [base] + [f"{base}-seed{seed}" for seed in range(1, n)]


HEADLINES: List[Headline] = [
    Headline("Parsing, UD English-EWT", "las", "projects/parser/results/parser_ewt.json",
             "greenkd-default-10", "spacy-cnn-10", "teacher-trf", "projects/pipeline-ewt/results/pipeline_ewt.json",
             how="default, 10 min each"),
    Headline("Parsing, UD Tamil-TTB", "las", "projects/parser/results/parser_ta.json",
             _seeds("greenkd-default-10", 3), _seeds("spacy-cnn-10", 3), how="default, 10 min each, 3 seeds"),
    # The student with the best dev score of its run (students whose dev scores tie
    # within 0.0012 differ more on test; the row is chosen on dev, never on test).
    Headline("Parsing pipeline, EWT, distilled", "las", "projects/pipeline-ewt/results/pipeline_ewt.json",
             "student-greenkd-avg", "spacy-cnn-gold", "teacher-trf", how="student from raw text + EWT", student=True),
    Headline("NER, CoNLL-2003", "f1", "projects/ner-conll03/results/ner_conll03.json",
             "greenkd-default-10", "spacy-cnn-10", "teacher-trf", "projects/ner-conll03/results/ner_distill_conll03.json",
             how="default, 10 min each"),
    # The student with the best dev score; it reads en_core_web_md's vectors, so its
    # baseline is spaCy's ner reading the same vectors (what they give without a teacher).
    Headline("NER, CoNLL-2003, distilled", "f1", "projects/ner-conll03/results/ner_distill_conll03.json",
             "student-spacy-ner-goldw-md", "spacy-ner-gold-md", "teacher-trf",
             how="spaCy's ner + md vectors, both", student=True),
    Headline("Chunking, CoNLL-2000", "f1", "projects/chunk-conll00/results/chunk_conll00.json",
             "greenkd-default-10", "spacy-cnn-10", how="default, 10 min each"),
    Headline("Sentiment, SST-2", "accuracy", "projects/textcat/results/textcat_sst2.json",
             "ngram-linear", "spacy-bow", "teacher-trf-defaults", speed="docs_per_second", how="default, to patience"),
    # The distilled text classifiers: the student greenkd-init-student writes (the linear
    # bag plus a convolution over the words), the one with the best held-out score of its
    # run, benched in one run with spaCy's BOW and the teacher.
    Headline("Sentiment, SST-2, distilled", "accuracy", "projects/textcat/results/textcat_sst2_cnn_t30.json",
             "linear-kd-cnn", "spacy-bow", "teacher-trf-defaults", speed="docs_per_second",
             how="bag + convolution, 30 % of the text", student=True),
    Headline("Questions, TREC", "accuracy", "projects/textcat/results/textcat_trec.json",
             "ngram-linear", "spacy-bow", "teacher-trf-defaults", speed="docs_per_second", how="default, to patience"),
    Headline("Questions, TREC, distilled", "accuracy", "projects/textcat/results/textcat_trec_cnn_table.json",
             "linear-kd-cnn", "spacy-bow", "teacher-trf-defaults", speed="docs_per_second",
             how="bag + convolution", student=True),
]


def _rows(path: Path) -> Dict[str, dict]:
    if not path.exists():
        raise SystemExit(f"{path}: no such results file; run its study's bench command first")
    return {row["system"]: row for row in srsly.read_json(path)}


def _pick(rows: Dict[str, dict], names: Sequence[str], path: str) -> List[dict]:
    missing = [name for name in names if name not in rows]
    if missing:
        raise SystemExit(f"{path}: no row {', '.join(missing)}")
    return [rows[name] for name in names]


def _cpu(row: dict, teacher: Optional[dict]) -> float:
    """What a row cost to train: its own training, plus, for a distilled student, the
    teacher pass and the teacher's own training (the student exists only because both ran)."""
    cpu = row.get("train_cpu_seconds") or 0.0
    if row.get("teacher_annotation_cpu_seconds"):
        cpu += row["teacher_annotation_cpu_seconds"]
        if teacher is not None:
            cpu += teacher.get("train_cpu_seconds") or 0.0
    return cpu


def _in_turns(root: Path, headline: Headline, ours: List[dict], base: List[dict]) -> Optional[List[float]]:
    """Each pair's speed ratio from passes taken in turns in one process (the study's
    `speed` action, <results stem>_speed.json, its latest entry timing the pair, taken
    no earlier than the pair's bench rows), or None where a pair has none. One-thread
    words/s of models benched one after another drift with the machine (one parser
    measured 39,897 and 24,748 words/s in two bench runs of a day); passes in turns
    share the drift."""
    path = root / headline.results
    speed_path = path.with_name(f"{path.stem}_speed.json")
    if not speed_path.exists():
        return None
    entries = srsly.read_json(speed_path)
    ratios = []
    for o, b in zip(ours, base):
        names = (o["system"], b["system"])
        entry = next((e for e in reversed(entries) if all(n in e.get(IN_TURNS_TIMING, {}) for n in names)), None)
        if entry is None or entry.get("date", "") < max(o.get("date", ""), b.get("date", "")):
            return None
        timing = entry[IN_TURNS_TIMING]
        ratios.append(timing[names[0]] / timing[names[1]])
    return ratios


def measure(headline: Headline, root: Path = ROOT) -> dict:
    """The figures of one headline row, as a dict (also what the picture draws)."""
    rows = _rows(root / headline.results)
    as_list = lambda names: [names] if isinstance(names, str) else list(names)  # noqa: E731
    ours = _pick(rows, as_list(headline.ours), headline.results)
    base = _pick(rows, as_list(headline.baseline), headline.results)
    teacher = None
    if headline.teacher:
        teacher_path = headline.teacher_results or headline.results
        teacher = _pick(_rows(root / teacher_path), [headline.teacher], teacher_path)[0]
    turns = _in_turns(root, headline, ours, base)
    ratios = turns or [o[headline.speed] / b[headline.speed] for o, b in zip(ours, base)]
    same_run = turns is not None or all(o.get("date") == b.get("date") for o, b in zip(ours, base))
    figures = {
        "task": headline.task,
        "how": headline.how,
        "metric": headline.metric,
        "ours": statistics.mean(r[headline.metric] for r in ours),
        "baseline": statistics.mean(r[headline.metric] for r in base),
        "teacher": teacher[headline.metric] if teacher else None,
        "speed_ratio": (min(ratios), max(ratios)),
        "speed_in_turns": turns is not None,
        "same_bench_run": same_run,
        "ours_speed": statistics.mean(r[headline.speed] for r in ours),
        "baseline_speed": statistics.mean(r[headline.speed] for r in base),
        "teacher_speed": teacher.get(headline.speed) if teacher and teacher_path == headline.results else None,
        "ours_mb": statistics.mean(r["disk_bytes"] for r in ours) / 1e6,
        "baseline_mb": statistics.mean(r["disk_bytes"] for r in base) / 1e6,
        "ours_cpu": statistics.mean(_cpu(r, teacher) for r in ours),
        "baseline_cpu": statistics.mean(_cpu(r, None) for r in base),
        "date": max(r.get("date", "") for r in ours + base),
        "seeds": len(ours),
    }
    lead = figures["teacher"] - figures["baseline"] if teacher else None
    figures["kept"] = (figures["ours"] - figures["baseline"]) / lead if headline.student and lead and lead > 0 else None
    return figures


def markdown(all_figures: Sequence[dict]) -> str:
    lines = [
        "| task | greenkd | spaCy's own | teacher | teacher's lead kept | words/s vs spaCy | MB (ours / spaCy) | training CPU-s (ours / spaCy) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in all_figures:
        low, high = f["speed_ratio"]
        ratio = f"{low:.2f}x" if abs(high - low) < 0.005 else f"{low:.2f}-{high:.2f}x"
        if not f["same_bench_run"]:
            # Words/s move by up to ~15 % between bench runs: no ratio across two.
            ratio = "not benched with it"
        elif f["speed_in_turns"]:
            ratio += " in turns"
        ours, base = f"{f['ours']:.2f}", f"{f['baseline']:.2f}"
        ours = f"**{ours}**" if f["ours"] > f["baseline"] else ours
        base = f"**{base}**" if f["baseline"] > f["ours"] else base
        teacher = f"{f['teacher']:.2f}" if f["teacher"] is not None else ""
        kept = f"{100 * f['kept']:.0f} %" if f["kept"] is not None else ""
        task = f"{f['task']}, {f['metric'].upper() if f['metric'] in ('las', 'f1') else f['metric']} ({f['how']})"
        lines.append(
            f"| {task} | {ours} | {base} | {teacher} | {kept} | {ratio} | "
            f"{f['ours_mb']:.1f} / {f['baseline_mb']:.1f} | {f['ours_cpu']:,.0f} / {f['baseline_cpu']:,.0f} |"
        )
    return "\n".join(lines)


def plot(all_figures: Sequence[dict], output: Path) -> None:
    """Accuracy against speed, one panel per headline row: where greenkd, spaCy's own
    component and the teacher (when benched in the same run) sit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    n_cols = 5
    n_rows = (len(all_figures) + n_cols - 1) // n_cols
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.2 * n_cols, 2.9 * n_rows), squeeze=False)
    for ax, f in zip(axes.flat, all_figures):
        points = [("greenkd", f["ours_speed"], f["ours"], "tab:green"),
                  ("spaCy", f["baseline_speed"], f["baseline"], "tab:blue")]
        if f["teacher"] is not None and f["teacher_speed"]:
            points.append(("teacher", f["teacher_speed"], f["teacher"], "tab:gray"))
        for label, speed, score, colour in points:
            ax.scatter([speed], [score], color=colour, s=40, zorder=3)
            ax.annotate(label, (speed, score), textcoords="offset points", xytext=(4, 4), fontsize=7)
        if f["teacher"] is not None and not f["teacher_speed"]:
            # benched in another run: its accuracy only, as a line
            ax.axhline(f["teacher"], color="tab:gray", linestyle="--", linewidth=0.8)
            ax.annotate("teacher (accuracy)", (min(p[1] for p in points), f["teacher"]), fontsize=7,
                        color="tab:gray", textcoords="offset points", xytext=(0, -9))
        ax.set_xscale("log")
        speeds = [speed for _, speed, _, _ in points]
        ax.set_xlim(min(speeds) / 1.6, max(speeds) * 2.2)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x >= 1000 else f"{x:g}"))
        ax.set_title(f["task"], fontsize=8)
        ax.set_xlabel("words/s, 1 thread" if "TREC" not in f["task"] and "SST" not in f["task"] else "docs/s, 1 thread",
                      fontsize=7)
        ax.set_ylabel(f["metric"], fontsize=7)
        ax.tick_params(labelsize=6)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(all_figures):]:
        ax.axis("off")
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=110)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, help="Write the accuracy-against-speed picture (PNG) here")
    parser.add_argument("--json", type=Path, help="Write the figures as JSON here")
    args = parser.parse_args(argv)
    all_figures = [measure(headline) for headline in HEADLINES]
    print(markdown(all_figures))
    if args.plot:
        plot(all_figures, args.plot)
        print(f"\nWrote {args.plot}")
    if args.json:
        atomic_write_json(Path(args.json), all_figures)


if __name__ == "__main__":
    main()
