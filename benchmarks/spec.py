"""A study's spec (spec.yml): its data, its systems and how each is trained and
measured, read and checked before anything runs. An error names the spec file and the
key, e.g. "spec.yml: systems.student.run: {model:teacher} names no system".

    results: results/parser_{data}.json      # bench rows ({data}, {vars.X} filled in)
    data: {ewt: {train: ..., dev: ..., test: ..., lang: en}, ...}
    seeds: [0]                                # default seeds (runner --seeds)
    budgets: [10]                             # default budgets (runner --budgets)
    bench: "python -m spacy greenkd-bench-parser {model} {test}"
    speed: "--parser-input --batch-size 256"  # speed_interleaved's options (optional)
    bootstrap: parser                         # parser (LAS) or textcat (accuracy)
    vars: {batch: 256}                        # {vars.batch}; runner --var batch=512
                                              # (also in data entries: one path, one place)
    systems:
      NAME:
        run: "python -m spacy train ... --output {output}"   # required
        budget: minutes | steps | none        # default minutes
        budget_arg: distillation.max_steps    # with budget: steps
        seeds: [0]                            # this system's own seeds
        budgets: [1000]                       # this system's own budgets
        row: "{system}-{budget}{seed_suffix}" # results row name
        bench: "..."                          # this system's own bench command (none: a
                                              # stage others go on from, not benched)
        args: {training.dropout: 0.1}         # appended as --training.dropout 0.1
        continues: NAME                       # goes on from NAME's model (fine-tuning,
                                              # pruning): its row adds NAME's cost
A token of run or bench that is only {vars.X} stands for the words of X's value (none
if it is empty), e.g. extra config overrides for a quick check.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import srsly

BUDGET_MODES = ("minutes", "steps", "none")
TOP_KEYS = {"results", "data", "seeds", "budgets", "bench", "speed", "bootstrap", "vars", "systems"}
SYSTEM_KEYS = {"run", "budget", "budget_arg", "seeds", "budgets", "row", "bench", "args", "continues"}
# {name}, {vars.name}, {model:NAME}
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+|:[A-Za-z0-9_.-]+)?)\}")
RUN_NAMES = {"output", "model", "data", "seed", "budget", "seed_suffix", "system"}


class SpecError(ValueError):
    """A spec that cannot run: says which file, which key and what is wrong."""


def budget_text(value: object) -> str:
    """A budget as it appears in directory and row names: 10, not 10.0; 0.2 stays 0.2."""
    number = float(value)
    return str(int(number)) if number.is_integer() else str(number)


@dataclass
class System:
    name: str
    run: str
    budget: str = "minutes"
    budget_arg: Optional[str] = None
    seeds: Optional[List[int]] = None
    budgets: Optional[List[str]] = None
    row: Optional[str] = None
    bench: Optional[str] = None
    args: Dict[str, str] = field(default_factory=dict)
    continues: Optional[str] = None

    def templates(self) -> Iterator[tuple]:
        """(key, template) of every string of this system that placeholders fill."""
        yield "run", self.run
        for key in ("row", "bench"):
            if getattr(self, key):
                yield key, getattr(self, key)
        for key, value in self.args.items():
            yield f"args.{key}", value

    def needs(self) -> List[str]:
        """The systems whose model this one's run reads ({model:NAME}) or continues."""
        read = [name.split(":", 1)[1] for _, text in self.templates() for name in PLACEHOLDER.findall(text) if name.startswith("model:")]
        return read + ([self.continues] if self.continues and self.continues not in read else [])


@dataclass
class Spec:
    path: Path
    results: str
    data: Dict[str, Dict[str, str]]
    systems: Dict[str, System]
    seeds: List[int] = field(default_factory=lambda: [0])
    budgets: List[str] = field(default_factory=lambda: ["10"])
    bench: Optional[str] = None
    speed: str = ""
    bootstrap: str = "parser"
    vars: Dict[str, str] = field(default_factory=dict)

    def error(self, key: str, problem: str) -> SpecError:
        return SpecError(f"{self.path}: {key}: {problem}")

    def ordered(self, names: List[str], with_needed: bool = True) -> List[System]:
        """The named systems, each after the systems its run reads ({model:NAME}), which
        are included (``with_needed``) or left out."""
        done: List[str] = []

        def visit(name: str, chain: List[str]) -> None:
            if name in done:
                return
            if name in chain:
                raise self.error(f"systems.{name}", f"reads its own model through {' -> '.join(chain + [name])}")
            for needed in self.systems[name].needs():
                visit(needed, chain + [name])
            done.append(name)

        for name in names:
            visit(name, [])
        return [self.systems[name] for name in done if with_needed or name in names]


def _strings(value: object, key: str, spec_path: Path) -> List[str]:
    if not isinstance(value, list) or not value:
        raise SpecError(f"{spec_path}: {key}: expected a non-empty list, got {value!r}")
    return value


def load_spec(path: Path, overrides: Optional[Dict[str, str]] = None) -> Spec:
    """Read and check a spec file; ``overrides`` replace its vars (runner --var)."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: no such spec file")
    try:
        raw = srsly.read_yaml(path)
    except Exception as err:  # a YAML syntax error, with its line
        raise SpecError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: expected a mapping of {', '.join(sorted(TOP_KEYS))}")
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise SpecError(f"{path}: {unknown[0]}: unknown key (the keys are {', '.join(sorted(TOP_KEYS))})")
    for key in ("results", "data", "systems"):
        if not raw.get(key):
            raise SpecError(f"{path}: {key}: missing")
    if not isinstance(raw["data"], dict) or not all(isinstance(v, dict) for v in raw["data"].values()):
        raise SpecError(f"{path}: data: expected NAME: {{train: ..., dev: ..., test: ...}} entries")
    if not isinstance(raw["systems"], dict):
        raise SpecError(f"{path}: systems: expected NAME: {{run: ...}} entries")
    variables = {str(k): str(v) for k, v in (raw.get("vars") or {}).items()}
    variables.update(overrides or {})
    spec = Spec(
        path=path,
        results=str(raw["results"]),
        data={
            str(name): {str(k): _vars_filled(str(v), variables, f"{path}: data.{name}.{k}") for k, v in entry.items()}
            for name, entry in raw["data"].items()
        },
        systems={},
        seeds=[int(s) for s in _strings(raw.get("seeds", [0]), "seeds", path)],
        budgets=[budget_text(b) for b in _strings(raw.get("budgets", [10]), "budgets", path)],
        bench=raw.get("bench"),
        speed=str(raw.get("speed") or ""),
        bootstrap=str(raw.get("bootstrap", "parser")),
        vars=variables,
    )
    if spec.bootstrap not in ("parser", "textcat"):
        raise spec.error("bootstrap", f"expected parser or textcat, got {spec.bootstrap!r}")
    for name, entry in raw["systems"].items():
        spec.systems[str(name)] = _system(spec, str(name), entry)
    _check_placeholders(spec)
    spec.ordered(list(spec.systems))  # no system reads its own model
    return spec


def _missing_var(name: str) -> str:
    """What is wrong with a {vars.X} that vars lacks, and how to fix it."""
    return f"{{{name}}}: no such entry in vars (add it, or pass --var {name[5:]}=VALUE)"


def _vars_filled(text: str, variables: Dict[str, str], where: str) -> str:
    """A data entry with its {vars.X} filled in, so that a path the project's commands
    also name (a teacher, a text) is written once, in vars, and --var moves both."""

    def value(match) -> str:
        name = match.group(1)
        if not name.startswith("vars."):
            raise SpecError(f"{where}: {{{name}}}: a data entry takes only {{vars.X}} placeholders")
        if name[5:] not in variables:
            raise SpecError(f"{where}: {_missing_var(name)}")
        return variables[name[5:]]

    return PLACEHOLDER.sub(value, text)


def _system(spec: Spec, name: str, entry: object) -> System:
    key = f"systems.{name}"
    if not isinstance(entry, dict) or not entry.get("run"):
        raise spec.error(key, "expected a mapping with at least run: COMMAND")
    unknown = sorted(set(entry) - SYSTEM_KEYS)
    if unknown:
        raise spec.error(f"{key}.{unknown[0]}", f"unknown key (a system's keys are {', '.join(sorted(SYSTEM_KEYS))})")
    budget = str(entry.get("budget", "minutes")).lower()
    if budget not in BUDGET_MODES:
        raise spec.error(f"{key}.budget", f"expected one of {', '.join(BUDGET_MODES)}, got {entry['budget']!r}")
    if budget == "steps" and not entry.get("budget_arg"):
        raise spec.error(f"{key}.budget_arg", "missing: a step budget needs the config key it sets, e.g. distillation.max_steps")
    args = entry.get("args") or {}
    if not isinstance(args, dict):
        raise spec.error(f"{key}.args", f"expected a mapping of config overrides, got {args!r}")
    return System(
        name=name,
        run=str(entry["run"]),
        budget=budget,
        budget_arg=entry.get("budget_arg"),
        seeds=[int(s) for s in _strings(entry["seeds"], f"{key}.seeds", spec.path)] if "seeds" in entry else None,
        budgets=[budget_text(b) for b in _strings(entry["budgets"], f"{key}.budgets", spec.path)] if "budgets" in entry else None,
        row=entry.get("row"),
        bench=entry.get("bench"),
        args={str(k): str(v) for k, v in args.items()},
        continues=str(entry["continues"]) if entry.get("continues") else None,
    )


def _check_placeholders(spec: Spec) -> None:
    """Every placeholder of every template names something the runner can fill."""
    data_keys = set.intersection(*(set(entry) for entry in spec.data.values()))
    templates = [("results", spec.results, None), ("bench", spec.bench or "", None), ("speed", spec.speed, None)]
    templates += [(f"systems.{s.name}.{key}", text, s) for s in spec.systems.values() for key, text in s.templates()]
    for system in spec.systems.values():
        if system.continues and system.continues not in spec.systems:
            raise spec.error(f"systems.{system.name}.continues", f"{system.continues!r} names no system (the systems are {', '.join(spec.systems)})")
    for key, text, system in templates:
        for name in PLACEHOLDER.findall(text):
            if name.startswith("vars."):
                if name[5:] not in spec.vars:
                    raise spec.error(key, _missing_var(name))
            elif name.startswith("model:"):
                if name[6:] not in spec.systems:
                    raise spec.error(key, f"{{{name}}} names no system (the systems are {', '.join(spec.systems)})")
            elif key in ("results", "speed") and name not in ("data",) and name not in data_keys:
                raise spec.error(key, f"{{{name}}}: only {{data}}, the data entries' keys and {{vars.X}} are known here")
            elif name == "budget" and system is not None and system.budget == "none":
                raise spec.error(key, "{budget}: this system has no budget (budget: none)")
            elif name not in RUN_NAMES and name not in data_keys:
                missing = [d for d, entry in spec.data.items() if name not in entry]
                where = f"data.{missing[0]} has no {name!r}" if missing else "no such placeholder"
                raise spec.error(key, f"{{{name}}}: {where} (known: {', '.join(sorted(RUN_NAMES | data_keys))}, vars.X, model:NAME)")
