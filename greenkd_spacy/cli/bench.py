"""`spacy greenkd-bench-parser`: accuracy, speed and size of a parsing pipeline."""
from pathlib import Path
from typing import Dict, Optional

import spacy
import typer
from wasabi import msg

from ..bench import MIN_TIMED_WORDS, bench_parser, disk_bytes
from ..data.corpus import create_corpus_reader
from .app import MIN_WORDS_HELP, OUTPUT_HELP, command, write_measurement


@command("bench-parser")
def bench_parser_cli(
    model: Path = typer.Argument(..., help="Pipeline directory (or installed package name)"),
    data: Path = typer.Argument(..., help=".spacy file with gold trees to parse and score"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Docs per nlp.pipe batch"),
    gold_pos: bool = typer.Option(False, "--gold-pos", help="Give the parser gold UPOS (paper setting)"),
    gold_sents: bool = typer.Option(True, "--gold-sents/--no-gold-sents", help="Give gold sentence boundaries"),
    gold_preproc: bool = typer.Option(True, "--gold-preproc/--no-gold-preproc", help="One doc per gold sentence"),
    repeats: int = typer.Option(3, "--repeats", help="Timed passes; the fastest counts"),
    min_words: int = typer.Option(MIN_TIMED_WORDS, "--min-words", help=MIN_WORDS_HELP),
    limit: int = typer.Option(0, "--limit", help="Use only the first N docs (0: all)"),
) -> Dict:
    """Parse DATA with MODEL on one CPU thread; report UAS/LAS (spaCy's scorer), words/s,
    parameters and size on disk, and optionally write them to a JSON file."""
    nlp = spacy.load(model)
    reader = create_corpus_reader(
        data, gold_preproc=gold_preproc, limit=limit, gold_sents=gold_sents, gold_pos=gold_pos
    )
    examples = list(reader(nlp))
    msg.info(f"Parsing {len(examples)} docs with {model} (batch {batch_size}, 1 thread)")
    row = bench_parser(nlp, examples, batch_size=batch_size, repeats=repeats, min_words=min_words)
    row["disk_bytes"] = disk_bytes(model if Path(model).exists() else None)
    return write_measurement(row, model, data, output)
