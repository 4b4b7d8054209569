"""`spacy greenkd-compact`: store a trained pipeline's greenkd weights as float16."""
import shutil
from pathlib import Path
from typing import Dict, Optional

import spacy
import typer
from spacy.training import Corpus
from wasabi import msg

from ..atomic import atomic_write_json
from ..bench import disk_bytes
from ..models.storage import STORAGE_DTYPES, save_compacted
from .app import command


def _scores(nlp, data: Path) -> Dict[str, float]:
    """The pipeline's numeric scores on a .spacy file (tokenized from the text, as
    `spacy evaluate` does), speed left out."""
    scores = nlp.evaluate(list(Corpus(str(data))(nlp)))
    return {
        key: value for key, value in scores.items()
        if isinstance(value, (int, float)) and not key.startswith("speed")
    }


@command("compact")
def compact_cli(
    input_path: Path = typer.Argument(..., help="Trained pipeline directory (e.g. training/ner/model-best)", exists=True, file_okay=False),
    output_path: Path = typer.Argument(..., help="Directory to write the compacted pipeline to (not the input)"),
    dtype: str = typer.Option("float16", "--dtype", help=f"Storage dtype of greenkd's weights: {', '.join(STORAGE_DTYPES)}"),
    data: Optional[Path] = typer.Option(None, "--data", help="A .spacy file to score the pipeline on before and after (e.g. the dev set)", exists=True, dir_okay=False),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT if it is a pipeline directory written before (has a config.cfg)"),
    report: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the record (sizes, scores before and after) to this JSON file (one object)"),
) -> Dict:
    """Write a trained pipeline with greenkd's weights stored as float16: about half
    the size of our components on disk, cast back to float32 when loaded (same speed,
    and it can be trained on). spaCy's own components, spacy-transformers' and a
    `tok2vec` component's hashed tables are written as they are (its PyTorch BiLSTM is
    compacted). With --data, the scores before and after are printed, so you see what
    the rounding costs before you ship it (`spacy package OUTPUT ...` packages it).
    """
    if dtype not in STORAGE_DTYPES:
        msg.fail(f"--dtype {dtype} is not supported: use one of {', '.join(STORAGE_DTYPES)}.", exits=1)
    source, target = input_path.resolve(), output_path.resolve()
    if target == source or source in target.parents:
        msg.fail("OUTPUT is the input directory or inside it: write the compacted pipeline elsewhere.", exits=1)
    if output_path.exists() and (not output_path.is_dir() or any(output_path.iterdir())):
        if overwrite and (output_path / "config.cfg").is_file():
            shutil.rmtree(output_path)
        else:
            msg.fail(f"{output_path} exists and is not an empty directory: remove it, choose another OUTPUT "
                     "or pass --overwrite (for a pipeline directory), so that no stale file ships with "
                     "the pipeline.", exits=1)
    before = disk_bytes(input_path)
    nlp = spacy.load(input_path)
    counts = save_compacted(nlp, output_path, dtype)
    if not counts:
        msg.fail(
            f"{input_path} has no greenkd weights to compact (its components: "
            f"{', '.join(nlp.component_names) or 'none'}): nothing was written.", exits=1,
        )
    after = disk_bytes(output_path)
    compacted = ", ".join(counts)
    msg.good(f"Wrote {output_path}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB; {dtype} weights in {compacted}.")
    record = {
        "model": str(input_path), "output": str(output_path), "dtype": dtype, "components": counts,
        "disk_bytes_before": before, "disk_bytes_after": after,
    }
    if data is not None:
        # save_compacted left the loaded pipeline at full precision: it is the "before".
        old, new = _scores(nlp, data), _scores(spacy.load(output_path), data)
        rows = [(key, f"{old[key]:.4f}", f"{new.get(key, float('nan')):.4f}") for key in sorted(old)]
        msg.table(rows, header=("score", "before", "after"), divider=True)
        record.update(data=str(data), scores_before=old, scores_after=new)
    if report is not None:
        atomic_write_json(report, record)
        msg.good(f"Wrote the record to {report}")
    return record
