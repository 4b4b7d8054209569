"""Everything we register is found by spaCy through entry points, without an import."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.util import load_config

from .util import save_tiny_source, save_tiny_trf_teacher

ROOT = Path(__file__).parent.parent
# Every shipped config: the product's, by role, and each study project's own.
CONFIGS = sorted([*(ROOT / "configs").glob("*/*.cfg"), *(ROOT / "projects").glob("*/configs/*.cfg")])

NAMES = {
    "architectures": [
        "greenkd.BiLSTMEncoder.v1", "greenkd.BiLSTMContext.v1", "greenkd.BiaffineParser.v1", "greenkd.DAN.v1", "greenkd.DAN.v2",
        "greenkd.DAN.v3", "greenkd.NgramLinear.v1", "greenkd.NgramLinear.v2", "greenkd.NgramCNN.v1", "greenkd.SubwordHashEmbed.v1", "greenkd.WordDropoutEmbed.v1", "greenkd.LDNetEncoder.v1", "greenkd.CRFLabeller.v1",
    ],
    "readers": ["greenkd.Corpus.v1", "greenkd.TextFile.v1", "greenkd.DistillCorpus.v1"],
    "schedules": ["greenkd.exponential_decay.v1"],
    "scorers": ["greenkd.spans_scorer.v1"],
    "callbacks": ["greenkd.layer_selection.v1", "greenkd.train_budget.v1", "greenkd.affix_lengths.v1"],
    "tokenizers": ["greenkd.WordTokenizer.v1"],
}
FACTORIES = ["greenkd_parser", "greenkd_textcat", "greenkd_textcat_multilabel", "greenkd_ner", "greenkd_chunker"]


def test_names_resolve_in_a_fresh_interpreter():
    code = (
        "import sys, spacy\n"
        "from spacy.util import registry\n"
        "assert 'greenkd_spacy' not in sys.modules\n"
        f"names = {NAMES!r}\n"
        "for reg, items in names.items():\n"
        "    for name in items:\n"
        "        getattr(registry, reg).get(name)\n"
        "nlp = spacy.blank('en')\n"
        f"for factory in {FACTORIES!r}:\n"
        "    nlp.add_pipe(factory)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_cli_commands_are_on_spacys_cli():
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "greenkd-bench-parser" in result.stdout


# Factories that come with an optional extra: a config that uses one is checked only
# where the extra is installed (the test extra installs the teacher extra).
EXTRAS = {
    "curated_transformer": ("spacy_curated_transformers", "curated"),
    "transformer": ("spacy_transformers", "teacher"),
}


def missing_extra(raw) -> str:
    for component in raw["components"].values():
        module, extra = EXTRAS.get(component.get("factory"), (None, None))
        if module and importlib.util.find_spec(module) is None:
            return f"needs the optional extra: pip install 'greenkd-spacy[{extra}]'"
    return ""


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(ROOT)) for p in CONFIGS])
def test_shipped_configs_build(path, tmp_path, capsys):
    from spacy.cli.debug_config import debug_config

    overrides = {}
    raw = load_config(path, interpolate=False)
    if missing_extra(raw):
        pytest.skip(missing_extra(raw))
    if "source" in raw["paths"]:
        # Continuation configs source a trained component: give them a tiny one.
        (name,) = raw["nlp"]["pipeline"]
        save_tiny_source(tmp_path / "model", name)
        overrides["paths.source"] = str(tmp_path / "model")
    if "teacher" in raw["paths"]:
        # A head trained over a teacher's frozen components sources them from it.
        save_tiny_trf_teacher(tmp_path / "teacher")
        overrides["paths.teacher"] = str(tmp_path / "teacher")
    if raw["paths"].get("unlabeled", "") is None:
        # A student of raw text alone reads it through a reader that needs a path: the
        # config file stands in for the text (readers are only built here).
        overrides["paths.unlabeled"] = str(path)
    config = load_config(path, overrides=overrides)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == config["nlp"]["pipeline"]
    # spaCy's `debug config`, in-process (a subprocess per config cost ~10 s of start-up;
    # test_cli_commands_are_on_spacys_cli checks the command line itself).
    if "tokenizer" not in raw["nlp"]:
        # A minimal config leaves to spaCy's auto-fill what `spacy debug config` wants
        # written out; building it above is its check.
        return
    debug_config(path, overrides={"paths.train": str(path), "paths.dev": str(path), **overrides})
    assert "Config is valid" in capsys.readouterr().out
