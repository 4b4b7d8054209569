"""A config as spaCy fills it, with the comments of the text it was made from."""
import re
from typing import Dict, List, Tuple

from spacy.util import load_model_from_config
from thinc.api import Config

from .schema import DEFAULTS


def filled_config_text(text: str) -> str:
    """`text` as spaCy fills a config (`spacy init fill-config`): every setting written
    out, so the file passes `spacy debug config` and says what the student will be; the
    [distillation] section with its defaults too. The comments of `text` stay before
    the section or setting they preceded."""
    config = Config().from_str(text, interpolate=False)
    nlp = load_model_from_config(config, auto_fill=True, validate=False)
    filled = nlp.config
    filled["distillation"] = {**DEFAULTS, "seed": "${system.seed}", **config["distillation"]}
    # spaCy's defaults bring a [corpora.train] over paths.train, which a student of raw
    # text does not read: left in, it would have to be set (or `debug config` fails).
    for corpus in set(filled["corpora"]) - set(config["corpora"]):
        del filled["corpora"][corpus]
    if "train" not in config["paths"]:
        filled["paths"].pop("train", None)
    notes = _comments(text)
    out: List[str] = notes.get(("", ""), [])
    section = ""
    for line in filled.to_str().splitlines():
        header = re.match(r"^\[(.+)\]$", line)
        key = re.match(r"^([A-Za-z_@][^ =]*) =", line)
        if header:
            section = header.group(1)
            if notes.get((section, "")):
                out += [""] + notes[(section, "")] if out and out[-1] != "" else notes[(section, "")]
        elif key and notes.get((section, key.group(1))):
            out += notes[(section, key.group(1))]
        out.append(line)
    return "\n".join(out) + "\n"


def _comments(text: str) -> Dict[Tuple[str, str], List[str]]:
    """The comment lines of a config text, by the (section, key) they precede (key ""
    for a section header; ("", "") for the file's head)."""
    notes: Dict[Tuple[str, str], List[str]] = {}
    pending: List[str] = []
    section = ""
    head_done = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(line)
            continue
        if not stripped:
            if pending and not head_done:
                notes[("", "")] = pending
                pending, head_done = [], True
            continue
        head_done = True
        header = re.match(r"^\[(.+)\]$", stripped)
        if header:
            section = header.group(1)
            target = (section, "")
        else:
            target = (section, stripped.split("=")[0].strip())
        if pending:
            notes[target] = pending
            pending = []
    return notes
