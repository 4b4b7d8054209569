"""Commands: --help explains, and a tiny real run writes its measurement."""
import pytest
import srsly
from typer.testing import CliRunner

from greenkd_spacy.cli import app

from .util import save_trained_parser

runner = CliRunner()


def test_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "bench-parser" in result.output


def test_bench_parser_help_explains():
    result = runner.invoke(app, ["bench-parser", "--help"])
    assert result.exit_code == 0
    assert "--gold-pos" in result.output and "words/s" in result.output


def test_bench_parser_tiny_run(tmp_path):
    save_trained_parser(tmp_path, "test.spacy")
    out = tmp_path / "measurement.json"
    args = [
        "bench-parser", str(tmp_path / "model"), str(tmp_path / "test.spacy"),
        "--gold-pos", "--repeats", "1", "--min-words", "100", "--output", str(out),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    row = srsly.read_json(out)
    assert row["model"] == str(tmp_path / "model") and row["data"] == str(tmp_path / "test.spacy")
    assert row["las"] == 100.0 and row["uas"] == 100.0
    assert row["words"] == 12 and row["words_per_second"] > 0
    assert row["timed_words"] == 108  # 9 whole copies: the first to reach --min-words 100
    assert row["params"] > 0 and row["disk_bytes"] > 0
    assert 0.0 <= row["mst_share_of_parse_time"] <= 1.0


def test_a_study_row_of_the_parser_bench(tmp_path):
    """benchmarks/bench.py: the package's measurement, named and costed as a results row;
    the command's own options pass through."""
    from benchmarks.bench import main as bench_row

    save_trained_parser(tmp_path, "test.spacy")
    out = tmp_path / "results.json"
    srsly.write_json(tmp_path / "cost.json", {"wall_seconds": 3.0, "cpu_seconds": 5.0, "max_rss_mb": 100.0})
    args = [
        "parser", str(tmp_path / "model"), str(tmp_path / "test.spacy"), "--system", "tiny",
        "--gold-pos", "--repeats", "1", "--min-words", "100", "-o", str(out), "--train-cost", str(tmp_path / "cost.json"),
    ]
    bench_row(args)
    (row,) = srsly.read_json(out)
    assert row["system"] == "tiny"
    assert row["las"] == 100.0 and row["uas"] == 100.0 and row["timed_words"] == 108
    assert row["train_cpu_seconds"] == 5.0 and row["cores"] >= 1 and row["date"]
    # rerunning replaces the row of the same system
    bench_row(args)
    assert len(srsly.read_json(out)) == 1
    # a system not trained in this run is skipped, if asked to
    bench_row(["parser", str(tmp_path / "nope"), str(tmp_path / "test.spacy"), "--system", "x", "-o", str(out), "--skip-missing"])
    assert [r["system"] for r in srsly.read_json(out)] == ["tiny"]


def test_bench_rows_of_several_systems_in_one_call(tmp_path):
    """`::` separates the invocations of several systems benched in one process; an
    empty invocation is refused with the form it needs."""
    from benchmarks.bench import main as bench_row

    save_trained_parser(tmp_path, "test.spacy")
    out = tmp_path / "results.json"
    one = ["parser", str(tmp_path / "model"), str(tmp_path / "test.spacy"), "--repeats", "1", "--min-words", "100", "-o", str(out)]
    bench_row([*one, "--system", "a", "::", *one, "--system", "b", "--gold-pos"])
    rows = {row["system"]: row for row in srsly.read_json(out)}
    assert sorted(rows) == ["a", "b"]
    assert rows["b"]["las"] == 100.0 and rows["a"]["words_per_second"] > 0
    with pytest.raises(SystemExit, match="empty invocation"):
        bench_row([*one, "--system", "c", "::"])


def test_bench_parser_missing_data_is_a_clear_error(tmp_path):
    save_trained_parser(tmp_path, "test.spacy")
    result = runner.invoke(
        app, ["bench-parser", str(tmp_path / "model"), str(tmp_path / "nope.spacy")]
    )
    assert result.exit_code == 1
    assert "E004" in result.output and "nope.spacy" in result.output


def test_bench_parser_names_an_empty_or_corrupt_file(tmp_path):
    from spacy.tokens import DocBin

    save_trained_parser(tmp_path, "test.spacy")
    (tmp_path / "empty.spacy").write_bytes(b"")
    DocBin().to_disk(tmp_path / "no-docs.spacy")
    for name, code in (("empty.spacy", "E043"), ("no-docs.spacy", "E044")):
        args = ["bench-parser", str(tmp_path / "model"), str(tmp_path / name)]
        result = runner.invoke(app, args)
        assert result.exit_code == 1, result.output
        assert code in result.output and name in result.output
        assert "Traceback" not in result.output


def test_spacy_evaluate_reports_dependency_scores(tmp_path):
    """spaCy's own `evaluate` (in-process: its code, not its start-up) scores our parser."""
    from spacy.cli.evaluate import evaluate

    save_trained_parser(tmp_path, "test.spacy", copy_pos=False)
    evaluate(str(tmp_path / "model"), tmp_path / "test.spacy", output=tmp_path / "m.json", gold_preproc=True, silent=True)
    metrics = srsly.read_json(tmp_path / "m.json")
    assert metrics["dep_uas"] == 1.0 and metrics["dep_las"] == 1.0


def test_help_texts_are_plain_and_every_option_is_explained():
    """spaCy's CLI prints help without rich markup, so no escaped brackets may show; and
    no option of any command is left without a word of help."""
    import click
    import typer

    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, name
        assert "\\[" not in result.output, name
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                assert param.help, f"{name} {param.opts[0]} has no help"


def test_a_components_weights_override_on_any_config(tmp_path):
    """`--distillation.gold_weights.NAME` and `--distillation.teacher_weights.NAME` work
    on a config without those sections (spaCy refuses an override under a missing
    section) or with them written inline, and leave the rest of the config as it was."""
    from pathlib import Path

    from greenkd_spacy.cli.distill import load_student_config

    root = Path(__file__).parent.parent
    args = ["--distillation.gold_weights.greenkd_ner", "3", "--distillation.teacher_weights.greenkd_ner", "0.5"]
    config = load_student_config(root / "configs" / "defaults" / "ner.cfg", args)
    assert config["distillation"]["gold_weights"] == {"greenkd_ner": 3}
    assert config["distillation"]["teacher_weights"] == {"greenkd_ner": 0.5}
    plain = load_student_config(root / "configs" / "defaults" / "ner.cfg", [])
    assert "gold_weights" not in plain["distillation"]
    for key in ("components", "training", "corpora"):
        assert config[key] == plain[key]
    (tmp_path / "inline.cfg").write_text("[distillation]\ngold_weight = 1.0\ngold_weights = {}\n", encoding="utf8")
    inline = load_student_config(tmp_path / "inline.cfg", ["--distillation.gold_weights.tagger", "2"])
    assert inline["distillation"] == {"gold_weight": 1.0, "gold_weights": {"tagger": 2}}
