"""The studies' target checks read the results rows and nothing else."""
import sys

import pytest
import srsly

from benchmarks import summarize_distill as summarize


def test_checks_follow_the_rows():
    rows = [
        {"system": "full", "las": 88.0, "words_per_second": 1000},
        {"system": "d-20", "las": 87.0, "words_per_second": 2500},
        {"system": "base-20", "las": 87.5, "words_per_second": 2500},
        {"system": "teacher-trf", "las": 86.0, "words_per_second": 100},
        {"system": "student-trf-cnn", "las": 84.5, "words_per_second": 1600},
        {"system": "spacy-cnn", "las": 84.0, "words_per_second": 1000},
    ]
    checks = {c["target"]: c["met"] for c in summarize.check(rows)}
    assert checks["D-20 beats Base-20 (LAS)"] is False
    assert checks["D-20 within ~1.5 LAS of Full"] is True
    assert checks["D-20 at least 2.3x faster than Full"] is True
    assert checks["student-trf-cnn: >= 15x faster than the teacher and <= 2.0 LAS below it"] is True
    # Fastest student above 84.0 LAS: d-20 at 2,500 words/s = 2.5x spacy-cnn (base-20 is no student).
    assert checks["fastest student above spacy-cnn's LAS is > 1.5x its words/s"] is True


def test_speeds_are_compared_only_within_one_bench_run():
    """A row benched on another day (maybe another machine) has no speed ratio."""
    rows = [
        {"system": "teacher-trf", "las": 86.0, "words_per_second": 100, "date": "2026-11-24"},
        {"system": "student-trf-a", "las": 85.0, "words_per_second": 2000, "date": "2026-11-24"},
        {"system": "student-trf-b", "las": 85.0, "words_per_second": 2000, "date": "2026-11-23"},
        {"system": "student-trf-c", "las": 83.0, "words_per_second": 2000, "date": "2026-11-23"},
        {"system": "d-10", "las": 85.0, "words_per_second": 9000, "date": "2026-11-24"},
        {"system": "spacy-cnn", "las": 84.0, "words_per_second": 1000, "date": "2026-11-23"},
    ]
    checks = {c["target"].split(":")[0]: c for c in summarize.check(rows)}
    assert checks["student-trf-a"]["met"] is True and "20.0x faster" in checks["student-trf-a"]["figures"]
    assert checks["student-trf-b"]["met"] is None and "not comparable" in checks["student-trf-b"]["figures"]
    assert checks["student-trf-c"]["met"] is False  # 3.0 LAS below: fails whatever the speed
    # d-10 is faster and better than spacy-cnn but benched another day: only b and c count.
    spacy = checks["fastest student above spacy-cnn's LAS is > 1.5x its words/s"]
    assert "student-trf-b" in spacy["figures"] and spacy["met"] is True


def test_labeller_checks_follow_the_rows():
    from benchmarks import summarize_labeller as labeller

    rows = [
        {"system": "ldnet", "f1": 81.0, "words_per_second": 3000, "lm_flops_per_token": 1000},
        {"system": "ldnet-pruned", "f1": 80.6, "words_per_second": 9000, "lm_flops_per_token": 150},
        {"system": "spacy-cnn", "f1": 80.0, "words_per_second": 10000, "lm_flops_per_token": 0},
    ]
    checks = {c["target"]: c["met"] for c in labeller.check("ner", rows)}
    assert checks["LM pruned by >= 80% of its FLOPs with <= 0.5 F1 lost"] is True
    # Better F1, but slower than spaCy: not met.
    assert checks["LD-Net pruned beats spaCy's CPU NER F1 at equal or better words/s"] is False
    rows[1]["f1"] = 80.4  # 0.6 F1 lost
    rows[1]["words_per_second"] = 10000
    checks = {c["target"]: c["met"] for c in labeller.check("ner", rows)}
    assert checks["LM pruned by >= 80% of its FLOPs with <= 0.5 F1 lost"] is False
    assert checks["LD-Net pruned beats spaCy's CPU NER F1 at equal or better words/s"] is True
    assert all(c["met"] is None for c in labeller.check("chunk", rows))


def test_resumed_distillation_counts_training_twice_and_the_teacher_once(tmp_path):
    """`--distill-summary` repeated for a run resumed with more steps."""
    import srsly

    from benchmarks.rows import add_distill_cost

    annotation = {"greenkd_parser": {"cpu_seconds": 700.0}}
    srsly.write_json(tmp_path / "a.json", {"annotation": annotation, "training": {"cpu_seconds": 3000.0, "steps": 3000}})
    srsly.write_json(tmp_path / "b.json", {"annotation": annotation, "training": {"cpu_seconds": 4000.0, "steps": 7000}})
    one = add_distill_cost({}, [tmp_path / "a.json"])
    assert (one["train_cpu_seconds"], one["teacher_annotation_cpu_seconds"]) == (3000.0, 700.0)
    both = add_distill_cost({}, [tmp_path / "a.json", tmp_path / "b.json"])
    assert (both["train_cpu_seconds"], both["teacher_annotation_cpu_seconds"]) == (7000.0, 700.0)
    assert len(both["distillation_cost"]["training"]) == 2
    # Summaries that carry their earlier segments' cost: one alone is the whole cost,
    # two are summed by their own segments, never counting the first segment twice.
    carried = {"cpu_seconds": 7000.0, "segment_cpu_seconds": 4000.0, "resumed_from_step": 3000, "steps": 7000}
    srsly.write_json(tmp_path / "c.json", {"annotation": annotation, "training": carried})
    assert add_distill_cost({}, [tmp_path / "c.json"])["train_cpu_seconds"] == 7000.0
    first = {"cpu_seconds": 3000.0, "segment_cpu_seconds": 3000.0, "resumed_from_step": 0, "steps": 3000}
    srsly.write_json(tmp_path / "a.json", {"annotation": annotation, "training": first})
    assert add_distill_cost({}, [tmp_path / "a.json", tmp_path / "c.json"])["train_cpu_seconds"] == 7000.0
    # A first phase that was itself resumed after a kill counts in full.
    killed = {"cpu_seconds": 3000.0, "segment_cpu_seconds": 1000.0, "resumed_from_step": 1000, "steps": 3000}
    srsly.write_json(tmp_path / "a.json", {"annotation": annotation, "training": killed})
    assert add_distill_cost({}, [tmp_path / "a.json", tmp_path / "c.json"])["train_cpu_seconds"] == 7000.0
    # A resumed run whose earlier cost was never recorded says so.
    lost = {"cpu_seconds": 4000.0, "segment_cpu_seconds": 4000.0, "resumed_from_step": 3000, "cost_carried": False}
    srsly.write_json(tmp_path / "d.json", {"annotation": annotation, "training": lost})
    assert "segments after it only" in add_distill_cost({}, [tmp_path / "d.json"])["train_cost_note"]


def test_fine_tuning_after_distillation_adds_its_training_cost(tmp_path):
    """KD + FT: --distill-summary gives the KD's training, the FT's `spacy train` cost
    file adds its own seconds; the distill run's own cost file adds only its peak."""
    import srsly

    from benchmarks.rows import add_train_cost

    srsly.write_json(tmp_path / "kd.json", {"command": "python -m spacy distill T c.cfg out", "wall_seconds": 900.0, "cpu_seconds": 1700.0, "max_rss_mb": 7000.0})
    srsly.write_json(tmp_path / "ft.json", {"command": "python -m spacy train ft.cfg --output o", "wall_seconds": 20.0, "cpu_seconds": 25.0, "max_rss_mb": 1400.0})
    row = {"train_wall_seconds": 180.0, "train_cpu_seconds": 250.0}
    kd = add_train_cost(dict(row), tmp_path / "kd.json", peak_only=True)
    assert (kd["train_wall_seconds"], kd["train_cpu_seconds"], kd["train_max_rss_mb"]) == (180.0, 250.0, 7000.0)
    ft = add_train_cost(dict(row), tmp_path / "ft.json", peak_only=True)
    assert (ft["train_wall_seconds"], ft["train_cpu_seconds"]) == (200.0, 275.0)
    assert "fine-tuning" in ft["train_cost_note"]
    # A row without distillation seconds gains none, and no note claiming it did.
    bare = add_train_cost({}, tmp_path / "ft.json", peak_only=True)
    assert "train_wall_seconds" not in bare and "train_cost_note" not in bare


def test_resumed_teacher_pass_with_estimated_cpu_is_flagged(tmp_path):
    import srsly

    from benchmarks.rows import add_distill_cost

    info = {"cpu_seconds": 900.0, "wall_seconds": 500.0, "cpu_seconds_complete": True,
            "earlier_runs": {"shards": 3, "cpu_estimated_shards": 3}}
    srsly.write_json(tmp_path / "a.json", {"annotation": {"textcat": info}, "training": {"cpu_seconds": 1.0}})
    row = add_distill_cost({}, [tmp_path / "a.json"])
    assert row["teacher_annotation_cpu_seconds"] == 900.0
    assert "3 shard(s)" in row["teacher_annotation_note"]
    info.update(cpu_seconds_complete=False)
    srsly.write_json(tmp_path / "a.json", {"annotation": {"textcat": info}, "training": {"cpu_seconds": 1.0}})
    assert "leave those shards out" in add_distill_cost({}, [tmp_path / "a.json"])["teacher_annotation_note"]
    srsly.write_json(tmp_path / "a.json", {"annotation": {"textcat": {"cpu_seconds": 5.0}}, "training": {}})
    assert "teacher_annotation_note" not in add_distill_cost({}, [tmp_path / "a.json"])


def test_one_teacher_pass_for_a_pipeline_student_is_counted_once(tmp_path):
    """A pipeline student's components share one teacher pass: the summary has an entry
    per component naming the same pass, which costs once, not three times."""
    import srsly

    from benchmarks.rows import add_distill_cost

    shared = {"cpu_seconds": 500.0, "wall_seconds": 300.0, "components": ["tagger", "morphologizer", "parser"]}
    annotation = {name: dict(shared) for name in shared["components"]}
    annotation["textcat"] = {"cpu_seconds": 20.0, "wall_seconds": 10.0, "components": ["textcat"]}
    srsly.write_json(tmp_path / "s.json", {"annotation": annotation, "training": {"cpu_seconds": 1.0, "wall_seconds": 1.0, "steps": 1}})
    row = add_distill_cost({}, [tmp_path / "s.json"])
    assert row["teacher_annotation_cpu_seconds"] == 520.0
    assert row["teacher_annotation_wall_seconds"] == 310.0
    assert "teacher_annotation_max_rss_mb" not in row  # no peak recorded, none claimed


def test_the_teacher_pass_peak_memory_is_kept_apart_from_the_process_peak(tmp_path):
    import srsly

    from benchmarks.rows import add_distill_cost

    annotation = {"ner": {"cpu_seconds": 5.0, "max_rss_mb": 3000.0}}
    srsly.write_json(tmp_path / "s.json", {"annotation": annotation, "training": {"cpu_seconds": 1.0, "max_rss_mb": 2000.0}})
    row = add_distill_cost({}, [tmp_path / "s.json"])
    assert (row["teacher_annotation_max_rss_mb"], row["train_max_rss_mb"]) == (3000.0, 3000.0)
    annotation["ner"]["max_rss_mb"] = 1500.0
    srsly.write_json(tmp_path / "s.json", {"annotation": annotation, "training": {"cpu_seconds": 1.0, "max_rss_mb": 2000.0}})
    row = add_distill_cost({}, [tmp_path / "s.json"])
    assert (row["teacher_annotation_max_rss_mb"], row["train_max_rss_mb"]) == (1500.0, 2000.0)
    # A reused cache: its manifest's peak is another run's, not this process's.
    annotation["ner"].update(max_rss_mb=3000.0, reused=True)
    srsly.write_json(tmp_path / "s.json", {"annotation": annotation, "training": {"cpu_seconds": 1.0, "max_rss_mb": 2000.0}})
    row = add_distill_cost({}, [tmp_path / "s.json"])
    assert (row["teacher_annotation_max_rss_mb"], row["train_max_rss_mb"], row["teacher_annotation_reused"]) == (3000.0, 2000.0, True)


def test_a_distilled_rows_peak_memory_comes_with_its_times(tmp_path):
    """The summary's own peak (the loop records it) is the row's; a timed.py record of
    the same `spacy distill` adds its process peak but not its times, which would mix
    the teacher pass into the training's."""
    import srsly

    from benchmarks.rows import add_distill_cost, add_train_cost

    annotation = {"tagger": {"cpu_seconds": 50.0, "wall_seconds": 40.0, "max_rss_mb": 900.0}}
    training = {"cpu_seconds": 10.0, "wall_seconds": 8.0, "steps": 5, "max_rss_mb": 1200.0}
    srsly.write_json(tmp_path / "s.json", {"annotation": annotation, "training": training})
    srsly.write_json(tmp_path / "cost.json", {"wall_seconds": 99.0, "cpu_seconds": 99.0, "max_rss_mb": 1500.0})
    row = add_distill_cost({}, [tmp_path / "s.json"])
    assert row["train_max_rss_mb"] == 1200.0
    row = add_train_cost(row, tmp_path / "cost.json", peak_only=True)
    assert row["train_max_rss_mb"] == 1500.0
    assert (row["train_wall_seconds"], row["train_cpu_seconds"]) == (8.0, 10.0)


def test_a_second_step_budget_is_compared_only_with_itself():
    rows = [
        {"system": "base-80", "las": 86.0, "words_per_second": 1},
        {"system": "d-80-drop", "las": 85.9, "words_per_second": 1},
        {"system": "base-80-1k", "las": 86.5, "words_per_second": 1},
        {"system": "d-80-drop-1k", "las": 86.6, "words_per_second": 1},
    ]
    checks = {c["target"]: c for c in summarize.check(rows)}
    assert checks["D-80 with dropout beats Base-80 (LAS; ours)"]["met"] is False
    budget = checks["D-80 with dropout beats Base-80 (LAS; ours, 1k steps)"]
    assert budget["met"] is True and budget["figures"] == "D-80-drop 86.60 vs Base-80 86.50"


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["/x/spacy/__main__.py", "greenkd-bench-parser", "m", "t.spacy"], "python -m spacy greenkd-bench-parser m t.spacy"),
        (["benchmarks/tfidf_svm.py", "train.spacy", "--system", "tfidf-svm"], "python benchmarks/tfidf_svm.py train.spacy --system tfidf-svm"),
        (["/x/greenkd_spacy/__main__.py", "a b"], "python -m greenkd_spacy 'a b'"),
    ],
)
def test_a_row_records_the_command_that_reruns_it(monkeypatch, argv, expected):
    """A result row's `command` is what a user types again: a script run as
    `python benchmarks/X.py` keeps its path (it was once recorded as `python -m
    greenkd_spacy ...`, which runs something else)."""
    from benchmarks.rows import command_line

    monkeypatch.setattr(sys, "argv", argv)
    assert command_line() == expected


def test_a_row_made_through_the_launcher_records_the_launcher(monkeypatch):
    """A lab module run by benchmarks/run.py cannot run as `python benchmarks/X.py`: its
    rows name the launcher as it was typed, and the module."""
    import benchmarks
    from benchmarks.rows import command_line

    monkeypatch.setattr(benchmarks, "launched_as", ["../../benchmarks/run.py", "bench"])
    monkeypatch.setattr(sys, "argv", ["/x/benchmarks/bench.py", "parser", "m", "a b.spacy"])
    assert command_line() == "python ../../benchmarks/run.py bench parser m 'a b.spacy'"


def test_pipeline_checks_report_the_gap_share_and_compare_speed_within_one_run():
    from benchmarks import summarize_pipeline as pipeline

    rows = [
        {"system": "teacher-trf", "las": 86.0, "words_per_second": 300, "date": "d"},
        {"system": "student-greenkd", "las": 85.0, "words_per_second": 9000, "date": "d"},
        {"system": "student-spacy-cnn", "las": 84.5, "words_per_second": 8000, "date": "d"},
        {"system": "spacy-cnn-gold", "las": 84.0, "words_per_second": 7000, "date": "d"},
    ]
    checks = {c["target"]: c for c in pipeline.check("pipeline", rows)}
    assert checks["teacher at least 3 LAS above the gold baseline (else: a small teacher, said so)"]["met"] is False
    assert "50% of 2.00" in checks["student-greenkd: share of the teacher-minus-baseline gap closed"]["figures"]
    assert checks["a student >= gold baseline + 2.0 LAS at >= 1.0x its words/s"]["met"] is False  # +1.0 only
    assert checks["a student within 2.0 LAS of the teacher at >= 15x its words/s"]["met"] is True  # 1.0 at 30x
    rows[2].update(las=86.2, words_per_second=6000)  # +2.2 but slower: not met
    checks = {c["target"]: c for c in pipeline.check("pipeline", rows)}
    assert checks["a student >= gold baseline + 2.0 LAS at >= 1.0x its words/s"]["met"] is False
    rows[1].update(las=86.5)  # the other student meets both halves
    checks = {c["target"]: c for c in pipeline.check("pipeline", rows)}
    assert checks["a student >= gold baseline + 2.0 LAS at >= 1.0x its words/s"]["met"] is True
    for row in rows[1:3]:
        row["date"] = "other day"  # benched in another run: speed not comparable
    checks = {c["target"]: c for c in pipeline.check("pipeline", rows)}
    assert checks["a student >= gold baseline + 2.0 LAS at >= 1.0x its words/s"]["met"] is None
    assert "not comparable" in checks["a student >= gold baseline + 2.0 LAS at >= 1.0x its words/s"]["figures"]
    ner = pipeline.check("ner", [dict(r, f1=r["las"], system=r["system"].replace("spacy-cnn-gold", "spacy-ner-gold")) for r in rows[:1] + rows[2:]])
    assert not any("within 2.0" in c["target"] for c in ner)


def test_textcat_cpu_first_checks_follow_the_rows():
    """The text classification targets: accuracy, speed (same bench day only) and
    size from scratch; distilled against the better of BOW and TF-IDF + 2."""
    from benchmarks import summarize_textcat as textcat

    day = "2026-11-27"
    rows = [
        {"system": "spacy-bow", "accuracy": 82.0, "docs_per_second": 1000, "docs_per_second_by_batch": {"1000": 1000}, "date": day},
        {"system": "tfidf-svm", "accuracy": 83.0, "docs_per_second": 2000, "docs_per_second_by_batch": {"1000": 2000}, "date": day},
        {"system": "dan-default", "accuracy": 81.0, "docs_per_second": 1600, "docs_per_second_by_batch": {"1000": 1600}, "disk_bytes": 17_000_000, "date": day},
        {"system": "ngram-linear", "accuracy": 83.0, "docs_per_second": 1400, "docs_per_second_by_batch": {"1000": 1400}, "disk_bytes": 3_000_000, "date": day},
        {"system": "dan-kd-default", "accuracy": 85.0, "docs_per_second": 1600, "docs_per_second_by_batch": {"1000": 1600}, "disk_bytes": 29_000_000, "date": "2026-11-26"},
        {"system": "linear-kd-default", "accuracy": 84.9, "docs_per_second": 1600, "docs_per_second_by_batch": {"1000": 1600}, "disk_bytes": 5_000_000, "date": day},
    ]
    checks = {c["target"].split(" ")[0]: c for c in textcat.check("sst2", rows)}
    assert checks["dan-default"]["met"] is False  # fast enough, 1.0 below BOW
    assert checks["ngram-linear"]["met"] is False and "1.40x" in checks["ngram-linear"]["figures"]  # accurate, too slow
    assert checks["dan-kd-default"]["met"] is True and "85.00 vs 85.00" in checks["dan-kd-default"]["figures"]
    assert checks["linear-kd-default"]["met"] is False
    rows[3]["docs_per_second_by_batch"] = {"1000": 1500}
    rows[3]["date"] = "2026-11-26"
    checks = {c["target"].split(" ")[0]: c for c in textcat.check("sst2", rows)}
    assert checks["ngram-linear"]["met"] is None and "not comparable" in checks["ngram-linear"]["figures"]
    rows[3]["date"] = day
    checks = {c["target"].split(" ")[0]: c for c in textcat.check("sst2", rows)}
    assert checks["ngram-linear"]["met"] is True
    rows[3]["disk_bytes"] = 31_000_000
    assert {c["target"].split(" ")[0]: c for c in textcat.check("sst2", rows)}["ngram-linear"]["met"] is False


def _student_row(system, words, las, teacher_cpu, train_cpu):
    one_pass = {"words_labelled": words, "components": ["tagger", "parser"]}
    return {
        "system": system, "las": las, "upos_acc": 95.0,
        # One pass labels both components: its words are counted once.
        "distillation_cost": {"annotation": {"tagger": one_pass, "parser": one_pass}},
        "teacher_annotation_cpu_seconds": teacher_cpu, "train_cpu_seconds": train_cpu,
    }


def test_the_transfer_curve_orders_points_by_text_and_says_what_each_keeps_and_costs():
    from benchmarks import transfer_curve

    rows = [
        _student_row("student-t100", 1_000_000, 85.0, 900.0, 5000.0),
        _student_row("student-t10", 100_000, 83.0, 90.0, 5000.0),
        {"system": "teacher-trf", "las": 86.0, "upos_acc": 96.0},
        {"system": "spacy-cnn-gold", "las": 82.0, "upos_acc": 94.0},
    ]
    result = transfer_curve.curve(rows, [["student-t100", "student-t10"]], ["las", "upos_acc"], "spacy-cnn-gold", "teacher-trf")
    assert [p["system"] for p in result["points"]] == ["student-t10", "student-t100"]
    assert {p["series"] for p in result["points"]} == {"student-t100"}
    low, high = result["points"]
    assert low["transfer_words"] == 100_000 and high["cpu_seconds"] == 5900.0
    assert low["las_lead_kept"] == 0.25 and high["las_lead_kept"] == 0.75 and high["upos_acc_lead_kept"] == 0.5
    text = transfer_curve.table(result)
    assert "| student-t10 | 100,000 | 83.00 | 25% | 95.00 | 50% | 90 | 5,000 | 5,090 |" in text
    rows.append(_student_row("other-t100", 1_000_000, 84.0, 900.0, 2000.0))
    two = transfer_curve.curve(rows, [["student-t10", "student-t100"], ["other-t100"]], ["las"], "spacy-cnn-gold", "teacher-trf")
    assert [(p["series"], p["system"]) for p in two["points"]] == [
        ("student-t100", "student-t10"), ("student-t100", "student-t100"), ("other-t100", "other-t100")]
    with pytest.raises(transfer_curve.CurveError, match="no teacher pass"):
        transfer_curve.curve(rows, [["spacy-cnn-gold"]], ["las"], "spacy-cnn-gold", "teacher-trf")
    with pytest.raises(transfer_curve.CurveError, match=r"No row named \['student-t30'\]"):
        transfer_curve.curve(rows, [["student-t30"]], ["las"], "spacy-cnn-gold", "teacher-trf")


def test_the_transfer_curve_draws_one_curve_per_data_set(tmp_path):
    from benchmarks import transfer_curve

    for data, las in (("a", 85.0), ("b", 84.0)):
        rows = [_student_row("s-t10", 10, las - 1, 1.0, 2.0), _student_row("s", 100, las, 10.0, 2.0),
                {"system": "teacher", "las": 86.0}, {"system": "base", "las": 82.0}]
        srsly.write_json(tmp_path / f"rows_{data}.json", rows)
    transfer_curve.main([str(tmp_path / "rows_{data}.json"), "--data", "a", "b", "--systems", "s-t10", "s",
                         "--metrics", "las", "--baseline", "base", "--teacher", "teacher",
                         "--json", str(tmp_path / "curve_{data}.json")])
    assert [p["las_lead_kept"] for p in srsly.read_json(tmp_path / "curve_a.json")["points"]] == [0.5, 0.75]
    assert [p["las"] for p in srsly.read_json(tmp_path / "curve_b.json")["points"]] == [83.0, 84.0]
    with pytest.raises(SystemExit, match="needs \\{data\\}"):
        transfer_curve.main([str(tmp_path / "rows_a.json"), "--data", "a", "--systems", "s", "--metrics", "las",
                             "--baseline", "base", "--teacher", "teacher"])
