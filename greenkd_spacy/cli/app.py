"""The typer app of `python -m greenkd_spacy` and the bridge to spaCy's CLI."""
from typing import Callable, Optional

import typer
from spacy.cli._util import app as spacy_app

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
        app.command(name, **kwargs)(func)
        spacy_app.command(spacy_name or f"greenkd-{name}", **kwargs)(func)
        return func

    return register


@app.callback()
def _main() -> None:
    """greenkd-spacy: distilled, pruned, spaCy-native components."""
