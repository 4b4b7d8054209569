"""benchmarks/headline.py: the README's table from results files, its speed ratios from
the study's timing in turns where that is as new as the bench rows."""
import srsly

from benchmarks.headline import Headline, markdown, measure


def _row(system: str, las: float, speed: float, date: str) -> dict:
    return {"system": system, "las": las, "words_per_second": speed, "disk_bytes": 1e6, "date": date}


def _study(tmp_path, speed_entries):
    results = tmp_path / "study" / "results"
    results.mkdir(parents=True)
    srsly.write_json(results / "parser_x.json", [
        _row("ours", 82.0, 20000.0, "2026-11-29"), _row("spacy", 81.0, 10000.0, "2026-11-29"),
    ])
    if speed_entries is not None:
        srsly.write_json(results / "parser_x_speed.json", speed_entries)
    return Headline("Parsing", "las", "study/results/parser_x.json", "ours", "spacy")


def test_ratio_from_the_bench_rows_without_a_timing_in_turns(tmp_path):
    figures = measure(_study(tmp_path, None), root=tmp_path)
    assert figures["speed_ratio"] == (2.0, 2.0) and not figures["speed_in_turns"]
    assert "| 2.00x |" in markdown([figures])


def test_ratio_from_the_latest_timing_in_turns_of_the_pair(tmp_path):
    entries = [
        {"date": "2026-11-29", "best": {"ours": 30000.0, "spacy": 10000.0}},
        {"date": "2026-11-29", "best": {"ours": 25000.0, "spacy": 10000.0, "other": 1.0}},
        {"date": "2026-11-29", "best": {"other": 5000.0, "spacy": 10000.0}},  # not the pair
    ]
    figures = measure(_study(tmp_path, entries), root=tmp_path)
    assert figures["speed_ratio"] == (2.5, 2.5) and figures["speed_in_turns"]
    assert "| 2.50x in turns |" in markdown([figures])


def test_a_timing_older_than_the_bench_rows_is_not_used(tmp_path):
    entries = [{"date": "2026-11-28", "best": {"ours": 30000.0, "spacy": 10000.0}}]
    figures = measure(_study(tmp_path, entries), root=tmp_path)
    assert figures["speed_ratio"] == (2.0, 2.0) and not figures["speed_in_turns"]
