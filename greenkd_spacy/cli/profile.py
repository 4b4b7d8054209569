"""`spacy greenkd-profile MODEL DATA`: where a pipeline's time goes, stage by stage."""
from pathlib import Path
from typing import Optional

import spacy
import typer
from wasabi import msg

from ..atomic import atomic_write_json
from ..data.text_corpus import texts_of
from ..profile import stage_profile
from .app import command


@command("profile")
def profile_cli(
    model: str = typer.Argument(..., help="Pipeline: a directory or an installed package name"),
    data: Path = typer.Argument(..., help="Text to run it on: raw text (.txt[.gz], .jsonl[.gz]) or a .spacy corpus (its texts)", exists=True),
    limit: int = typer.Option(2000, "--limit", help="Use the first N texts (0: all)"),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Batch size, as nlp.pipe's"),
    rounds: int = typer.Option(3, "--rounds", help="Passes; each stage's fastest counts"),
    min_words: int = typer.Option(20000, "--min-words", help="Each pass covers at least this many words (the texts repeated)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the profile as JSON"),
) -> None:
    """Time MODEL on DATA stage by stage on one thread: the tokenizer, and for each
    component its network (predict), its decoding where a greenkd component decodes in
    a step of its own (MST, Viterbi), and set_annotations; rule components as one stage.
    Prints microseconds per word and each stage's share of the pass."""
    nlp = spacy.load(model)
    try:
        texts, _ = texts_of(data, nlp.vocab, limit=limit, purpose="profile")
    except ValueError as err:
        msg.fail(str(err), exits=1)
    if not texts:
        msg.fail(f"{data} holds no text to run {model} on.", exits=1)
    profile = stage_profile(nlp, texts, batch_size=batch_size, rounds=rounds, min_words=min_words)
    rows = [(s["stage"], f"{s['us_per_word']:.1f}", f"{100 * s['share']:.1f}%") for s in profile["stages"]]
    msg.table(rows, header=("stage", "us/word", "share"), divider=True, aligns=("l", "r", "r"))
    msg.info(f"{profile['words']:,} words, {profile['words_per_second']:,.0f} words/s on one thread (the stages' sum)")
    if output is not None:
        atomic_write_json(output, {"model": model, "data": str(data), **profile})
        msg.good(f"Wrote the profile to {output}")
