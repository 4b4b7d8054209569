"""What sorting a shard by length saves the teacher pass: RecordMaker.records over the
same sentences in corpus order and shortest first, alternating rounds, one thread.

A transformer teacher pads each batch to its longest doc; the pass (worker.RecordMaker)
now hands the teacher each shard's docs shortest first. This times both orders with the
real record-making code (teacher pipeline + the student's record encoding), checks that
both give every doc the same record, and writes benchmarks/archive/teacher_batch_order.json.

The teacher: --teacher PATH (e.g. training/sst2/teacher-trf/model-best), or without it an
initialized, untrained MiniLM-L6 textcat teacher (speed does not depend on the weights).
The sentences: lines --skip .. --skip + --docs of --text (default: the SST-2 transfer
set, whose IMDB sentences vary in length).

Usage: python benchmarks/run.py teacher_batch_order [--teacher PATH] [--text FILE.txt.gz]
           [--docs 1000] [--skip 100000] [--rounds 2]
Pause other CPU work while it runs.
"""
import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy  # noqa: E402
import spacy  # noqa: E402
from spacy.training import Example  # noqa: E402

from greenkd_spacy.atomic import atomic_write_json  # noqa: E402
from greenkd_spacy.data.text_corpus import iter_texts  # noqa: E402
from greenkd_spacy.distillation.adapters import distillable  # noqa: E402
from greenkd_spacy.distillation.worker import RecordMaker  # noqa: E402

from benchmarks.annotate_throughput import make_teacher  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teacher", type=Path, default=None)
    parser.add_argument("--text", type=Path, default=ROOT / "corpus/sst2/transfer.txt.gz")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--skip", type=int, default=100000, help="start this many lines in (past SST-2's own phrases)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64, help="the teacher pass's batch (annotate's default)")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "benchmarks/archive/teacher_batch_order.json")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if not args.text.exists():
        sys.exit(f"{args.text} not found: make it with `spacy project run transfer-textcat`, or pass --text")
    teacher_path = args.teacher
    if teacher_path is None:
        teacher_path = Path(tempfile.mkdtemp(prefix="greenkd-order-")) / "teacher"
        make_teacher(teacher_path)
    teacher = spacy.load(teacher_path)
    (name,) = [n for n, pipe in teacher.pipeline if n.startswith("textcat")]
    student = spacy.blank(teacher.lang)
    student_pipe = student.add_pipe("textcat")
    for label in teacher.get_pipe(name).labels:
        student_pipe.add_label(label)
    pair = (teacher.get_pipe(name), distillable(student_pipe, teacher.get_pipe(name)))
    texts = list(iter_texts(args.text, limit=args.skip + args.docs))[args.skip :]
    examples = [Example.from_dict(student.make_doc(text), {}) for text in texts]
    words = sum(len(eg.predicted) for eg in examples)
    makers = {
        order: RecordMaker(teacher, [pair], top_k=0, batch_size=args.batch_size, sort_by_length=order == "sorted")
        for order in ("corpus", "sorted")
    }
    seconds = {order: [] for order in makers}
    records = {}
    for _ in range(args.rounds):
        for order, maker in makers.items():
            start = time.perf_counter()
            [records[order]] = maker.records(examples)
            seconds[order].append(round(time.perf_counter() - start, 2))
            print(order, seconds[order][-1], file=sys.stderr, flush=True)
    assert sorted(records["corpus"]) == sorted(records["sorted"]), "the two orders labelled different docs"
    max_diff = max(
        float(numpy.abs(numpy.asarray(records["corpus"][k]["probs"]) - numpy.asarray(records["sorted"][k]["probs"])).max())
        for k in records["corpus"]
    )
    best = {order: min(s) for order, s in seconds.items()}
    result = {
        "teacher": str(args.teacher) if args.teacher else "initialized MiniLM-L6 textcat (configs/teachers/textcat_trf.cfg)",
        "text": str(args.text),
        "docs": len(examples),
        "words": words,
        "batch_size": args.batch_size,
        "seconds": seconds,
        "words_per_second": {order: round(words / s) for order, s in best.items()},
        "speedup_sorted": round(best["corpus"] / best["sorted"], 2),
        "max_prob_difference": max_diff,
        "threads": 1,
        "command": " ".join(["python", "benchmarks/teacher_batch_order.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    atomic_write_json(args.output, result)
    print(result)
    return result


if __name__ == "__main__":
    main()
