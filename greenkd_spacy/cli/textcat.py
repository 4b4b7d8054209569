"""Text classification commands: convert labeled data, make a transfer set (variants of
the training texts, or sentences of long documents), prune a DAN,
benchmark a classifier.

`spacy greenkd-convert-textcat`, `spacy greenkd-augment-text`, `spacy greenkd-split-text`,
`spacy greenkd-prune-textcat`,
`spacy greenkd-bench-textcat` (also `python -m greenkd_spacy convert-textcat` etc.).
"""
import gzip
import random
from pathlib import Path
from typing import Dict, List, Optional

import spacy
import typer
from spacy.tokens import DocBin
from wasabi import msg

from ..bench import bench_textcat, disk_bytes
from ..pipeline.textcat import DANMixin
from ..data.augment import Augmenter
from ..data.corpus import load_docs
from ..data.heldout import whole_text_split
from ..atomic import atomic_write_bytes, atomic_write_lines, save_pipeline
from ..errors import Errors
from ..data.sentences import iter_sentences
from ..data.labeled import LABELED_FORMATS, docs_from_labeled, labels_of, read_labeled
from ..data.text_corpus import iter_texts
from .app import OUTPUT_HELP, command, write_measurement


@command("convert-textcat")
def convert_textcat_cli(
    input_path: Path = typer.Argument(..., help="Labeled file: SST-2 TSV, TREC .label or labeled JSONL(.gz)", exists=True, dir_okay=False),
    output_path: Path = typer.Argument(..., help="Output .spacy file"),
    fmt: str = typer.Option(..., "--format", "-f", help=f"Input format: one of {', '.join(LABELED_FORMATS)}"),
    labels: Optional[str] = typer.Option(None, "--labels", help="Comma-separated label set (default: the labels found)"),
    dev_output: Optional[Path] = typer.Option(None, "--dev-output", help="Also write a held-out slice here (for model selection)"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", help="Share of docs held out for --dev-output (with --dev-whole-texts: of the whole texts)"),
    dev_whole_texts: bool = typer.Option(False, "--dev-whole-texts", help="Hold out only texts that no other text contains and leave out of training every text inside a held-out one: for phrase-level data such as GLUE SST-2, where a random held-out phrase sits inside a training one"),
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out split and of the --labeled sample"),
    labeled: int = typer.Option(0, "--labeled", help="Keep the labels of only this many docs (a random sample, after the held-out split; 0: all)"),
    unlabeled_output: Optional[Path] = typer.Option(None, "--unlabeled-output", help="With --labeled: write the texts of the other docs here, one per line (.txt or .txt.gz), as unlabeled text for distillation"),
    lang: str = typer.Option("en", "--lang", help="Language of the tokenizer"),
) -> None:
    """Convert labeled text classification data into a .spacy file with exclusive cats.

    Every doc gets all labels in doc.cats (1.0 for its label, 0.0 for the rest), as
    spaCy's textcat expects. A malformed line stops the conversion with its file and
    line number. --labeled N with --unlabeled-output sets up the few-labels case that
    distillation is for: N labeled docs, the rest as raw text for the teacher to label.
    """
    if labeled < 0:
        msg.fail("--labeled must be >= 0.", exits=1)
    if labeled and unlabeled_output is None:
        msg.fail("--labeled needs --unlabeled-output (where the other texts go).", exits=1)
    if not 0.0 < dev_fraction < 1.0:
        msg.fail(f"--dev-fraction must be between 0 and 1, got {dev_fraction}.", exits=1)
    if dev_whole_texts and dev_output is None:
        msg.fail("--dev-whole-texts needs --dev-output (where the held-out texts go).", exits=1)
    try:
        pairs = list(read_labeled(input_path, fmt))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    if not pairs:
        msg.fail(Errors.E066.format(path=input_path, what="labeled texts", fmt=fmt), exits=1)
    label_set: List[str] = labels.split(",") if labels else labels_of(pairs)
    unknown = sorted({label for _, label in pairs} - set(label_set))
    if unknown:
        msg.fail(f"{input_path} has labels {unknown} that are not in --labels {label_set}.", exits=1)
    held_out: List = []
    if dev_output is not None:
        if dev_whole_texts:
            dev_list, dropped = whole_text_split([text for text, _ in pairs], dev_fraction, seed)
            dev_ids, left_out = set(dev_list), set(dropped)
            msg.info(
                f"Held out {len(dev_ids)} whole texts; left {len(left_out)} texts that occur "
                "inside them out of training"
            )
        else:
            order = list(range(len(pairs)))
            random.Random(seed).shuffle(order)
            dev_ids, left_out = set(order[: int(round(dev_fraction * len(pairs)))]), set()
        held_out = [p for i, p in enumerate(pairs) if i in dev_ids]
        pairs = [p for i, p in enumerate(pairs) if i not in dev_ids and i not in left_out]
    unlabeled: List = []
    if labeled:
        if labeled >= len(pairs):
            msg.fail(f"--labeled {labeled} leaves nothing unlabeled: {input_path} has {len(pairs)} training docs.", exits=1)
        order = list(range(len(pairs)))
        random.Random(seed + 1).shuffle(order)
        keep = set(order[:labeled])
        unlabeled = [p for i, p in enumerate(pairs) if i not in keep]
        pairs = [p for i, p in enumerate(pairs) if i in keep]
    nlp = spacy.blank(lang)
    if unlabeled_output is not None:
        written = atomic_write_lines(unlabeled_output, (" ".join(text.split()) for text, _ in unlabeled))
        msg.good(f"Wrote {written} unlabeled texts to {unlabeled_output}")
    for path, part in ((output_path, pairs), (dev_output, held_out)):
        if path is None:
            continue
        # Written whole or not at all: a full disk leaves the earlier file, not half of one.
        atomic_write_bytes(path, DocBin(docs=docs_from_labeled(nlp, part, label_set), store_user_data=False).to_bytes())
        msg.good(f"Wrote {len(part)} docs to {path} (labels: {', '.join(label_set)})")


@command("augment-text")
def augment_text_cli(
    input_path: Path = typer.Argument(..., help="Training texts: a .spacy file, or plain text / JSONL (.gz) with one text per line", exists=True),
    output_path: Path = typer.Argument(..., help="Text file to write, one variant per line (gzipped if it ends in .gz)"),
    variants: int = typer.Option(8, "--variants", "-n", help="Variants per text (fewer if a text has too few distinct ones)"),
    p_mask: float = typer.Option(0.1, "--p-mask", help="Chance that a word is deleted"),
    p_replace: float = typer.Option(0.1, "--p-replace", help="Chance that a word is replaced by a training word of the same casing class"),
    p_ngram: float = typer.Option(0.25, "--p-ngram", help="Chance that a variant is cut to a random 1..5-gram"),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same file)"),
    lang: str = typer.Option("en", "--lang", help="Language of the tokenizer for text input"),
) -> None:
    """Write a synthetic transfer set for `spacy distill` from the training texts.

    For tasks whose in-domain unlabeled text is not available (TREC's paper corpus is
    65M PAQ questions), the teacher can label variants of the training texts instead
    (Tang et al. 2019: word deletion, same-kind word replacement, n-gram sampling).
    Pass the output as the distillation corpus' unlabeled text (--paths.unlabeled).
    """
    if variants < 1:
        msg.fail("--variants must be >= 1.", exits=1)
    nlp = spacy.blank(lang)
    try:
        if input_path.suffix == ".spacy":
            docs = load_docs(input_path, nlp.vocab, purpose="read")
        else:
            docs = list(nlp.tokenizer.pipe(iter_texts(input_path)))
        texts = [[t.text for t in doc if not t.is_space] for doc in docs]
        augmenter = Augmenter(texts, p_mask=p_mask, p_replace=p_replace, p_ngram=p_ngram, seed=seed)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    lines = [" ".join(variant) + "\n" for words in texts for variant in augmenter.variants(words, variants)]
    data = "".join(lines).encode("utf8")
    # mtime=0: the same seed gives the same bytes, compressed or not.
    atomic_write_bytes(output_path, gzip.compress(data, mtime=0) if output_path.suffix == ".gz" else data)
    msg.good(f"Wrote {len(lines):,} variants of {len(texts):,} texts to {output_path}")


@command("split-text")
def split_text_cli(
    input_path: Path = typer.Argument(..., help="Unlabeled documents: plain text or JSONL (.gz), or a directory of them", exists=True),
    output_path: Path = typer.Argument(..., help="Text file to write, one sentence per line (gzipped if it ends in .gz)"),
    limit: int = typer.Option(0, "--limit", "-n", help="Stop after this many sentences (0: all)"),
    min_words: int = typer.Option(3, "--min-words", help="Drop sentences with fewer tokens"),
    max_words: int = typer.Option(60, "--max-words", help="Drop sentences with more tokens"),
    keep_case: bool = typer.Option(False, "--keep-case", help="Keep the original casing (default: lowercase, like GLUE SST-2)"),
    text_key: str = typer.Option("text", "--text-key", help="JSONL field holding the text"),
    lang: str = typer.Option("en", "--lang", help="Language of the tokenizer and sentencizer"),
) -> None:
    """Cut long unlabeled documents into tokenised sentences for a sentence-level transfer set.

    A sentence task (SST-2) is distilled on sentences like its own, and review text in
    quantity (IMDB's unlabeled reviews) comes as whole reviews with HTML breaks. Markup
    is stripped, spaCy's rule-based sentencizer splits, tokens are joined by spaces.
    Streamed: any input size, written atomically. Pass the output as
    `--paths.unlabeled` of `spacy distill`.
    """
    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    sentences = iter_sentences(
        nlp, iter_texts(input_path, text_key=text_key), lowercase=not keep_case, min_words=min_words, max_words=max_words
    )

    def reported(lines):
        for count, line in enumerate(lines, start=1):
            yield line
            if count % 100_000 == 0:
                msg.text(f"{count:,} sentences")
            if limit and count >= limit:
                return

    try:
        # Streamed; no name and mtime 0 in the gzip header: the same input gives the same bytes.
        written = atomic_write_lines(output_path, reported(sentences))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(f"Wrote {written:,} sentences to {output_path}")


@command("prune-textcat")
def prune_textcat_cli(
    model: Path = typer.Argument(..., help="Pipeline directory with a greenkd_textcat"),
    output: Path = typer.Argument(..., help="Where to save the pruned pipeline"),
    keep: float = typer.Option(..., "--keep", "-k", help="N-grams to keep: a fraction (0 < k <= 1) of the table or a count (k > 1)"),
    by: str = typer.Option("train", "--by", help="Frequency estimate: 'train' (training set, the paper's better choice) or 'all' (train + unlabeled)"),
    component: Optional[str] = typer.Option(None, "--component", "-c", help="Component name (default: every greenkd_textcat)"),
) -> None:
    """Drop the least frequent n-grams of a DAN and save a smaller pipeline (paper 4.2).

    Dropped n-grams become unknown at inference; the rest keep their trained vectors.
    """
    nlp = spacy.load(model)
    pipes = [(name, pipe) for name, pipe in nlp.pipeline if isinstance(pipe, DANMixin)]
    if component is not None:
        pipes = [(name, pipe) for name, pipe in pipes if name == component]
    if not pipes:
        msg.fail(f"{model} has no greenkd_textcat component{'' if component is None else ' named ' + component}.", exits=1)
    if keep <= 0:
        msg.fail("--keep must be > 0.", exits=1)
    for name, pipe in pipes:
        before = pipe.cfg["n_ngrams"]
        target = int(round(keep * before)) if keep <= 1 else int(keep)
        try:
            kept = pipe.prune_ngrams(target, by=by)
        except ValueError as err:
            msg.fail(str(err), exits=1)
        msg.info(f"{name}: kept {kept:,} of {before:,} n-grams ({100 * kept / max(1, before):.1f} %, by {by} counts)")
    try:
        save_pipeline(nlp, Path(output))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(f"Saved the pruned pipeline to {output} ({disk_bytes(output):,} bytes; was {disk_bytes(model):,})")


@command("bench-textcat")
def bench_textcat_cli(
    model: Path = typer.Argument(..., help="Pipeline directory (or installed package name)"),
    data: Path = typer.Argument(..., help=".spacy file whose docs have gold cats"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=OUTPUT_HELP),
    batch_sizes: str = typer.Option("32,1000", "--batch-sizes", "-b", help="Comma-separated nlp.pipe batch sizes to time"),
    repeats: int = typer.Option(3, "--repeats", help="Timed passes per batch size; the fastest counts"),
    limit: int = typer.Option(0, "--limit", help="Use only the first N docs (0: all)"),
    min_docs: int = typer.Option(10000, "--min-docs", help="Docs per timed pass: the test texts are repeated up to this many, so small test sets time long enough (accuracy uses each text once)"),
) -> Dict:
    """Classify the texts of DATA with MODEL on one CPU thread (tokenization included);
    report accuracy, macro-F1 and per-class precision/recall/F1, docs/s at each batch
    size, parameters and size on disk."""
    nlp = spacy.load(model)
    docs = load_docs(data, nlp.vocab)
    if limit:
        docs = docs[:limit]
    docs = [doc for doc in docs if doc.cats]
    if not docs:
        msg.fail(f"{data} has no doc with gold cats.", exits=1)
    texts = [doc.text for doc in docs]
    gold = [max(doc.cats, key=doc.cats.get) for doc in docs]
    sizes = [int(b) for b in batch_sizes.split(",")]
    msg.info(f"Classifying {len(texts)} texts with {model} (batch sizes {sizes}, 1 thread)")
    row = bench_textcat(nlp, texts, gold, batch_sizes=sizes, repeats=repeats, min_docs=min_docs)
    row["disk_bytes"] = disk_bytes(model if Path(model).exists() else None)
    return write_measurement(row, model, data, output)
