"""Command-line interface.

The commands are typer commands on spaCy's own app, so they show up in `python -m spacy
--help` through the `spacy_cli` entry point, and also on our own app for
`python -m greenkd_spacy` / `greenkd-spacy`.
"""
from typing import Any

from .bench import bench_parser_cli  # noqa: F401  (registers the command)
from .compact import compact_cli  # noqa: F401
from .compare import compare_cli  # noqa: F401
from .conllu import convert_conllu_cli  # noqa: F401
from .distill import annotate_cli, distill_cli  # noqa: F401
from .init_student import init_student_cli  # noqa: F401
from .profile import profile_cli  # noqa: F401
from .labeller import bench_labeller_cli, convert_conll_cli, prune_lm_cli, pretrain_lm_cli  # noqa: F401
from .vectors import static_vectors_cli  # noqa: F401
from .textcat import augment_text_cli, bench_textcat_cli, convert_textcat_cli, prune_textcat_cli  # noqa: F401
from .app import app


def register(*args: Any, **kwargs: Any) -> None:
    """Target of the spacy_cli entry point: importing this module registered the commands."""


def main() -> None:
    app()
