"""What a student kept of its teacher: the report `spacy distill` writes beside the
student and `spacy greenkd-compare` makes for any pipelines and any data.

The user's question after a distillation is "how much of my pipeline did the student
keep, and how much faster is it?", not a dev score. Each pipeline is scored against
the teacher's own annotation of the same texts (agreement: tags, POS, morphology,
lemmas, trees, sentences, entities, spans, categories, under spaCy's scorer names, in
percent), against gold where the data has it, and timed in the same run on one thread
(raw text in, the same batches, passes taken in turns so that a busy machine slows all
of them alike), with its size on disk and what it cost to make.
"""
import math
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab
from wasabi import Printer

from ..atomic import atomic_write_json
from ..bench import MIN_TIMED_WORDS, disk_bytes, one_thread, timed_pass, timing_copies

# The per-attribute fields of a row, spaCy's scorer names (scores in percent).
FIELDS = (
    "tag_acc", "pos_acc", "morph_acc", "lemma_acc", "dep_uas", "dep_las", "sents_f", "ents_f",
    "spans_sc_f", "cats_score",
)
SUMMARY_FILE = "distill_summary.json"
REPORT_FILE = "report.json"


def agreement(nlp: Language, references: Sequence[Doc]) -> Dict[str, float]:
    """Scores of `nlp` against reference docs (the teacher's annotation or gold), in
    percent, for the FIELDS the pipeline and the references both have.

    The references are moved into the pipeline's vocab first: spaCy's morph scorer
    reads each predicted analysis from the reference doc's strings, so a reference read
    into another vocab (a gold corpus, the teacher's docs) fails on an analysis the
    pipeline predicts that the reference never holds."""
    examples = [Example(nlp.make_doc(doc.text), in_vocab(doc, nlp.vocab)) for doc in references]
    return percent_fields(nlp.evaluate(examples))


def in_vocab(doc: Doc, vocab: Vocab) -> Doc:
    """The doc itself if it already uses `vocab`, else a copy that does."""
    return doc if doc.vocab is vocab else Doc(vocab).from_bytes(doc.to_bytes())


def percent_fields(scores: Dict[str, Any]) -> Dict[str, float]:
    """The FIELDS of spaCy scores (fractions) that have a finite value, in percent."""
    row = {}
    for field in FIELDS:
        value = scores.get(field)
        if isinstance(value, float) and math.isfinite(value):
            row[field] = round(100 * value, 2)
    return row


def words_per_second(
    pipelines: Dict[str, Language], texts: Sequence[str], *, batch_size: int = 256, rounds: int = 3, min_words: int = MIN_TIMED_WORDS
) -> Tuple[Dict[str, float], int]:
    """Words per second of each pipeline on one thread, raw text in (tokenization
    included): `rounds` passes each, taken in turns, the fastest counting. The texts
    are repeated until a pass covers `min_words`; also returns the words a pass timed."""
    one_thread()
    n_words = sum(len(text.split()) for text in texts)
    copies = timing_copies(n_words, min_words)
    texts = list(texts) * copies
    best: Dict[str, float] = {}
    for _ in range(rounds):
        for name, nlp in pipelines.items():
            seconds = timed_pass(nlp, texts, batch_size)
            best[name] = min(best.get(name, math.inf), seconds)
    words = n_words * copies
    return {name: round(words / seconds, 1) for name, seconds in best.items()}, words


def pipeline_path(name: Any) -> Optional[Path]:
    """The directory a pipeline is loaded from (its size on disk): a directory, or an
    installed package's; None for a pipeline object or an unknown name."""
    if not isinstance(name, (str, Path)):
        return None
    if Path(name).exists():
        return Path(name)
    try:
        return spacy.util.get_package_path(str(name))
    except Exception:  # spaCy raises ModuleNotFoundError or its own errors for unknown names
        return None


def run_costs(model_path: Optional[Path]) -> Dict[str, Optional[float]]:
    """The CPU seconds of the `spacy distill` run that made a student: its
    distill_summary.json beside model-best / model-last, or in the directory given."""
    costs: Dict[str, Optional[float]] = {"train_cpu_seconds": None, "teacher_annotation_cpu_seconds": None}
    if model_path is None:
        return costs
    for candidate in (Path(model_path) / SUMMARY_FILE, Path(model_path).parent / SUMMARY_FILE):
        if candidate.is_file():
            summary = srsly.read_json(candidate)
            costs["train_cpu_seconds"] = round(summary.get("training", {}).get("cpu_seconds", 0.0), 1)
            # Components that share one teacher pass each report that pass: count it once.
            passes = {
                tuple(sorted(info.get("components") or [name])): info.get("cpu_seconds", 0.0)
                for name, info in summary.get("annotation", {}).items()
            }
            teacher = sum(passes.values())
            teacher += summary.get("heldout", {}).get("cpu_seconds", 0.0)
            costs["teacher_annotation_cpu_seconds"] = round(teacher, 1)
            break
    return costs


def compare(
    teacher: Language,
    students: Dict[str, Tuple[Language, Optional[Path]]],
    texts: Sequence[str],
    *,
    gold: Optional[Sequence[Doc]] = None,
    teacher_path: Optional[Path] = None,
    references: Optional[Sequence[Doc]] = None,
    batch_size: int = 256,
    rounds: int = 3,
    min_words: int = MIN_TIMED_WORDS,
) -> List[Dict[str, Any]]:
    """The report's rows: the teacher first (agreement 100 by definition, measured all
    the same), then each student.

    teacher (Language): The teacher pipeline.
    students (Dict[str, Tuple[Language, Optional[Path]]]): Row name -> (pipeline, the
        directory it was loaded from: its size and its distillation's cost).
    texts (Sequence[str]): Held-out raw text, annotated by the teacher once.
    gold (Optional[Sequence[Doc]]): Gold docs of the same texts, where the data has them:
        each row then has `gold_<field>` scores too.
    references (Optional[Sequence[Doc]]): The teacher's annotation of `texts` where it
        is already made (a raw-text run's dev set): the teacher does not run again.
    RETURNS (List[Dict[str, Any]]): One row per pipeline.
    """
    if references is None:
        references = list(teacher.pipe(texts, batch_size=64))
    pipelines = {"teacher": teacher, **{name: nlp for name, (nlp, _) in students.items()}}
    speeds, timed_words = words_per_second(pipelines, texts, batch_size=batch_size, rounds=rounds, min_words=min_words)
    paths = {"teacher": teacher_path, **{name: path for name, (_, path) in students.items()}}
    rows = []
    for name, nlp in pipelines.items():
        row: Dict[str, Any] = {"system": name, "words_per_second": speeds[name]}
        row["speed_vs_teacher"] = round(speeds[name] / speeds["teacher"], 2)
        row["timed_words"] = timed_words
        row["disk_bytes"] = disk_bytes(paths[name])
        row.update(run_costs(paths[name]) if name != "teacher" else {"train_cpu_seconds": None, "teacher_annotation_cpu_seconds": None})
        row.update(agreement(nlp, references))
        if gold is not None:
            row.update({f"gold_{key}": value for key, value in agreement(nlp, gold).items()})
        rows.append(row)
    return rows


def training_curve(history: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The dev set's scores at each evaluation of a run, in percent, with the minutes of
    training it had had: whether a longer run would have kept more of the teacher."""
    points = []
    for entry in history:
        point: Dict[str, Any] = {"minutes": round(entry.get("wall_seconds", 0.0) / 60, 1), "step": entry.get("step")}
        point.update(percent_fields(entry))
        points.append(point)
    return points


def render_curve(points: List[Dict[str, Any]], most: int = 8) -> Tuple[List[str], List[List[str]]]:
    """The curve as a table, one column per evaluation: at most `most` of them, evenly
    spaced and always the last (the JSON keeps every one)."""
    if len(points) > most:
        picks = sorted({round(i * (len(points) - 1) / (most - 1)) for i in range(most)})
        points = [points[i] for i in picks]
    header = ["minutes"] + [f"{p['minutes']:g}" for p in points]
    lines = [["step"] + [str(p["step"]) for p in points]]
    for field in FIELDS:
        if any(field in p for p in points):
            lines.append([f"{LABELS[field]} ({field})"] + [_num(p.get(field)) for p in points])
    return header, lines


def write_report(
    teacher: Language,
    student_path: Path,
    references: Sequence[Doc],
    *,
    gold: bool,
    stdout: IO,
    teacher_path: Optional[Path] = None,
    min_words: int = MIN_TIMED_WORDS,
    history: Optional[Sequence[Dict[str, Any]]] = None,
) -> List[Dict[str, Any]]:
    """The report `spacy distill` ends with: the student saved at `student_path`
    against the teacher on the texts of `references` (the dev set), printed and written
    beside the student (its parent directory's report.json).

    references (Sequence[Doc]): The dev set's reference docs: their texts are compared
        on, and, with `gold`, their annotation is scored as gold too.
    min_words (int): Words per timed pass (the texts repeated), as greenkd-compare's
        --min-words.
    history (Optional[Sequence[Dict]]): The run's evaluations (distill_summary.json's
        "history"): the student's row then carries them as its `curve`, also printed.
    """
    student = spacy.load(student_path)
    # The dev docs in the loaded student's vocab (they were read with the run's).
    docs = list(DocBin(docs=list(references), store_user_data=False).get_docs(student.vocab))
    rows = compare(
        teacher, {"student": (student, student_path)}, [doc.text for doc in docs],
        gold=docs if gold else None, teacher_path=teacher_path,
        # A held-out dev set is the teacher's own annotation already.
        references=None if gold else docs, min_words=min_words,
    )
    if history:
        rows[-1]["curve"] = training_curve(history)
    path = Path(student_path).parent / REPORT_FILE
    atomic_write_json(path, rows)
    printer = Printer(no_print=True)
    if "curve" in rows[-1]:
        what = "gold" if gold else "agreement with the teacher"
        header, lines = render_curve(rows[-1]["curve"])
        stdout.write(f"\nThe dev set's scores over training time ({what}):\n")
        stdout.write(printer.table(lines, header=header, divider=True) + "\n")
    header, lines = render(rows)
    stdout.write("\n" + printer.table(lines, header=header, divider=True) + "\n")
    stdout.write(f"What the student kept of its teacher, on the dev set's {len(docs):,} texts: {path}\n")
    return rows


# How the printed report names each field.
LABELS = {
    "tag_acc": "tags", "pos_acc": "POS", "morph_acc": "morphology", "lemma_acc": "lemmas",
    "dep_uas": "UAS", "dep_las": "LAS", "sents_f": "sentences F", "ents_f": "entities F",
    "spans_sc_f": "spans F", "cats_score": "categories",
}


def render(rows: List[Dict[str, Any]]) -> Tuple[List[str], List[List[str]]]:
    """The report as a table: one line per attribute (agreement with the teacher, then
    gold where there is gold), then speed, size and cost; one column per pipeline."""
    header = [""] + [row["system"] for row in rows]
    lines: List[List[str]] = []
    for prefix, what in (("", "agreement"), ("gold_", "gold")):
        for key in FIELDS:
            if any(prefix + key in row for row in rows):
                lines.append([f"{LABELS[key]} ({what}, {key})"] + [_num(row.get(prefix + key)) for row in rows])
    lines.append(["words/s, 1 thread"] + [f"{row['words_per_second']:,.0f}" for row in rows])
    lines.append(["speed vs the teacher"] + [f"{row['speed_vs_teacher']:.2f}x" for row in rows])
    lines.append(["MB on disk"] + ["" if row.get("disk_bytes") is None else f"{row['disk_bytes'] / 1e6:.1f}" for row in rows])
    lines.append(["training CPU s"] + [_num(row.get("train_cpu_seconds")) for row in rows])
    lines.append(["teacher pass CPU s"] + [_num(row.get("teacher_annotation_cpu_seconds")) for row in rows])
    return header, lines


def _num(value: Union[None, float]) -> str:
    return "" if value is None else f"{value:,.1f}" if value >= 100 else f"{value:.2f}"
