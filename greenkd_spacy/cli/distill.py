"""`spacy distill TEACHER STUDENT_CONFIG OUTPUT`: train a student on a teacher's outputs."""
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from spacy.cli._util import parse_config_overrides, show_validation_error
from spacy.util import load_config
from thinc.api import Config
from wasabi import msg

from ..distillation.loop import distill
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
    annotate_only: bool = typer.Option(False, "--annotate-only", help="Only fill the teacher cache (resumable, shard by shard), then stop"),
    backend: str = typer.Option("local", "--backend", "-b", help="Teacher pass: 'local' (this process) or 'ray' (needs greenkd-spacy[ray])"),
    workers: int = typer.Option(1, "--workers", "-w", help="Ray workers, each loads the teacher once (backend ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster to join ('auto', 'ray://HOST:10001'); default: start a local Ray"),
    report: bool = typer.Option(True, "--report/--no-report", help="At the end, compare model-best with the teacher on the dev set (agreement, words/s, size, cost) and write OUTPUT/report.json"),
) -> None:
    """Distill TEACHER into the student of STUDENT_CONFIG.

    The teacher runs once over the distillation corpus and its outputs are cached
    (cache_dir, keyed by teacher weights and corpus); the student then trains on KL to
    the teacher (+ cross-entropy on gold where the corpus has it), is evaluated on the
    training section's dev corpus, and OUTPUT/model-best and model-last are written
    atomically.
    Rerun the same command after an interruption to resume. Config overrides work as in
    `spacy train`, e.g. --distillation.max_steps 500 --paths.train corpus/train.spacy.
    With --backend ray the teacher pass runs on Ray workers (docs/annotation.md);
    --annotate-only stops after it, e.g. to label a large corpus on a cluster first.
    At the end, the report says what model-best kept of the teacher on the dev set
    (`spacy greenkd-compare` makes it for any pipelines and data).
    """
    config = load_student_config(student_config, ctx.args)
    try:
        _, summary = distill(
            teacher, config, output, resume=resume, annotate_only=annotate_only,
            backend=backend, workers=workers, address=address, report=report,
        )
    except (ValueError, ImportError) as err:
        msg.fail(str(err), exits=1)
    if annotate_only:
        _report_annotation(summary)
        return
    msg.good(f"Saved the student to {output} (best score {summary['training']['best_score']})")


@command(
    "annotate",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def annotate_cli(
    ctx: typer.Context,
    teacher: str = typer.Argument(..., help="Trained teacher pipeline: a directory or an installed package"),
    student_config: Path = typer.Argument(..., help="Student config with a [distillation] section (corpus, cache_dir, shard_size)", exists=True, dir_okay=False),
    backend: str = typer.Option("local", "--backend", "-b", help="'local' (this process) or 'ray' (needs greenkd-spacy[ray])"),
    workers: int = typer.Option(1, "--workers", "-w", help="Ray workers, each loads the teacher once (backend ray)"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster to join ('auto', 'ray://HOST:10001'); default: start a local Ray"),
) -> None:
    """Label the distillation corpus of STUDENT_CONFIG with TEACHER into the teacher
    cache, shard by shard, without training (same as `spacy distill --annotate-only`).

    Shards of [distillation] shard_size examples are written atomically under
    [distillation] cache_dir with a manifest (example range, rows, checksum, teacher
    fingerprint); a rerun skips finished shards, and a later `spacy distill` with the
    same teacher and config reads the cache instead of running the teacher.
    """
    config = load_student_config(student_config, ctx.args)
    try:
        _, summary = distill(
            teacher, config, None, annotate_only=True, backend=backend, workers=workers, address=address
        )
    except (ValueError, ImportError) as err:
        msg.fail(str(err), exits=1)
    _report_annotation(summary)


# [distillation] sections that default to {} and may be absent from a config.
PER_COMPONENT_SECTIONS = ("gold_weights", "teacher_weights")


def load_student_config(path: Path, args: List[str]) -> Config:
    """The student config with the command line's overrides. spaCy refuses an override
    under a section the file does not have, and the per-component weights default to
    none, so `--distillation.gold_weights.morphologizer 3` would fail on every config
    written before they existed: such a section is added (empty) first."""
    overrides = parse_config_overrides(args)
    with show_validation_error(path):
        wanted = [
            section for section in PER_COMPONENT_SECTIONS
            if any(key.startswith(f"distillation.{section}.") for key in overrides)
        ]
        if not wanted:
            return load_config(path, overrides=overrides, interpolate=False)
        config = load_config(path, interpolate=False)
        if "distillation" in config:
            for section in wanted:
                if not isinstance(config["distillation"].get(section), dict):
                    config["distillation"][section] = {}
        return Config().from_str(config.to_str(), overrides=overrides, interpolate=False)


def _report_annotation(summary: Dict[str, Any]) -> None:
    for name, info in summary["annotation"].items():
        if info.get("prefix_of"):
            whole = info["prefix_of"]
            msg.good(
                f"{name}: read the first {info['docs']:,} docs of a complete teacher cache of "
                f"{whole['docs']:,} ({whole['cache']}); charged {whole['share']:.1%} of its pass, "
                f"{info.get('cpu_seconds', 0):,.0f} CPU-s"
            )
        elif info.get("reused"):
            msg.good(f"{name}: the teacher cache was already complete ({info.get('docs', '?')} docs)")
        else:
            msg.good(
                f"{name}: {info['docs']:,} docs in the cache ({info['docs_already_cached']:,} from "
                f"earlier runs), {info['words_per_second']:,.0f} words/s with {info['workers']} "
                f"{info['backend']} worker(s); the pass took {info['wall_seconds']:,.0f} s, "
                f"{info['cpu_seconds']:,.0f} CPU-s over all its runs"
            )
