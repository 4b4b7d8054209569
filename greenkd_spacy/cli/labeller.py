"""Sequence labelling commands (LD-Net): convert CoNLL files, pretrain the LM, prune it,
benchmark a labeller.

`spacy greenkd-convert-conll`, `spacy greenkd-pretrain-lm`, `spacy greenkd-prune-lm`,
`spacy greenkd-bench-labeller` (also `python -m greenkd_spacy convert-conll` etc.).
"""
from pathlib import Path
from typing import Dict, Optional

import spacy
import torch
import typer
from spacy.tokens import DocBin
from wasabi import msg

from ..bench import MIN_TIMED_WORDS, bench_labeller, disk_bytes
from ..atomic import atomic_write_bytes, save_pipeline
from ..errors import Errors, Warnings
from ..models.pytorch.dense_lm import PAPER_LM, LMShape
from ..pipeline.labeller import SequenceLabeller
from ..data.conll import FORMATS, read_sentences, sentence_doc
from ..data.corpus import load_docs
from ..training.lm_pretrain import pretrain_lm
from .app import MIN_WORDS_HELP, OUTPUT_HELP, command, write_measurement


@command("convert-conll")
def convert_conll_cli(
    input_path: Path = typer.Argument(..., help="CoNLL-2003 (word POS chunk NER) or CoNLL-2000 (word POS chunk) file", exists=True, dir_okay=False),
    output_path: Path = typer.Argument(..., help="Output .spacy file"),
    fmt: str = typer.Option(..., "--format", "-f", help=f"One of {', '.join(FORMATS)}"),
    spans_key: str = typer.Option("chunks", "--spans-key", help="conll00: the doc.spans key the chunks go to"),
    chunks_as_ents: bool = typer.Option(False, "--chunks-as-ents", help="conll00: write chunks to doc.ents instead (to train spaCy's own `ner` as a baseline)"),
    hold_out: int = typer.Option(0, "--hold-out", help="Write the last N sentences to --held-out-output instead (CoNLL-2000 has no dev set: the LD-Net paper holds out 1,000 train sentences)"),
    held_out_output: Optional[Path] = typer.Option(None, "--held-out-output", help="Where the held-out sentences go"),
) -> None:
    """Convert a CoNLL column file to .spacy, one doc per sentence: entities in doc.ents
    (conll03, IOB1 read correctly) or chunks in doc.spans[KEY] (conll00). A malformed
    line stops with its file and line number."""
    vocab = spacy.blank("en").vocab
    try:
        docs = [sentence_doc(vocab, w, p, t, fmt, spans_key, chunks_as_ents) for w, p, t, _ in read_sentences(input_path, fmt)]
    except ValueError as err:
        msg.fail(str(err), exits=1)
    if not docs:
        msg.fail(Errors.E066.format(path=input_path, what="sentences", fmt=fmt), exits=1)
    if hold_out and held_out_output is None:
        msg.fail("--hold-out needs --held-out-output.", exits=1)
    parts = [(output_path, docs[: len(docs) - hold_out] if hold_out else docs)]
    if hold_out:
        parts.append((held_out_output, docs[len(docs) - hold_out :]))
    for path, part in parts:
        # Written whole or not at all: a full disk leaves the earlier file, not half of one.
        atomic_write_bytes(path, DocBin(docs=part, attrs=["ORTH", "TAG", "ENT_IOB", "ENT_TYPE"]).to_bytes())
        n_spans = sum(len(d.ents) if fmt == "conll03" or chunks_as_ents else len(d.spans[spans_key]) for d in part)
        msg.good(f"Wrote {len(part):,} sentences ({n_spans:,} spans) to {path}")


@command("pretrain-lm")
def pretrain_lm_cli(
    text_path: Path = typer.Argument(..., help="Raw text: .txt(.gz), one text per line, or .jsonl(.gz) with a 'text' field; or a directory of them", exists=True),
    output: Path = typer.Argument(..., help="Output directory (model-best/, model-last/)"),
    lang: str = typer.Option("en", "--lang", help="Language whose tokenizer splits the text"),
    vocab_size: int = typer.Option(PAPER_LM.vocab_size, "--vocab-size", help="Words in the LM vocabulary (most frequent)"),
    embed_width: int = typer.Option(PAPER_LM.embed_width, "--embed-width", help="Width of the word embeddings the LMs read"),
    hidden_width: int = typer.Option(PAPER_LM.hidden_width, "--hidden-width", help="Hidden width of each LSTM layer"),
    depth: int = typer.Option(PAPER_LM.depth, "--depth", help="LSTM layers per direction"),
    proj_width: int = typer.Option(PAPER_LM.proj_width, "--proj-width", help="Width of the projection before the adaptive softmax"),
    layer_dropout: float = typer.Option(PAPER_LM.layer_dropout, "--layer-dropout", help="Probability that a layer's output is withheld from later layers (per batch)"),
    dropout: float = typer.Option(PAPER_LM.dropout, "--dropout", help="Dropout on the word embeddings and before the softmax projection while pretraining"),
    batch_size: int = typer.Option(128, "--batch-size", "-b", help="Chunks of --seq-length tokens per step"),
    seq_length: int = typer.Option(20, "--seq-length", help="Tokens per training chunk"),
    learn_rate: float = typer.Option(1e-3, "--learn-rate", help="Adam learning rate"),
    max_steps: int = typer.Option(10000, "--max-steps", help="Training steps in all (a resumed run counts the steps already done)"),
    eval_every: int = typer.Option(500, "--eval-every", help="Steps between checkpoints (held-out loss, model-last, model-best)"),
    limit: int = typer.Option(0, "--limit", help="Use only the first N texts (0: all)"),
    seed: int = typer.Option(0, "--seed", help="Random seed (batches, dropout, initial weights)"),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue from OUTPUT/model-last if it exists"),
) -> None:
    """Pretrain LD-Net's forward and backward densely connected LMs on raw text, like
    `spacy pretrain`: streamed input, progress with ETA, atomic checkpoints, resume.
    Defaults are the paper's LM; point the labeller's [initialize.components.NAME]
    lm_path at OUTPUT/model-best."""
    torch.set_num_threads(max(1, torch.get_num_threads()))
    try:
        state = pretrain_lm(
            text_path, output, lang=lang, batch_size=batch_size,
            shape=LMShape(vocab_size=vocab_size, embed_width=embed_width, hidden_width=hidden_width, depth=depth,
                          proj_width=proj_width, layer_dropout=layer_dropout, dropout=dropout),
            seq_length=seq_length, learn_rate=learn_rate, max_steps=max_steps, eval_every=eval_every, limit=limit,
            seed=seed, resume=resume,
        )
    except ValueError as err:
        msg.fail(str(err), exits=1)
    last = state["history"][-1] if state["history"] else {}
    msg.good(f"LM trained for {state['step']} steps; held-out loss {last.get('held_out_loss', float('nan')):.3f} (ppl {last.get('ppl', float('nan')):.1f}); saved to {output}")


@command("prune-lm")
def prune_lm_cli(
    model: Path = typer.Argument(..., help="Pipeline with a greenkd_ner / greenkd_chunker trained with layer selection (lm_lambda0 > 0)"),
    output: Path = typer.Argument(..., help="Where to save the pruned pipeline"),
) -> None:
    """Delete the LM layers whose gate z is 0 and save a smaller pipeline that runs
    without them (LD-Net 2.4). Prints each labeller's gates and LM FLOPs per token
    before and after."""
    nlp = spacy.load(model)
    pipes = [(name, pipe) for name, pipe in nlp.pipeline if isinstance(pipe, SequenceLabeller)]
    if not pipes:
        msg.fail(f"{model} has no greenkd_ner or greenkd_chunker component.", exits=1)
    for name, pipe in pipes:
        gates = pipe.lm_gates()
        try:
            before, after = pipe.prune_lm()
        except ValueError as err:
            msg.fail(str(err), exits=1)
        msg.info(f"{name}: gates {gates}")
        if after >= before:
            msg.warn(Warnings.W002.format(name=name))
        msg.good(f"{name}: LM FLOPs/token {before:,} -> {after:,} ({100 * (1 - after / max(1, before)):.1f} % fewer)")
    try:
        save_pipeline(nlp, Path(output))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(f"Saved the pruned pipeline to {output} ({disk_bytes(output):,} bytes; was {disk_bytes(model):,})")


@command("bench-labeller")
def bench_labeller_cli(
    model: Path = typer.Argument(..., help="Pipeline directory (or installed package name)"),
    data: Path = typer.Argument(..., help=".spacy file with gold entities (doc.ents) or spans"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Docs per nlp.pipe batch"),
    repeats: int = typer.Option(3, "--repeats", help="Timed passes; the fastest counts"),
    min_words: int = typer.Option(MIN_TIMED_WORDS, "--min-words", help=MIN_WORDS_HELP),
    limit: int = typer.Option(0, "--limit", help="Use only the first N docs (0: all)"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Score doc.spans[KEY] instead of doc.ents"),
) -> Dict:
    """Label DATA's gold-tokenized sentences with MODEL on one CPU thread: span F1
    (spaCy's scorer), words/s, LM FLOPs per token, parameters and size on disk."""
    nlp = spacy.load(model)
    reference = load_docs(data, nlp.vocab)
    if limit:
        reference = reference[:limit]
    row = bench_labeller(nlp, reference, batch_size=batch_size, repeats=repeats, spans_key=spans_key, min_words=min_words)
    row["disk_bytes"] = disk_bytes(model if Path(model).exists() else None)
    return write_measurement(row, model, data, output)
