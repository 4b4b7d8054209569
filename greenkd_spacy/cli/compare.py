"""`spacy greenkd-compare TEACHER STUDENT DATA`: how much of a teacher a student kept,
and at what speed, on any data (raw text, or a .spacy corpus with gold)."""
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import spacy
import typer
from spacy.language import Language
from wasabi import msg

from ..atomic import atomic_write_json
from ..bench import MIN_TIMED_WORDS
from ..data.text_corpus import texts_of
from ..distillation.report import compare, pipeline_path, render
from .app import command


@command("compare")
def compare_cli(
    teacher: str = typer.Argument(..., help="Teacher pipeline: a directory or an installed package name"),
    student: str = typer.Argument(..., help="Student pipeline (e.g. OUTPUT/model-best of `spacy distill`)"),
    data: Path = typer.Argument(..., help="Held-out data: raw text (.txt[.gz], .jsonl[.gz], one text per line or record) or a .spacy corpus, whose annotation is then scored as gold too", exists=True),
    also: Optional[List[str]] = typer.Option(None, "--also", help="Another pipeline to compare, as NAME=PATH (repeatable), e.g. spacy-student=training/spacy/model-best"),
    name: str = typer.Option("student", "--name", help="Row name of STUDENT"),
    limit: int = typer.Option(2000, "--limit", help="Use the first N texts (0: all)"),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="nlp.pipe batch size of the timed passes"),
    min_words: int = typer.Option(MIN_TIMED_WORDS, "--min-words", help="Each timed pass covers at least this many words (the texts repeated)"),
    rounds: int = typer.Option(3, "--rounds", help="Timed passes per pipeline, taken in turns; the fastest counts"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the rows as JSON (report.json's shape)"),
) -> None:
    """Compare STUDENT (and --also pipelines) with TEACHER on DATA: per attribute, the
    agreement with the teacher's own annotation of the texts (tags, POS, morphology,
    lemmas, UAS/LAS, sentences, entities, spans, categories; spaCy's scorer names, in
    percent), gold scores where DATA is a .spacy corpus with annotation, and for every
    pipeline its words/s on one thread (raw text in, the same batches, passes in turns),
    its size on disk and, for a `spacy distill` output, its training and teacher-pass
    CPU seconds."""
    teacher_nlp = spacy.load(teacher)
    pipelines: Dict[str, Tuple[Language, Optional[Path]]] = {name: (spacy.load(student), pipeline_path(student))}
    for item in also or []:
        other, _, path = item.partition("=")
        if not path:
            msg.fail(f"--also takes NAME=PATH, got '{item}'", exits=1)
        pipelines[other] = (spacy.load(path), pipeline_path(path))
    texts, gold = texts_of(data, teacher_nlp.vocab, limit=limit, purpose="compare")
    msg.info(f"Comparing on {len(texts):,} texts ({sum(len(t.split()) for t in texts):,} words) of {data}")
    rows = compare(
        teacher_nlp, pipelines, texts, gold=gold, teacher_path=pipeline_path(teacher),
        batch_size=batch_size, rounds=rounds, min_words=min_words,
    )
    header, lines = render(rows)
    msg.table(lines, header=header, divider=True)
    if output is not None:
        atomic_write_json(output, rows)
        msg.good(f"Wrote the report to {output}")
