"""`spacy distill TEACHER STUDENT_CONFIG OUTPUT`: train a student on a teacher's outputs."""
from pathlib import Path

import typer
from spacy.cli._util import parse_config_overrides, show_validation_error
from spacy.util import load_config
from wasabi import msg

from ..training.distill import distill
from .app import command


@command(
    "distill",
    spacy_name="distill",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def distill_cli(
    ctx: typer.Context,
    teacher: str = typer.Argument(..., help="Trained teacher pipeline: a directory or an installed package"),
    student_config: Path = typer.Argument(..., help="Student config with a [distillation] section", exists=True, dir_okay=False),
    output: Path = typer.Argument(..., help="Directory for model-best, model-last and the run state"),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue from OUTPUT/model-last if an earlier run left one"),
) -> None:
    """Distill TEACHER into the student of STUDENT_CONFIG.

    The teacher runs once over the distillation corpus and its outputs are cached
    (cache_dir, keyed by teacher weights and corpus); the student then trains on KL to
    the teacher (+ cross-entropy on gold where the corpus has it), is evaluated on the
    training section's dev corpus, and OUTPUT/model-best and model-last are written
    atomically.
    Rerun the same command after an interruption to resume. Config overrides work as in
    `spacy train`, e.g. --distillation.max_steps 500 --paths.train corpus/train.spacy.
    """
    overrides = parse_config_overrides(ctx.args)
    with show_validation_error(student_config):
        config = load_config(student_config, overrides=overrides, interpolate=False)
    try:
        _, summary = distill(teacher, config, output, resume=resume)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(f"Saved the student to {output} (best score {summary['training']['best_score']})")
