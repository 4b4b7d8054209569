"""The typer app of `python -m greenkd_spacy` and the bridge to spaCy's CLI."""
import functools
from pathlib import Path
from typing import Callable, Optional

import typer
from spacy.cli._util import app as spacy_app
from wasabi import msg

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


SKIP_MISSING_HELP = "If MODEL is not a directory, say so and exit 0 (a study benches the systems it has trained)"
MIN_WORDS_HELP = "Each timed pass runs the data whole as many times as it takes to cover this many words (a pass of a small test set is too short to time)"


def skipped(model: Path, system: str, skip_missing: bool) -> bool:
    """For --skip-missing of the greenkd-bench-* commands: True (and said) when the
    model of this row was not trained in this run."""
    if skip_missing and not Path(model).is_dir():
        msg.info(f"Skipping {system}: {model} does not exist (not trained in this run).")
        return True
    return False


@app.callback()
def _main() -> None:
    """greenkd-spacy: distilled, pruned, spaCy-native components."""
