"""`greenkd-profile`: every stage of a pipeline timed, the decoding of greenkd's
components apart from their network, and the stages adding up to the pass."""
import spacy
import srsly
from spacy.training import Example
from typer.testing import CliRunner

from greenkd_spacy.cli import app
from greenkd_spacy.models.pytorch.crf import LinearChainCRF
from greenkd_spacy.profile import stage_profile

from .util import save_trained_parser

TEXTS = ["She ate the pizza with anchovies .", "We like green eggs .", "I ate ."]


def _pipeline(tmp_path):
    save_trained_parser(tmp_path, "test.spacy")
    nlp = spacy.load(tmp_path / "model")
    ner = nlp.add_pipe("greenkd_ner")
    nlp.add_pipe("sentencizer", first=True)
    gold = nlp.make_doc("She ate the pizza")
    gold.ents = [gold.char_span(0, 3, label="PER")]
    ner.initialize(lambda: [Example(nlp.make_doc(gold.text), gold)], nlp=nlp)
    return nlp


def test_profile_times_every_stage_and_decoding_apart(tmp_path):
    nlp = _pipeline(tmp_path)
    profile = stage_profile(nlp, TEXTS, rounds=1, min_words=50)
    stages = [row["stage"] for row in profile["stages"]]
    assert stages[0] == "tokenizer" and "sentencizer" in stages
    parser = [n for n in nlp.pipe_names if n not in ("sentencizer", "greenkd_ner")]
    for name in [*parser, "greenkd_ner"]:
        assert f"{name}: network" in stages and f"{name}: set_annotations" in stages
    assert "greenkd_ner: decoding" in stages  # the CRF's Viterbi
    assert any(s.endswith(": decoding") and not s.startswith("greenkd_ner") for s in stages)  # the MST
    assert abs(sum(row["share"] for row in profile["stages"]) - 1.0) < 1e-3
    assert profile["words"] >= 50 and profile["words_per_second"] > 0
    # The clocks are taken off again: the CRF decodes with its own method.
    crfs = [m for _, p in nlp.pipeline if hasattr(p, "model") for node in p.model.walk() for shim in node.shims
            for m in shim._model.modules() if isinstance(m, LinearChainCRF)]
    assert crfs and all("viterbi_padded" not in crf.__dict__ for crf in crfs)


def test_profile_command_writes_its_table(tmp_path):
    nlp = _pipeline(tmp_path)
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "text.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    out = tmp_path / "profile.json"
    args = ["profile", str(tmp_path / "pipeline"), str(tmp_path / "text.txt"), "--rounds", "1", "--min-words", "30", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "us/word" in result.output and "greenkd_ner: decoding" in result.output
    assert srsly.read_json(out)["stages"][0]["stage"] == "tokenizer"
    (tmp_path / "empty.txt").write_text("\n", encoding="utf8")
    result = CliRunner().invoke(app, ["profile", str(tmp_path / "pipeline"), str(tmp_path / "empty.txt")])
    # The message wraps at the terminal's width, wherever the temporary path ends.
    assert result.exit_code == 1 and "no text" in " ".join(result.output.split())


def test_profile_table_puts_shared_stages_on_one_row():
    from benchmarks.profile_table import render

    ours = {"words_per_second": 1000.0, "stages": [{"stage": "tokenizer", "us_per_word": 1.0}, {"stage": "greenkd_parser: network", "us_per_word": 9.0}]}
    theirs = {"words_per_second": 500.0, "stages": [{"stage": "tokenizer", "us_per_word": 1.5}, {"stage": "parser: network", "us_per_word": 18.5}]}
    lines = render([("ours", ours), ("spaCy", theirs)]).splitlines()
    assert lines[0] == "| stage (µs/word) | ours | spaCy |"
    assert "| tokenizer | 1.0 | 1.5 |" in lines
    assert "| greenkd_parser: network | 9.0 |  |" in lines
    assert "| parser: network |  | 18.5 |" in lines
    assert "| **all stages** | **10.0** | **20.0** |" in lines
    assert lines[-1] == "| words/s | 1,000 | 500 |"
