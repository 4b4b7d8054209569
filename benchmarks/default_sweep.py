"""The candidates a CPU-first default is chosen from: greenkd_ner on
CoNLL-2003, greenkd_chunker on CoNLL-2000, the tok2vec + tagger + greenkd_parser
pipeline on UD Tamil-TTB or English-EWT.

Every candidate is the task's shipped config (configs/defaults/ner.cfg,
configs/defaults/chunk.cfg; for the parser its first default,
projects/parser/configs/parser_bilstm_tagger.cfg) with the candidate's settings (the same for every
task, applied to the task's encoder), or for the parser a config of its own
(CONFIG_CANDIDATES: another encoder; hybrid-lean became configs/defaults/parser.cfg, kept
as projects/parser/configs/parser_lean.cfg when lean-subword-wdrop replaced it),
trained for the same wall-clock budget as
the benchmark (greenkd.train_budget.v1) and spaCy's patience, each wrapped in
benchmarks/timed.py so its cost is recorded. The choice is by the dev score spaCy selected
model-best by (model-best/meta.json), never the test set; summarize_sweep.summarize
makes the table of every candidate trained so far. A candidate whose run finished (its
run.json exists) is not trained again, so an interrupted sweep resumes.

Usage: python benchmarks/run.py default_sweep {ner,chunk,parser-ta,parser-en}
           [--budget-minutes 10] [--only NAME ...] [--output OUT.json]
Used by `spacy project run labeller-default-sweep` and `parser-default-sweep`.
"""
import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import srsly

from benchmarks.rows import command_line
from benchmarks.summarize_sweep import summarize
from greenkd_spacy.atomic import atomic_write_json

# name -> config overrides ({encoder} is the task's greenkd.BiLSTMEncoder.v1 block), each
# setting spelled out, so a candidate stays the same model when the shipped default
# changes ("base" is the default before this sweep). The regularisers tried against
# the overfitting the 10-minute runs showed (NER: best dev F1 at step 1,600, then flat;
# Tamil-TTB: training loss near 0 while dev tags stayed at 66 %): word dropout (Lample
# et al. 2016), more dropout, and both.
CANDIDATES: Dict[str, Dict[str, str]] = {
    "base": {"{encoder}.word_dropout": "0.0", "training.dropout": "0.33"},
    "wd2": {"{encoder}.word_dropout": "0.2", "training.dropout": "0.33"},
    "drop5": {"{encoder}.word_dropout": "0.0", "training.dropout": "0.5"},
    "wd2-drop5": {"{encoder}.word_dropout": "0.2", "training.dropout": "0.5"},
    # ... with hashed tables of spaCy's CNN sizes (5,000 word rows, 2,500 per affix),
    # for a treebank too small to fill ours.
    "wd2-drop5-small": {
        "{encoder}.word_dropout": "0.2", "training.dropout": "0.5",
        "{encoder}.word_rows": "5000", "{encoder}.affix_rows": "2500",
    },
}
# Candidates that swap the encoder rather than tune it: (config, overrides). The parser
# over spaCy's own CNN tok2vec, with spaCy's dropout for that encoder (0.1) and with ours
# (0.33), tried after the BiLSTM candidates missed spaCy's LAS on Tamil-TTB by 4.6.
CONFIG_CANDIDATES: Dict[str, Dict[str, Any]] = {
    "cnn-drop1": {"config": "projects/parser/configs/parser_cnn_tagger.cfg", "tasks": ["parser-ta", "parser-en"],
                  "overrides": {"training.dropout": "0.1"}},
    "cnn-drop3": {"config": "projects/parser/configs/parser_cnn_tagger.cfg", "tasks": ["parser-ta", "parser-en"],
                  "overrides": {"training.dropout": "0.33"}},
    # The CNN for the tagger, a BiLSTM of the parser's own over it (projects/parser/configs/parser_hybrid.cfg),
    # tried after cnn-* tagged Tamil-TTB better than the BiLSTM but parsed worse.
    "hybrid-drop1": {"config": "projects/parser/configs/parser_hybrid.cfg", "tasks": ["parser-ta", "parser-en"],
                     "overrides": {"training.dropout": "0.1"}},
    "hybrid-drop3": {"config": "projects/parser/configs/parser_hybrid.cfg", "tasks": ["parser-ta", "parser-en"],
                     "overrides": {"training.dropout": "0.33"}},
    # Leaner hybrids, tried after hybrid-drop3 parsed EWT at 0.89-0.94x spaCy's words/s: in
    # alternating passes over EWT test (untrained weights, one thread;
    # benchmarks/archive/explore_hybrid_speed_ewt.json) a 128-unit arc MLP made the pipeline
    # 3 % faster, with a 2-layer CNN 16 %, with a 64-unit BiLSTM instead 7 % (lean: not timed).
    "hybrid-cnn2": {"config": "projects/parser/configs/parser_hybrid.cfg", "tasks": ["parser-ta", "parser-en"],
                    "overrides": {"training.dropout": "0.33", "components.tok2vec.model.encode.depth": "2",
                                  "components.greenkd_parser.model.arc_mlp_size": "128"}},
}
# hybrid-lean: hybrid-cnn2 with a 64-unit BiLSTM: the parser default since 2026-11-27
# (configs/defaults/parser.cfg is this candidate spelled out).
CONFIG_CANDIDATES["hybrid-lean"] = {
    **CONFIG_CANDIDATES["hybrid-cnn2"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-cnn2"]["overrides"],
                  "components.greenkd_parser.model.tok2vec.hidden_width": "64"},
}

# hybrid-lean with spaCy's 4-layer CNN, tried after the default tagged Tamil-TTB 1-1.5
# points below spaCy's tagger+parser (whose CNN has 4 layers) and parsed its test set
# 1.36 LAS below over three seeds.
# (Trained first as configs/defaults/parser.cfg with the depth override: the same model.)
CONFIG_CANDIDATES["lean-cnn4"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "components.tok2vec.model.encode.depth": "4"},
}

# hybrid-lean regularised harder, tried because Tamil-TTB has 400 training sentences (the
# default sees them ~500 times in 10 minutes): every dropout 0.5 (training.dropout sets the
# rate of every layer that has one), or spaCy's own optimizer weight decay (L2 0.01).
CONFIG_CANDIDATES["lean-drop5"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.dropout": "0.5"},
}
CONFIG_CANDIDATES["lean-l2"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.optimizer.L2": "0.01"},
}

# hybrid-lean evaluated and saved with averaged weights (use_averages = true), which
# reach its PyTorch layers since torch_bridge's shim finds thinc's averages.
CONFIG_CANDIDATES["lean-avg"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.optimizer.use_averages": "true"},
}

# hybrid-lean with the parser's loss averaged over tokens instead of summed: Adam makes
# the parser's own layers indifferent to the scale, but the shared CNN then learns mostly
# from the tagger, whose tags trailed spaCy's on Tamil-TTB by about a point.
CONFIG_CANDIDATES["lean-norm"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "components.greenkd_parser.normalize_loss": "true"},
}

# hybrid-lean with smaller batches, tried after every regulariser above stayed within
# noise: a 2,000-word batch is a fifth of Tamil-TTB's 9.6 k training words, so the 10-minute
# run makes ~1,800 updates; spaCy's tagger+parser makes ~2,900 of 100 to 1,000 words.
# Patience is counted in steps, so it is scaled with the batch (the same 3.2 M words
# without a better dev score): lean-b500-p1600, the first try, stopped after 4 of its 10
# minutes (2,400 steps; best dev LAS 53.22 at step 800).
CONFIG_CANDIDATES["lean-b1000"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.batcher.size.rate": "1000",
                  "training.patience": "3200"},
}
CONFIG_CANDIDATES["lean-b500"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.batcher.size.rate": "500",
                  "training.patience": "6400"},
}
CONFIG_CANDIDATES["lean-b500-p1600"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"], "training.batcher.size.rate": "500"},
}

# hybrid-lean whose hash embeddings read a word's last five characters as SUFFIX instead
# of spaCy's three (greenkd.affix_lengths.v1): Tamil's case and tense endings, which decide
# most dependency labels, are often longer than three code points.
CONFIG_CANDIDATES["lean-suffix5"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "nlp.after_creation": '{"@callbacks": "greenkd.affix_lengths.v1", "prefix": 1, "suffix": 5}'},
}

# hybrid-lean whose hash embeddings also read every 3-5-character n-gram of the word
# (greenkd.SubwordHashEmbed.v1, fastText's subword units added to MultiHashEmbed's
# output): lean-suffix5 showed one longer ending in place of spaCy's three characters is
# too sparse for 400 sentences; n-grams keep the short ending and add the longer ones.
CONFIG_CANDIDATES["lean-subword"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "components.tok2vec.model.embed.@architectures": "greenkd.SubwordHashEmbed.v1"},
}

# hybrid-lean trained on Tamil-TTB's training set plus one cropped copy of each sentence
# whose root has two or more non-punctuation dependents (benchmarks/tree_crop.py, seed 0:
# 379 crops, 3,333 tokens; Sahin & Steedman 2018), after lean-subword tagged better but
# parsed no better: 400 sentences show the parser few tree shapes.
CONFIG_CANDIDATES["lean-crop"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "tasks": ["parser-ta"],
    "prepare": "python benchmarks/run.py tree_crop corpus/ud_ta/ta_ttb-ud-train.spacy corpus/ud_ta/ta_ttb-ud-train-crop.spacy",
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "paths.train": "corpus/ud_ta/ta_ttb-ud-train-crop.spacy"},
}

# hybrid-lean with a slower learning rate, tried after the dev curves showed the default
# at its dev plateau by step 200 (60 epochs of Tamil-TTB) and wandering within two points
# after it, while spaCy's tagger+parser, at 0.001 and smaller batches, still improved
# after 2,000 steps: the regularisers above act on a model that has already fit the data.
CONFIG_CANDIDATES["lean-lr1"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "training.optimizer.learn_rate.base_rate": "0.001"},
}
# lean-lr1 (seed 0) ended at dev LAS 51.79 against the default's 53.22, behind it at
# every evaluation; so the other direction, a faster rate:
CONFIG_CANDIDATES["lean-lr4"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "training.optimizer.learn_rate.base_rate": "0.004"},
}

# hybrid-lean with word dropout (greenkd.WordDropoutEmbed.v1: a random 20 % of the
# training tokens are looked up as one "unknown word" NORM, their affixes and shape as
# usual). On the first default, word dropout 0.2 with dropout 0.5 had lifted Tamil-TTB dev
# LAS from 48.12 to 52.68, while dropout 0.5 alone did nothing for hybrid-lean
# (lean-drop5), and spaCy's MultiHashEmbed under hybrid-lean has no word dropout.
CONFIG_CANDIDATES["lean-wdrop"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "components.tok2vec.model.embed.@architectures": "greenkd.WordDropoutEmbed.v1",
                  "components.tok2vec.model.embed.word_dropout": "0.2"},
}

# Both: the character n-grams (lean-subword: tags +1.5, LAS +0.34 over three seeds) give a
# rare word a representation, word dropout makes the model use it.
CONFIG_CANDIDATES["lean-subword-wdrop"] = {
    **CONFIG_CANDIDATES["hybrid-lean"],
    "overrides": {**CONFIG_CANDIDATES["hybrid-lean"]["overrides"],
                  "components.tok2vec.model.embed.@architectures": "greenkd.SubwordHashEmbed.v1",
                  "components.tok2vec.model.embed.word_dropout": "0.2"},
}

_UD = "corpus/ud_{lang}/{treebank}-ud-{split}.spacy"
TASKS: Dict[str, Dict[str, Any]] = {
    "ner": {
        "config": "configs/defaults/ner.cfg", "encoder": "components.greenkd_ner.model.tok2vec",
        "train": "corpus/conll03/train.spacy", "dev": "corpus/conll03/dev.spacy", "score": "ents_f", "extra": [],
    },
    "chunk": {
        "config": "configs/defaults/chunk.cfg", "encoder": "components.greenkd_chunker.model.tok2vec",
        "train": "corpus/conll00/train.spacy", "dev": "corpus/conll00/dev.spacy", "score": "spans_chunks_f", "extra": [],
    },
    "parser-ta": {
        "config": "projects/parser/configs/parser_bilstm_tagger.cfg", "encoder": "components.tok2vec.model",
        "train": _UD.format(lang="ta", treebank="ta_ttb", split="train"),
        "dev": _UD.format(lang="ta", treebank="ta_ttb", split="dev"),
        "score": "dep_las", "extra": ["--nlp.lang", "ta"],
    },
    "parser-en": {
        "config": "projects/parser/configs/parser_bilstm_tagger.cfg", "encoder": "components.tok2vec.model",
        "train": _UD.format(lang="en", treebank="en_ewt", split="train"),
        "dev": _UD.format(lang="en", treebank="en_ewt", split="dev"),
        "score": "dep_las", "extra": [],
    },
}


def candidate(task: str, name: str) -> Tuple[str, Dict[str, str]]:
    """A candidate's config file and its overrides, with the task's encoder filled in."""
    spec = TASKS[task]
    if name in CONFIG_CANDIDATES:
        entry = CONFIG_CANDIDATES[name]
        if task not in entry["tasks"]:
            raise SystemExit(f"Candidate {name} is for the tasks {entry['tasks']}, not {task}.")
        return entry["config"], dict(entry["overrides"])
    return spec["config"], {k.format(encoder=spec["encoder"]): v for k, v in CANDIDATES[name].items()}


def sweep_dir(task: str, max_steps: int = 0, seed: int = 0) -> Path:
    """Where a sweep's candidates are trained: a step-capped exploration, or one with
    another seed, apart from the budgeted seed-0 sweep, so that none resumes into
    another's runs."""
    name = "sweep" if not max_steps else f"sweep-{max_steps}steps"
    return Path("training") / task / (name if not seed else f"{name}-seed{seed}")


def missing_input(name: str) -> None:
    """Stop, saying how to make it, when a candidate trains on a file that a script of
    its own makes (lean-crop's cropped treebank) and that file is not there yet."""
    entry = CONFIG_CANDIDATES.get(name, {})
    train = entry.get("overrides", {}).get("paths.train")
    if train and not Path(train).exists():
        raise SystemExit(f"Candidate {name} trains on {train}, which does not exist yet. Make it first: {entry['prepare']}")


def train_command(task: str, name: str, budget_minutes: float, max_steps: int = 0, seed: int = 0) -> List[str]:
    """The timed `spacy train` command of one candidate."""
    spec = TASKS[task]
    out = sweep_dir(task, max_steps, seed) / name
    config, settings = candidate(task, name)
    overrides: List[str] = []
    for key, value in settings.items():
        overrides += [f"--{key}", value]
    return [
        sys.executable, "-m", "benchmarks.timed", str(out / "train_cost.json"), "--merge", str(out / "run.json"), "--",
        sys.executable, "-m", "spacy", "train", config, "--output", str(out),
        "--paths.train", spec["train"], "--paths.dev", spec["dev"], *spec["extra"],
        "--training.before_update.minutes", str(budget_minutes),
        "--training.before_update.report", str(out / "run.json"), *overrides,
        *(["--training.max_steps", str(max_steps)] if max_steps else []),
        *(["--system.seed", str(seed)] if seed else []),
    ]


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--budget-minutes", type=float, default=10)
    parser.add_argument(
        "--only", nargs="*", choices=sorted([*CANDIDATES, *CONFIG_CANDIDATES]),
        help=f"train just these candidates (default: {', '.join(CANDIDATES)})",
    )
    parser.add_argument(
        "--max-steps", type=int, default=0,
        help="stop every candidate after this many steps instead (with --budget-minutes 0: no wall-clock budget): "
        "an exploration that a busy machine cannot bias, trained in training/<task>/sweep-<N>steps and recorded "
        "in benchmarks/archive/<task>_default_sweep_<N>steps.json; a candidate it picks still needs the budgeted run",
    )
    parser.add_argument(
        "--seed", type=int, default=0,
        help="train with this seed (system.seed) instead of 0: on a treebank as small as Tamil-TTB a seed moves dev "
        "LAS by points, so a candidate is compared over several; trained in training/<task>/sweep-seed<N> and "
        "recorded in benchmarks/archive/<task>_default_sweep_seed<N>.json",
    )
    parser.add_argument("--output", type=Path, help="default: benchmarks/archive/<task>_default_sweep.json")
    args = parser.parse_args(argv)
    names = args.only or list(CANDIDATES)
    sweep = sweep_dir(args.task, args.max_steps, args.seed)
    for name in names:
        if (sweep / name / "run.json").exists():
            print(f"{name}: trained already (delete {sweep / name} to train it again)")
            continue
        missing_input(name)
        command = train_command(args.task, name, args.budget_minutes, args.max_steps, args.seed)
        print(f"{name}: training", " ".join(command), flush=True)
        subprocess.run(command, check=True)
    suffix = (f"_{args.max_steps}steps" if args.max_steps else "") + (f"_seed{args.seed}" if args.seed else "")
    output = args.output or Path("benchmarks/archive") / f"{args.task}_default_sweep{suffix}.json"
    # Every candidate trained for this task so far, so that a sweep run with --only adds
    # its rows to the earlier ones instead of replacing them.
    trained = [n for n in [*CANDIDATES, *CONFIG_CANDIDATES] if (sweep / n / "run.json").exists()]
    rows = summarize(sweep, trained, TASKS[args.task]["score"])
    stamp = {
        "task": args.task,
        "budget_seconds": 60 * args.budget_minutes,
        "max_steps": args.max_steps or None,
        "seed": args.seed,
        "command": command_line(),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    for row in rows:
        row["config"], row["overrides"] = candidate(args.task, row["candidate"])
        row.update(stamp)
        print(row)
    atomic_write_json(output, merge_rows(output, rows))


def merge_rows(output: Path, rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rows already in output whose candidates were not trained here (an earlier
    machine's, whose training folders are gone) followed by this sweep's rows, so that a
    results file is only ever added to. The kept rows are marked carried_over and not
    chosen: a budgeted run's score depends on its machine, so the choice is made among
    the candidates trained here."""
    trained = {row["candidate"] for row in rows}
    kept = [
        {**row, "chosen": False, "carried_over": True}
        for row in (srsly.read_json(output) if output.exists() else []) if row["candidate"] not in trained
    ]
    return kept + rows

if __name__ == "__main__":
    main(sys.argv[1:])
