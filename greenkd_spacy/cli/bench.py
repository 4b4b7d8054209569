"""`spacy greenkd-bench-parser`: accuracy, speed and size of a parsing pipeline."""
from pathlib import Path
from typing import List, Optional

import spacy
import typer
from wasabi import msg

from ..bench import MIN_TIMED_WORDS, add_distill_cost, add_train_cost, bench_parser, disk_bytes, stamp, write_row
from ..data.corpus import create_corpus_reader
from .app import MIN_WORDS_HELP, SKIP_MISSING_HELP, command, skipped


@command("bench-parser")
def bench_parser_cli(
    model: Path = typer.Argument(..., help="Pipeline directory (or installed package name)"),
    data: Path = typer.Argument(..., help=".spacy file with gold trees to parse and score"),
    system: str = typer.Option(..., "--system", "-s", help="Row name in the results file"),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="JSON list to add the row to (a row of the same system is replaced)"
    ),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Docs per nlp.pipe batch"),
    gold_pos: bool = typer.Option(False, "--gold-pos", help="Give the parser gold UPOS (paper setting)"),
    gold_sents: bool = typer.Option(True, "--gold-sents/--no-gold-sents", help="Give gold sentence boundaries"),
    gold_preproc: bool = typer.Option(True, "--gold-preproc/--no-gold-preproc", help="One doc per gold sentence"),
    repeats: int = typer.Option(3, "--repeats", help="Timed passes; the fastest counts"),
    min_words: int = typer.Option(MIN_TIMED_WORDS, "--min-words", help=MIN_WORDS_HELP),
    limit: int = typer.Option(0, "--limit", help="Use only the first N docs (0: all)"),
    distill_summary: Optional[List[Path]] = typer.Option(
        None, "--distill-summary", help="distill_summary.json of a `spacy distill` run: adds its teacher-annotation and training cost to the row; repeat it for a run resumed with more steps (training summed, the teacher pass counted once)"
    ),
    train_cost: Optional[List[Path]] = typer.Option(
        None, "--train-cost", help="JSON written by scripts/timed.py around the training; repeat the option for a training in phases (summed). With --distill-summary only its peak memory is taken (the times are the summary's)"
    ),
    skip_missing: bool = typer.Option(False, "--skip-missing", help=SKIP_MISSING_HELP),
) -> None:
    """Parse DATA with MODEL on one CPU thread; report UAS/LAS (spaCy's scorer), words/s,
    parameters and size on disk, and optionally record them as a JSON row."""
    if skipped(model, system, skip_missing):
        return
    nlp = spacy.load(model)
    reader = create_corpus_reader(
        data, gold_preproc=gold_preproc, limit=limit, gold_sents=gold_sents, gold_pos=gold_pos
    )
    examples = list(reader(nlp))
    msg.info(f"Parsing {len(examples)} docs with {model} (batch {batch_size}, 1 thread)")
    row = {"system": system}
    row.update(bench_parser(nlp, examples, batch_size=batch_size, repeats=repeats, min_words=min_words))
    row["disk_bytes"] = disk_bytes(model if Path(model).exists() else None)
    add_distill_cost(row, distill_summary)
    add_train_cost(row, train_cost, peak_only=distill_summary is not None)
    stamp(row, model, data)
    msg.table({k: v for k, v in row.items() if not isinstance(v, list)})
    if output is not None:
        write_row(output, row)
        msg.good(f"Wrote row '{row['system']}' to {output}")
