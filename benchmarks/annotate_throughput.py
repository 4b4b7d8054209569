"""Teacher-pass throughput: local backend vs Ray with 1 and 2 workers.

The teacher is spaCy's textcat on MiniLM-L6 (configs/teachers/textcat_trf.cfg); the
corpus is the first --docs lines of the unlabeled movie-review text, labelled for the
DAN student of configs/students/textcat_dan.cfg. Every run writes a fresh cache; the script
checks that all caches hold the same rows and soft targets, and writes
benchmarks/archive/annotate_throughput.json.

The teacher's speed does not depend on its weight values, so without --teacher the
script uses an initialized, untrained teacher (stated in the results); pass a trained
one (e.g. training/sst2/teacher-trf/model-best) to use it instead.

Usage: python benchmarks/run.py annotate_throughput [--docs 3000] [--shard-size 250]
       [--teacher PATH] [--data ../shared/data]
Pause other CPU work while it runs: it measures what 1 and 2 cores do.
"""
import argparse
import datetime
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy  # noqa: E402
import spacy  # noqa: E402
import srsly  # noqa: E402
from spacy.tokens import DocBin  # noqa: E402
from spacy.training import Example  # noqa: E402
from spacy.util import load_config  # noqa: E402

from greenkd_spacy.atomic import atomic_write_json  # noqa: E402
from greenkd_spacy.distillation.loop import distill  # noqa: E402
from greenkd_spacy.distillation.cache import TeacherCache  # noqa: E402
from greenkd_spacy.data.text_corpus import iter_texts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABELS = ("NEGATIVE", "POSITIVE")


def make_teacher(path: Path) -> None:
    config = load_config(ROOT / "configs/teachers/textcat_trf.cfg")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = [
        Example.from_dict(nlp.make_doc(text), {"cats": {"POSITIVE": float(pos), "NEGATIVE": float(not pos)}})
        for text, pos in (("a fine film", True), ("a dull film", False))
    ]
    nlp.initialize(lambda: examples)
    nlp.to_disk(path)


def write_inputs(work: Path, data: Path, n_docs: int) -> None:
    nlp = spacy.blank("en")
    gold = [nlp.make_doc(t) for t in ("a fine film", "a dull film")]
    for doc, pos in zip(gold, (True, False)):
        doc.cats = {"POSITIVE": float(pos), "NEGATIVE": float(not pos)}
    DocBin(docs=gold).to_disk(work / "gold.spacy")
    texts = list(iter_texts(data / "unlabeled/movie_reviews_polarity2.txt.gz", limit=n_docs))
    (work / "unlabeled.txt").write_text("\n".join(texts) + "\n", encoding="utf8")


def student_config(work: Path, cache: str, shard_size: int):
    config = load_config(ROOT / "configs/students/textcat_dan.cfg", interpolate=False)
    config["paths"]["train"] = str(work / "gold.spacy")
    config["paths"]["dev"] = str(work / "gold.spacy")
    # The teacher labels only the unlabeled text: the distillation corpus without D_train.
    config["corpora"]["distill"]["train"] = None
    config["paths"]["unlabeled"] = str(work / "unlabeled.txt")
    config["distillation"]["cache_dir"] = str(work / cache)
    config["distillation"]["shard_size"] = shard_size
    return config


def only_cache(root: Path) -> TeacherCache:
    (directory,) = [p for p in root.iterdir() if p.is_dir()]
    return TeacherCache(root, srsly.read_json(directory / "manifest.json")["fingerprint"])


def steady_words_per_second(cache: TeacherCache) -> float:
    """Words over the busiest worker's labelling time: throughput without start-up."""
    per_worker = {}
    for entry in cache.manifest["shards"].values():
        per_worker[entry["worker"]] = per_worker.get(entry["worker"], 0.0) + entry["seconds"]
    words = sum(entry["words"] for entry in cache.manifest["shards"].values())
    return words / max(per_worker.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--shard-size", type=int, default=250)
    parser.add_argument("--teacher", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "benchmarks/archive/annotate_throughput.json")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="greenkd-annotate-"))
    try:
        teacher = args.teacher
        if teacher is None:
            teacher = work / "teacher"
            make_teacher(teacher)
        write_inputs(work, args.data, args.docs)
        runs = [("local", 1), ("ray", 1), ("ray", 2)]
        rows, caches = [], []
        for backend, workers in runs:
            cache_name = f"cache-{backend}-{workers}"
            start = time.perf_counter()
            _, summary = distill(
                str(teacher), student_config(work, cache_name, args.shard_size), None,
                annotate_only=True, backend=backend, workers=workers,
            )
            wall = time.perf_counter() - start
            (info,) = summary["annotation"].values()
            cache = only_cache(work / cache_name)
            caches.append(cache.records())
            rows.append({
                "backend": backend,
                "workers": workers,
                "docs": info["docs"],
                "words": info["words_labelled"],
                "annotation_wall_seconds": round(info["wall_seconds"], 2),
                "words_per_second": round(info["words_per_second"]),
                "steady_words_per_second": round(steady_words_per_second(cache)),
                "command_wall_seconds": round(wall, 2),
                "shards": cache.manifest["n_shards"],
            })
            print(rows[-1], file=sys.stderr)
        reference = caches[0]
        max_diff = 0.0
        for other in caches[1:]:
            assert sorted(other) == sorted(reference), "caches hold different docs"
            for key, record in reference.items():
                diff = numpy.abs(numpy.asarray(record["probs"]) - numpy.asarray(other[key]["probs"])).max()
                max_diff = max(max_diff, float(diff))
        base = rows[0]["words_per_second"]
        for row in rows:
            row["speedup_vs_local"] = round(row["words_per_second"] / base, 2)
        result = {
            "runs": rows,
            "same_rows": True,
            "max_abs_prob_difference": max_diff,
            "teacher": str(args.teacher) if args.teacher else "configs/teachers/textcat_trf.cfg, initialized, untrained (speed does not depend on weight values)",
            "corpus": f"first {args.docs} lines of unlabeled/movie_reviews_polarity2.txt.gz",
            "shard_size": args.shard_size,
            "torch_threads_per_worker": 1,
            "command": "python benchmarks/annotate_throughput.py " + " ".join(sys.argv[1:]),
            "date": datetime.date.today().isoformat(),
            "cores": os.cpu_count(),
        }
        args.output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(Path(args.output), result)
        print(srsly.json_dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
