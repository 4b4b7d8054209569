"""The typer app of `python -m greenkd_spacy` and the bridge to spaCy's CLI."""
import functools
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import typer
from spacy.cli._util import app as spacy_app
from wasabi import msg

from ..atomic import atomic_write_json

app = typer.Typer(
    name="greenkd-spacy",
    help="greenkd-spacy: distilled, pruned, spaCy-native components. "
    "The same commands are available in `python -m spacy` with a 'greenkd-' prefix.",
    no_args_is_help=True,
    add_completion=False,
)


def command(name: str, spacy_name: Optional[str] = None, **kwargs) -> Callable[[Callable], Callable]:
    """Register a function as `python -m greenkd_spacy NAME` and as `spacy greenkd-NAME`
    (or `spacy SPACY_NAME` where given)."""

    def register(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, **kw):
            # Our errors already say what, where and how to fix: a user should read
            # that line, not a traceback that ends in it.
            try:
                return func(*args, **kw)
            except ValueError as err:
                if str(err).startswith("(greenkd-spacy)"):
                    msg.fail(str(err), exits=1)
                raise

        app.command(name, **kwargs)(run)
        spacy_app.command(spacy_name or f"greenkd-{name}", **kwargs)(run)
        return func

    return register


MIN_WORDS_HELP = "Each timed pass runs the data whole as many times as it takes to cover this many words (a pass of a small test set is too short to time)"
OUTPUT_HELP = "Also write the measurement to this JSON file (one object)"


def write_measurement(row: Dict[str, Any], model: Path, data: Path, output: Optional[Path]) -> Dict[str, Any]:
    """For the greenkd-bench-* commands: name the inputs in the measurement, print it
    and, with --output, write it as one JSON object. RETURNS (Dict): the measurement."""
    row.update(model=str(model), data=str(data))
    msg.table({k: v for k, v in row.items() if not isinstance(v, (list, dict))})
    if output is not None:
        atomic_write_json(output, row)
        msg.good(f"Wrote the measurement to {output}")
    return row


@app.callback()
def _main() -> None:
    """greenkd-spacy: distilled, pruned, spaCy-native components."""
