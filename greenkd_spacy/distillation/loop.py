"""The teacher -> student loop behind `spacy distill`.

Shaped like spaCy's v4 development line (`training/loop.py:distill`): the student's
labels come from the teacher, every distillable student pipe computes its loss on a
batch, the optimizer steps once per batch after all pipes (`finish_update`), and the
student is evaluated on the gold dev corpus of [training] with averaged parameters.
On top of it: teacher targets are computed once into an on-disk cache, `model-best`
and `model-last` are written atomically, and a rerun of the same command resumes from
`model-last` (weights, step and best score; Adam's moments restart) and the cache.
"""
import contextlib
import hashlib
import itertools
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.schemas import ConfigSchemaTraining
from spacy.training import Example
from spacy.training.loop import create_evaluation_callback, create_train_batches, update_meta
from spacy.util import fix_random_seed, registry, resolve_dot_names
from thinc.api import Config, Optimizer

from ..atomic import atomic_write_json
from ..checkpoint import BEST, LAST, resume_state, save_checkpoint
from ..errors import Errors
from ..lock import run_lock
from ..tokenization.rules import adopt_teacher_tokenizer
from ..training.budget import restart_clock
from ..util import peak_rss_mb
from .adapters import distillable
from .copies import GoldCopies, plan_gold_copies
from .hidden import HIDDEN_KIND, hidden_state_pair
from .heldout import SkipFirst, has_no_data, silver_dev_set
from .segmentation import check_segmentation
from .report import pipeline_path, write_report
from .schema import DEFAULTS, ConfigSchemaDistill
from .student_plan import copies_as_batch_ruler
from .targets import CachedTeacher, is_silver
from .teacher_pass import teacher_pass
from .worker import load_teacher

STATE_FILE = "distill_state.json"
# Examples a student initializes from when its labels come from the teacher (every
# component but the DAN, contract.init_needs_corpus): spaCy's components need a few docs
# for their shapes, not the corpus.
INIT_SAMPLE = 1000


def resolve_distillation(config: Config) -> Dict[str, Any]:
    """The [distillation] section with its defaults, validated by ConfigSchemaDistill
    (types, ranges, no unknown setting) and its registered blocks resolved."""
    if "distillation" not in config:
        raise ValueError(Errors.E016)
    section = dict(DEFAULTS, seed=config["training"].get("seed", 0))
    section.update(config["distillation"])
    known = sorted(ConfigSchemaDistill.model_fields)
    unknown = sorted(set(section) - set(known))
    if unknown:
        # Named before the schema's own message, which lists every field it checks.
        raise ValueError(f"(greenkd-spacy) Unknown setting(s) {unknown} in [distillation]. Known: {known}.")
    for key in ("optimizer", "batcher"):
        if key not in section:
            raise ValueError(
                f"(greenkd-spacy) [distillation.{key}] is missing. Copy the block from "
                "[training] of a spaCy config (see configs/students/parser_bilstm_student.cfg)."
            )
    return dict(registry.resolve(section, schema=ConfigSchemaDistill, validate=True))


def pair_components(
    student: Language, teacher: Language, mapping: Dict[str, str]
) -> List[Tuple[str, Any, Any]]:
    """(student name, student pipe, teacher pipe) for every distillable student pipe;
    the student pipe is what speaks the contract (adapters.distillable)."""
    pairs = []
    for name, proc in student.pipeline:
        pipe = distillable(proc)
        if pipe is None:
            continue
        teacher_name = mapping.get(name, name)
        if name not in mapping and teacher_name not in teacher.pipe_names:
            # No namesake: the teacher's one component that can teach this kind (a
            # greenkd_parser student of a pipeline whose parser is "parser").
            fits = [t for t, t_proc in teacher.pipeline if _can_teach(pipe, t_proc)]
            if len(fits) > 1:
                # A teacher of the student's own class first (soft targets, e.g. a
                # senter's distributions rather than a parser's sentence starts).
                fits = [t for t in fits if type(teacher.get_pipe(t)) is type(proc)] or fits
            if len(fits) > 1:
                raise ValueError(Errors.E049.format(student=name, fits=fits))
            if len(fits) == 1:
                teacher_name = fits[0]
        if teacher_name not in teacher.pipe_names:
            raise ValueError(
                Errors.E015.format(teacher=teacher_name, student=name, available=teacher.pipe_names)
            )
        teacher_pipe = teacher.get_pipe(teacher_name)
        # The adapter for this pair (a senter learns a parser's sentence starts as silver).
        pairs.append((name, distillable(proc, teacher_pipe), teacher_pipe))
    if not pairs:
        raise ValueError(Errors.E017.format(pipe_names=student.pipe_names))
    return pairs


def config_safe_labels(labels: Any, name: str, cache_dir: Path) -> Any:
    """The teacher's labels as [initialize.components.NAME] can hold them.

    A list of strings goes into the config as it is. Label data with keys a config
    cannot hold (a morphologizer's "POS=NOUN|Number=Sing", a transition system's integer
    keys) is written to a JSON file under the cache directory and read back by spaCy's
    own `spacy.read_labels.v1`, as `spacy init labels` files are.
    """
    if isinstance(labels, (list, tuple)) and all(isinstance(label, str) for label in labels):
        return list(labels)
    data = srsly.json_dumps(labels, sort_keys=False)
    path = cache_dir / "labels" / f"{name}-{hashlib.sha1(data.encode('utf8')).hexdigest()[:16]}.json"
    atomic_write_json(path, srsly.json_loads(data))
    return {"@readers": "spacy.read_labels.v1", "path": str(path.resolve()), "require": True}


def _can_teach(pipe: Any, teacher_pipe: Any) -> bool:
    try:
        pipe.check_teacher_kind(teacher_pipe)
    except ValueError:
        return False
    return True


def copy_teacher_components(
    student: Language, teacher: Language, names: Optional[List[str]], batch_attribute_ruler: bool = True
) -> List[str]:
    """Source teacher components the student has no counterpart for into the student,
    as spaCy's `[components.X] source` does: rule-based ones (attribute_ruler, a rule
    lemmatizer, entity_ruler) cannot be distilled, and without them the student would
    not be the pipeline the user replaces. Each goes after the nearest component that
    precedes it in the teacher and exists in the student, so the order is the
    teacher's. They are added after the student is initialized (initializing an
    attribute_ruler would clear its patterns) and are not trained.

    names (Optional[List[str]]): Which; None: every teacher component that cannot be
        trained and whose name the student lacks.
    batch_attribute_ruler (bool): Copy spaCy's attribute_ruler as greenkd_attribute_ruler
        (its patterns, the same annotations, a batch at a time: the ruler of spaCy's
        English pipelines cost a student as much as its tagger, parser and ner).
    RETURNS (List[str]): The names copied.
    """
    if names is None:
        names = [
            name for name, proc in teacher.pipeline
            if not isinstance(proc, TrainablePipe) and name not in student.pipe_names
        ]
    for name in names:
        if name not in teacher.pipe_names:
            raise ValueError(Errors.E047.format(name=name, available=teacher.pipe_names))
        if name in student.pipe_names:
            raise ValueError(Errors.E048.format(name=name))
    copied = []
    for name in [n for n in teacher.pipe_names if n in names]:
        before = teacher.pipe_names[: teacher.pipe_names.index(name)]
        anchors = [n for n in before if n in student.pipe_names]
        # spaCy warns (W113) that the teacher's vectors differ from the student's: a
        # component that cannot be trained reads no vectors, so the warning says nothing.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"\[W113\]")
            where = {"after": anchors[-1]} if anchors else {"first": True}
            source = teacher.get_pipe(name)
            if batch_attribute_ruler and copies_as_batch_ruler(source):
                ruler = student.add_pipe(
                    "greenkd_attribute_ruler", name=name, config={"validate": source.validate}, **where
                )
                ruler.add_patterns(source.patterns)
            else:
                student.add_pipe(name, source=teacher, **where)
        copied.append(name)
    return copied


def check_student_runs(student: Language, examples: Iterable[Example], n_docs: int = 2) -> None:
    """Run the initialized student on a few training docs before the teacher pass.

    A student that cannot run (an encoder whose width does not fit the head, a
    listener without its upstream component) would otherwise fail only at the first
    training step, after a teacher pass that can take hours.
    """
    docs = []
    for eg in examples:
        docs.append(eg.predicted.copy())
        if len(docs) >= n_docs:
            break
    try:
        list(student.pipe(docs))
    except ValueError:
        raise
    except Exception as err:  # torch / numpy shape errors: say where they come from
        raise ValueError(Errors.E035.format(error=f"{type(err).__name__}: {err}")) from err


def distillation_logger(
    student: Language, T: Dict[str, Any], D: Dict[str, Any], stdout: IO, stderr: IO
) -> Tuple[Callable[[Optional[Dict[str, Any]]], None], Callable[[], None]]:
    """The student config's own [training.logger], so `spacy distill` prints the table
    `spacy train` prints (one loss column per component, the score_weights columns).

    spaCy's loggers read the step budget and evaluation interval from
    nlp.config["training"]; they get the [distillation] ones through a view of the
    student, so the saved config keeps its [training] section as written.
    """
    config = student.config.copy()
    config["training"]["max_steps"] = D["max_steps"]
    config["training"]["eval_frequency"] = D["eval_frequency"]
    view = SimpleNamespace(pipeline=student.pipeline, pipe_names=student.pipe_names, config=config)
    return T["logger"](view, stdout, stderr)


def finite_scores(scores: Dict[str, Any]) -> Dict[str, Any]:
    """Scores with NaN and infinities as None (a ROC AUC over a dev set of one class is
    NaN, and JSON has no NaN)."""
    return {key: None if isinstance(value, float) and not math.isfinite(value) else value for key, value in scores.items()}


def save_student(nlp: Language, path: Path, state: Optional[Dict[str, Any]] = None) -> None:
    """The student as a whole directory swapped in for ``path`` (checkpoint.py), with the
    loop's state inside model-last, so a kill cannot pair weights with another step."""
    try:
        save_checkpoint(path, nlp.to_disk, state, STATE_FILE)
    except OSError as err:  # a full disk or a read-only directory: say where, and what is kept
        raise ValueError(Errors.E067.format(path=path, error=f"{type(err).__name__}: {err}")) from err


@dataclass
class Run:
    """What the four steps of `distill` hand on: the resolved settings, the student,
    its (student name, student pipe, teacher pipe) pairs and its corpora."""

    D: Dict[str, Any]
    T: Dict[str, Any]
    student: Language
    pairs: List[Tuple[str, Any, Any]]
    train_corpus: Callable
    dev_corpus: Callable
    # Shared encoders whose group takes gold docs as copies (copies.py).
    gold_copies: List[GoldCopies] = field(default_factory=list)
    # The whole distillation corpus when its first texts are the dev set, which the
    # teacher labels (heldout.py); None when the config gives a dev corpus.
    heldout_from: Optional[Callable] = None


def prepare_student(teacher_nlp: Language, student_config: Config) -> Run:
    """Resolve [distillation] and [training], build the student, pair its components
    with the teacher's, check each pair, and initialize the student with its teacher's
    labels; then run it on a few docs, all before the teacher pass."""
    config = student_config.interpolate()
    D = resolve_distillation(config)
    fix_random_seed(D["seed"])
    student = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    if D["teacher_tokenizer"]:
        adopt_teacher_tokenizer(student, teacher_nlp)
    T = registry.resolve(student.config.interpolate()["training"], schema=ConfigSchemaTraining)
    pairs = pair_components(student, teacher_nlp, D["student_to_teacher"])
    hidden = hidden_state_pair(student, teacher_nlp, D)
    if hidden is not None:
        pairs.insert(0, hidden)
    for section in ("gold_weights", "teacher_weights"):
        unknown = sorted(set(D[section]) - {name for name, _, _ in pairs})
        if unknown:
            raise ValueError(Errors.E081.format(section=section, unknown=unknown, names=[name for name, _, _ in pairs]))
    for _, pipe, teacher_pipe in pairs:
        pipe.check_teacher_kind(teacher_pipe)
    init_config = student.config
    for name, pipe, teacher_pipe in pairs:
        settings = dict(init_config["initialize"]["components"].get(name) or {})
        settings.update(pipe.settings_from_teacher(teacher_pipe))
        if "labels" in settings:
            settings["labels"] = config_safe_labels(settings["labels"], name, Path(D["cache_dir"]))
        init_config["initialize"]["components"][name] = settings
    student.config = init_config
    train_corpus, dev_corpus = resolve_dot_names(student.config, [D["corpus"], T["dev_corpus"]])
    if has_no_data(train_corpus):
        # Said now (the reader raises on its first example), not after the student is
        # built and initialized.
        next(iter(train_corpus(student)), None)
    heldout_from = None
    if not has_no_data(dev_corpus):
        # A dev set that cannot be read, or is empty, said now, not at the first
        # evaluation after the teacher pass.
        if next(iter(dev_corpus(student)), None) is None:
            raise ValueError(Errors.E044.format(path=getattr(dev_corpus, "path", T["dev_corpus"]), purpose="evaluate on"))
    if has_no_data(dev_corpus):
        # Raw text alone: the teacher labels the corpus's first texts as the dev set
        # after its pass (distill), and the student never trains on them.
        if not D["heldout"]:
            raise ValueError(Errors.E056.format(dev=T["dev_corpus"]))
        heldout_from, train_corpus = train_corpus, SkipFirst(train_corpus, D["heldout"])
        train_corpus.check_size(student, D["corpus"])

    def init_examples() -> Iterable[Example]:
        examples = train_corpus(student)
        if any(pipe.init_needs_corpus for _, pipe, _ in pairs):
            return examples
        return itertools.islice(examples, INIT_SAMPLE)

    student.initialize(init_examples)
    for _, pipe, teacher_pipe in pairs:
        pipe.initialize_from_teacher(teacher_pipe, init_examples, student)
    copy_teacher_components(student, teacher_nlp, D["copy_from_teacher"], D["batch_attribute_ruler"])
    for name, pipe, teacher_pipe in pairs:
        # On the component object for this run (contract.DistillSettings), never in its
        # cfg, which is saved with the student; the targets it chose in
        # check_teacher_kind stay.
        gold_weight = D["gold_weights"].get(name, D["gold_weight"])
        teacher_weight = D["teacher_weights"].get(name, 1.0)
        pipe.update_distill_settings(temperature=D["temperature"], gold_weight=gold_weight, teacher_weight=teacher_weight)
        pipe.check_teacher_weight()
        pipe.check_settings()
        # The kind was checked before initialization; the labels only exist now.
        pipe.check_labels(teacher_pipe)
    gold_copies = plan_gold_copies(student, {name: pipe for name, pipe, _ in pairs}, set(T["frozen_components"]))
    check_student_runs(student, train_corpus(student))
    return Run(D, T, student, pairs, train_corpus, dev_corpus, gold_copies, heldout_from)


def train(
    run: Run,
    teachers: Dict[str, CachedTeacher],
    output_path: Optional[Path],
    *,
    resume: bool,
    stdout: IO,
    stderr: IO,
) -> Dict[str, Any]:
    """Distil step by step from the cached teachers: every distillable component learns
    from its teacher, shared encoders learn through their listeners, one optimizer step
    per batch; evaluate, log and checkpoint every eval_frequency steps. RETURNS the
    training summary (wall and CPU seconds, steps, best score) and history."""
    D, T, student = run.D, run.T, run.student
    # Seeded again here, not only before initialization: a teacher pass may draw random
    # numbers or not run at all (its cache complete), and the student of a seed must be
    # the same either way.
    fix_random_seed(D["seed"])
    state: Dict[str, Any] = {"step": 0, "best_score": None, "history": []}
    if output_path is not None:
        output_path.mkdir(parents=True, exist_ok=True)
        saved = resume_state(output_path, STATE_FILE)  # also repairs an interrupted swap
        if resume and saved is not None:
            state = saved
            try:
                student.from_disk(output_path / LAST, exclude=["vocab"])
            except Exception as err:  # thinc's dimension checks, msgpack's unpacking, missing files
                first_line = (str(err).strip().splitlines() or [""])[0]
                raise ValueError(Errors.E065.format(path=output_path / LAST, error=f"{type(err).__name__}: {first_line}")) from err
            stderr.write(f"Resuming from {output_path / LAST} at step {state['step']}.\n")
    optimizer: Optimizer = D["optimizer"]
    learners = {name: pipe for name, pipe, _ in run.pairs}
    evaluate = create_evaluation_callback(student, run.dev_corpus, T["score_weights"])
    batches = create_train_batches(student, run.train_corpus, D["batcher"], D["max_epochs"])
    frozen = set(T["frozen_components"])
    listened = {
        name for name, proc in student.pipeline
        if getattr(proc, "listening_components", None) and name not in frozen
    }
    trainable = {
        name for name, proc in student.pipeline
        if name not in frozen and hasattr(proc, "finish_update") and (name in teachers or name in listened)
    }
    log_step, finalize_log = distillation_logger(student, T, D, stdout, stderr)
    # spaCy's logger prints a loss for every trainable pipe; pipes that learn nothing in
    # this run (frozen, or not distilled) show 0.
    logged = [name for name, proc in student.pipeline if getattr(proc, "is_trainable", False)]
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    # A resumed run goes on from the cost its earlier segments had reached at their last
    # checkpoint; work a kill lost after it is not counted (the redone steps are).
    base_wall, base_cpu = float(state.get("wall_seconds", 0.0)), float(state.get("cpu_seconds", 0.0))
    # A [training.before_update] time budget is the student's training time: its clock
    # starts here, not before the teacher pass, with the earlier segments' time spent.
    restart_clock(spent=base_wall)
    resumed_from = state["step"]
    cost_carried = not resumed_from or "wall_seconds" in state
    if not cost_carried:
        stderr.write(
            "The run resumed from was saved before runs kept their training time: this "
            "run's summary counts its own training time only (cost_carried: false).\n"
        )
    step = 0
    words = 0
    losses: Dict[str, float] = {}
    before_update = T.get("before_update")
    stopped_by_budget = False
    epoch = 0

    def checkpoint(epoch: int, step: int) -> None:
        """Evaluate (averaged parameters), log, and save model-best / model-last."""
        nonlocal losses
        with student.use_params(optimizer.averages):
            score, scores = evaluate()
        state["step"] = step
        # The cost of training so far, carried across resumes (see the summary below).
        state["wall_seconds"] = base_wall + time.perf_counter() - start_wall
        state["cpu_seconds"] = base_cpu + time.process_time() - start_cpu
        losses = {name: float(value) for name, value in losses.items()}  # spaCy's pipes may add numpy floats
        # With the training seconds so far: the history is the dev score over training time.
        row = {"step": step, "epoch": epoch, "score": score, "losses": dict(losses),
               "wall_seconds": round(state["wall_seconds"], 1), "cpu_seconds": round(state["cpu_seconds"], 1)}
        # Undefined scores (NaN: a ROC AUC over one class) are left out; JSON has no NaN.
        row.update({k: v for k, v in scores.items() if isinstance(v, (int, float)) and math.isfinite(v)})
        state["history"].append(row)
        info = {
            "epoch": epoch, "step": step, "score": score, "other_scores": scores,
            "losses": {name: losses.get(name, 0.0) for name in logged} | losses,
            "checkpoints": [], "seconds": int(time.perf_counter() - start_wall), "words": words,
        }
        log_step(info)
        is_best = state["best_score"] is None or score > state["best_score"]
        if is_best:
            state["best_score"] = score
            state["best_step"] = step
        if output_path is not None:
            with student.use_params(optimizer.averages):
                # meta.json is JSON: an undefined score (NaN) is written as null.
                update_meta(T, student, dict(info, other_scores=finite_scores(scores)))
                if is_best:
                    save_student(student, output_path / BEST)
                save_student(student, output_path / LAST, state=state)
            # A copy for people and scripts; resuming reads the one in model-last.
            atomic_write_json(output_path / STATE_FILE, state)
        losses = {}

    for epoch, batch in batches:
        if D["max_steps"] and step >= D["max_steps"]:
            break
        if before_update is not None and step >= state["step"]:
            try:
                # As spaCy's loop calls [training.before_update]; greenkd.train_budget.v1
                # ends the run here with SystemExit, which becomes a normal last step.
                before_update(student, {"step": step, "epoch": epoch})
            except SystemExit:
                stopped_by_budget = True
                break
        step += 1
        # An encoder and its listeners see one batch; where gold docs are weighted by
        # copies, the copied one (copies.py).
        batch_of: Dict[str, List[Example]] = {}
        for group in run.gold_copies:
            batch_of.update(dict.fromkeys(group.members, group.expand(batch)))
        if step <= state["step"]:
            # Replay the batch order of the interrupted run without training on it.
            optimizer.step_schedules()
            continue
        for name, proc in student.pipeline:
            pipe_batch = batch_of.get(name, batch)
            if not pipe_batch:
                continue  # a fractional gold weight skipped every doc of this batch
            if name in teachers:
                learners[name].distill(teachers[name], pipe_batch, drop=D["dropout"], sgd=None, losses=losses)
            elif name in listened:
                # A shared encoder (tok2vec, transformer) computes its output for the
                # listeners of the distilled components and gets their gradients.
                proc.update(pipe_batch, drop=D["dropout"], sgd=None, losses=losses)
        for name, proc in student.pipeline:
            if name in trainable:
                proc.finish_update(optimizer)
        optimizer.step_schedules()
        words += sum(len(eg.predicted) for eg in batch)
        is_last = bool(D["max_steps"]) and step >= D["max_steps"]
        if not (step % D["eval_frequency"] == 0 or is_last):
            log_step(None)
            continue
        checkpoint(epoch, step)
        if D["patience"] and step - state.get("best_step", 0) >= D["patience"]:
            break  # spaCy's early stopping: no better dev score for `patience` steps
    if step > state["step"]:
        # The budget or the last epoch ended the run between two evaluations: score and
        # save its last step, as spaCy's loop saves model-last at any end.
        checkpoint(epoch, step)
    finalize_log()
    segment_wall, segment_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    return {
        "training": {
            # A resumed run's earlier segments up to their last checkpoint included.
            "wall_seconds": base_wall + segment_wall,
            "cpu_seconds": base_cpu + segment_cpu,
            "steps": step,
            "resumed_from_step": resumed_from,
            "cost_carried": cost_carried,
            "segment_wall_seconds": segment_wall,
            "segment_cpu_seconds": segment_cpu,
            "best_score": state["best_score"],
            "stopped_by_budget": stopped_by_budget,
            # The process's peak: the teacher pass (local backend) and loading included.
            "max_rss_mb": peak_rss_mb(),
        },
        "history": state["history"],
    }


def distill(
    teacher: Union[str, Path, Language],
    student_config: Config,
    output_path: Optional[Path] = None,
    *,
    resume: bool = True,
    annotate_only: bool = False,
    report: bool = False,
    backend: str = "local",
    workers: int = 1,
    address: Optional[str] = None,
    stdout: IO = sys.stdout,
    stderr: IO = sys.stderr,
) -> Tuple[Language, Dict[str, Any]]:
    """Distill the teacher pipeline into the student described by its config: prepare
    the student, run the teacher pass into the cache, train from the cache.

    teacher (Union[str, Path, Language]): Trained teacher pipeline (path or package).
    student_config (Config): A spaCy training config with a [distillation] section.
    output_path (Optional[Path]): Where model-best, model-last and the state go.
    resume (bool): Continue from output_path/model-last if a previous run left one.
    annotate_only (bool): Stop after the teacher pass (the cache is complete).
    report (bool): Then compare model-best with the teacher on the dev set's texts
        (report.py) and write OUTPUT/report.json.
    backend (str): Who runs the teacher pass: "local" or "ray" (annotate.py).
    workers (int): Ray workers (actors) for backend="ray".
    address (Optional[str]): Ray cluster address; None starts a local Ray.
    RETURNS (Tuple[Language, Dict[str, Any]]): The final student and a run summary.
    """
    # One run per output directory, taken before any work (lock.py).
    with run_lock(Path(output_path), "output directory", stderr) if output_path is not None else contextlib.nullcontext():
        return _distill(
            teacher, student_config, output_path, resume=resume, annotate_only=annotate_only, report=report,
            backend=backend, workers=workers, address=address, stdout=stdout, stderr=stderr,
        )


def _distill(
    teacher: Union[str, Path, Language],
    student_config: Config,
    output_path: Optional[Path],
    *,
    resume: bool,
    annotate_only: bool,
    report: bool,
    backend: str,
    workers: int,
    address: Optional[str],
    stdout: IO,
    stderr: IO,
) -> Tuple[Language, Dict[str, Any]]:
    """distill(), under the output directory's lock."""
    teacher_nlp = teacher if isinstance(teacher, Language) else load_teacher(teacher)
    run = prepare_student(teacher_nlp, student_config)
    for name, pipe, teacher_pipe in run.pairs:
        # Which teacher component teaches which student, and how: a pairing the user did
        # not name (a senter of a parser, say) is said, not left to be guessed.
        settings = pipe.teacher_settings()
        kind = "silver targets" if is_silver(settings) else "soft targets"
        if settings.get("kind") == HIDDEN_KIND:
            kind = f"its output per token (hidden_weight {run.D['hidden_weight']:g})"
        stderr.write(f"Student '{name}' learns from teacher '{teacher_pipe.name}' ({type(teacher_pipe).__name__}): {kind}.\n")
    # One teacher pass per cache at a time: two would label the same shards and their
    # cost records would under-report.
    # The held-out texts are labelled first: how the teacher segments them is checked
    # before the teacher pass, which can take hours.
    with run_lock(Path(run.D["cache_dir"]), "teacher cache", stderr):
        if run.heldout_from is not None:
            dev_corpus, heldout = silver_dev_set(
                teacher_nlp, run.student, run.heldout_from, run.D["heldout"], Path(run.D["cache_dir"])
            )
            check_segmentation(heldout)
        annotation, caches = teacher_pass(
            teacher_nlp, teacher, run.student, run.pairs, run.train_corpus, run.D,
            backend=backend, workers=workers, address=address, stderr=stderr,
        )
    summary: Dict[str, Any] = {"annotation": annotation}
    if run.heldout_from is not None:
        run.dev_corpus, info = dev_corpus, heldout
        summary["heldout"] = info
        stderr.write(
            f"Dev set: the first {info['docs']:,} texts of {run.D['corpus']} ({info['words']:,} words), "
            f"held out from training and labelled by the teacher{' (read from ' + info['path'] + ')' if info.get('reused') else ''}; "
            "the scores are the student's agreement with the teacher ([distillation] heldout sets how many).\n"
        )
    if annotate_only:
        return run.student, summary
    # max_epochs -1 streams the corpus (spaCy's create_train_batches does not hold it):
    # the targets are then read shard by shard too, so memory does not grow with it.
    streamed = run.D["max_epochs"] < 0
    teachers: Dict[str, CachedTeacher] = {}
    loaded: Dict[int, CachedTeacher] = {}  # one per cache: pairs that share one share its records
    for name, _, teacher_pipe in run.pairs:
        cache = caches[name]
        if id(cache) not in loaded:
            records = cache.lazy_records() if streamed else cache.records()
            loaded[id(cache)] = CachedTeacher(teacher_pipe.name, teacher_pipe.labels, records)
        teachers[name] = loaded[id(cache)]
    output_path = Path(output_path) if output_path is not None else None
    summary.update(train(run, teachers, output_path, resume=resume, stdout=stdout, stderr=stderr))
    if output_path is not None:
        srsly.write_json(output_path / "distill_summary.json", summary)
        if report:
            # What model-best kept of the teacher on the dev set's texts; gold scores too
            # where the dev set is gold, not the teacher's.
            references = [eg.reference for eg in run.dev_corpus(run.student)]
            write_report(
                teacher_nlp, output_path / BEST, references, gold=run.heldout_from is None,
                stdout=stdout, teacher_path=pipeline_path(teacher), min_words=run.D["report_min_words"],
                history=summary.get("history"),
            )
    return run.student, summary
