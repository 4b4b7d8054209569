"""`spacy greenkd-init-student TEACHER OUTPUT.cfg`: a complete student config for a
teacher pipeline, ready for `spacy distill` from raw text."""
from pathlib import Path
from typing import List, Optional

import spacy
import typer
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.util import load_model_from_config
from thinc.api import Config
from wasabi import msg

from ..atomic import atomic_write_bytes
from ..distillation.filled_config import filled_config_text
from ..distillation.student_config import config_text, teacher_architecture_text
from ..distillation.student_plan import PRESETS, copies_as_batch_ruler, plan_student
from .app import command

# Students that gained most from static word vectors in our studies (text classifiers:
# projects/textcat, whose convolution student kept 65-66 % of a transformer's lead with
# en_core_web_md's vectors, 59 % and 50 % without; entities: projects/ner-conll03):
# where the config gives them none, the command says how to add them.
VECTOR_HUNGRY = ("greenkd_textcat", "greenkd_textcat_multilabel", "greenkd_ner")


def _names(value: Optional[str]) -> List[str]:
    return [name.strip() for name in (value or "").split(",") if name.strip()]


def _copied_as(nlp: Language, name: str) -> str:
    """How `spacy distill` copies a teacher component that cannot be trained."""
    if copies_as_batch_ruler(nlp.get_pipe(name)):
        return "copied as it is (as greenkd_attribute_ruler: same annotations, batched)"
    return "copied as it is"


@command("init-student")
def init_student_cli(
    teacher: str = typer.Argument(..., help="Teacher pipeline: a directory or an installed package name"),
    output: Path = typer.Argument(..., help="Where to write the student config (.cfg); '-' prints it", dir_okay=False),
    preset: str = typer.Option("fast", "--preset", "-p", help=f"Student: {', '.join(PRESETS)} (fast: the CPU-first sizes; small: a width-64, depth-2 encoder, about a fifth of fast's work per word, a parser label scorer half as wide, and a text classifier of n-grams alone, for the most speed; accurate: a wider encoder and a wider parser; all three read the teacher's static vectors where it has them; teacher: the teacher's own architecture, the baseline spaCy's same-kind distillation gives)"),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language code of the student (default: the teacher's)"),
    keep: Optional[str] = typer.Option(None, "--keep", help="Comma-separated teacher components to give students (default: every one)"),
    drop: Optional[str] = typer.Option(None, "--drop", help="Comma-separated teacher components to leave out"),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Static vectors for the student's encoder: a pipeline directory that has them, e.g. made from a transformer teacher by `spacy greenkd-static-vectors` (default: the teacher's own vectors, where it has them)", exists=True, file_okay=False),
) -> None:
    """Read TEACHER and write a student config for it to OUTPUT.

    Every trainable teacher component gets the CPU-first student of its kind, all
    listening to one shared encoder (a parser: greenkd_parser, with a senter learning
    the teacher's sentence starts; taggers, morphologizers: spaCy's own; ner: greenkd's
    BiLSTM-CRF; text classifiers: greenkd's n-gram bag with a word convolution); rule
    components (attribute_ruler, a rule lemmatizer, entity_ruler) are copied from the
    teacher as they are. The file says what each student learns and what happens to
    every teacher component, and runs as it is: `spacy distill TEACHER OUTPUT
    STUDENT_DIR --paths.text TEXT_FILE`, the teacher labelling the first texts as the
    dev set.
    """
    if preset not in PRESETS:
        msg.fail(f"Unknown preset '{preset}': choose one of {', '.join(PRESETS)}", exits=1)
    if preset == "teacher" and vectors is not None:
        msg.fail("--vectors is for the small, fast and accurate presets: preset teacher copies the teacher's own "
                 "architecture, vectors included. Leave out --vectors, or choose --preset fast.", exits=1)
    nlp = spacy.load(teacher)
    needs_vectors = False  # a student that would gain from word vectors gets none
    if preset == "teacher":
        text = teacher_architecture_text(nlp, teacher)
        kept = Config().from_str(text, interpolate=False)["nlp"]["pipeline"]
        rows = [
            (name, "its own architecture" if name in kept else
             _copied_as(nlp, name) if not isinstance(nlp.get_pipe(name), TrainablePipe) else "dropped: no student learns it", "")
            for name in nlp.pipe_names
        ]
    else:
        # The teacher's word vectors are what it knows about words, at the cost of a
        # lookup: every student reads them.
        source = teacher if nlp.vocab.vectors.shape[0] > 0 else None
        if vectors is not None:
            try:
                rows = spacy.load(vectors).vocab.vectors.shape[0]
            except OSError:
                rows = 0
            if rows == 0:
                msg.fail(f"--vectors {vectors} holds no static vectors: give a pipeline directory that has "
                         "them (e.g. the output of `spacy greenkd-static-vectors`).", exits=1)
            source = str(vectors)
        plan = plan_student(nlp, preset=preset, keep=_names(keep) or None, drop=_names(drop), vectors=source)
        if lang:
            plan.lang = lang
        text = filled_config_text(config_text(plan, teacher))
        rows = [(c.teacher, f"{c.name} ({c.factory})", plan.targets(c)) for c in plan.components]
        rows += [(name, _copied_as(nlp, name), "") for name in plan.copied]
        rows += [(name, what, "") for name, _, what in plan.left_out]
        needs_vectors = source is None and any(c.factory in VECTOR_HUNGRY for c in plan.components)
    # The file must build as it is: a failure here is greenkd's, not the user's.
    load_model_from_config(Config().from_str(text, interpolate=False), auto_fill=False, validate=True)
    if str(output) == "-":
        print(text)
        return
    msg.table(rows, header=("teacher component", "in the student", "learns"), divider=True)
    atomic_write_bytes(output, text.encode("utf8"))
    msg.good(f"Wrote the student config to {output}")
    if needs_vectors:
        msg.info("Neither the teacher nor --vectors gives the student word vectors. Text classifiers "
                 "and entity recognizers keep more of their teacher with them: pass --vectors with a "
                 "pipeline that has vectors (e.g. spaCy's en_core_web_md) or one made by "
                 "`spacy greenkd-static-vectors`.")
    msg.text(f"Distil it: python -m spacy distill {teacher} {output} OUTPUT_DIR --paths.text TEXT_FILE")

