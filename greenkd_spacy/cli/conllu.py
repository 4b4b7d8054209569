"""`spacy greenkd-convert-conllu`: check a CoNLL-U file, then convert it as `spacy convert` does."""
import codecs
import tempfile
from pathlib import Path

import typer
from spacy.cli.convert import convert
from wasabi import msg

from ..data.conllu import check_conllu, spacy_lang_for
from .app import command


@command("convert-conllu")
def convert_conllu_cli(
    input_path: Path = typer.Argument(..., help="CoNLL-U file (UTF-8)", exists=True, dir_okay=False),
    output_dir: Path = typer.Argument(..., help="Directory for INPUT_NAME.spacy"),
    n_sents: int = typer.Option(10, "--n-sents", "-n", help="Sentences per doc, as in `spacy convert -n`"),
) -> None:
    """Validate a CoNLL-U treebank, then write the same .spacy file as `spacy convert
    FILE DIR -n N -c conllu`.

    A malformed line (wrong column count, bad ID, HEAD out of range, cycles, no or
    several roots, empty DEPREL, invalid UTF-8) stops with its file, line and fix
    instead of spaCy's converter failing later without a line number. Multiword-token
    ranges and empty nodes are valid CoNLL-U: they are skipped and counted.
    """
    try:
        stats = check_conllu(input_path)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(
        f"{input_path}: {stats.sentences:,} sentences, {stats.tokens:,} words, "
        f"{len(stats.labels)} labels; skipped {stats.multiword_ranges:,} multiword ranges "
        f"and {stats.empty_nodes:,} empty nodes"
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = input_path
        with input_path.open("rb") as file_:
            bom = file_.read(3) == codecs.BOM_UTF8
        if bom:
            # spaCy's converter would keep the byte-order mark in the first line; the
            # copy keeps the file's name, which names the output.
            source = Path(tmp) / input_path.name
            source.write_bytes(input_path.read_bytes()[3:])
        convert(source, output_dir, file_type="spacy", n_sents=n_sents, converter="conllu", silent=False)
    lang = spacy_lang_for(input_path)
    note = "" if lang != "xx" else " (spaCy has no language class for this treebank's code; xx is its multi-language class)"
    msg.info(f"Train on it with --nlp.lang {lang}{note}: the shipped configs say en.")
