"""Faults: `spacy distill` killed with SIGKILL during teacher annotation and
during training, then rerun with the same command, resumes from the cache and the last
checkpoint and ends where an uninterrupted run ends.

The child process is the real command line (`python -m spacy distill ...`); a small
driver wraps one function so that SIGKILL arrives at a chosen, reproducible point
(after the first cache shard is written; between the two renames that replace
model-last), instead of at a random moment that a fast test machine may never hit.
"""
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest
import spacy
import srsly

from ..test_distill import predictions, student_config


DRIVER = textwrap.dedent(
    """
    import os, runpy, signal, sys
    from greenkd_spacy.distillation.cache import TeacherCache

    where = os.environ.get("KILL_AT")
    if where == "annotation":
        # The driver records a finished shard in the manifest; die right after.
        add_shard = TeacherCache.add_shard

        def add_then_die(self, index, *args, **kwargs):
            add_shard(self, index, *args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)

        TeacherCache.add_shard = add_then_die
    elif where == "training":
        replace = os.replace

        def replace_then_die(src, dst):
            replace(src, dst)
            if os.path.basename(str(src)) == "model-last":
                # model-last was moved aside; its successor is not in place yet.
                os.kill(os.getpid(), signal.SIGKILL)

        # Checkpoints are swapped in by greenkd_spacy.atomic, which calls os.replace.
        os.replace = replace_then_die
    sys.argv = ["spacy", "distill"] + sys.argv[1:]
    runpy.run_module("spacy", run_name="__main__")
    """
)


def run_distill(tmp_path, teacher_dir, output, kill_at=None):
    config_path = tmp_path / "student.cfg"
    student_config(teacher_dir, tmp_path).to_disk(config_path)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = dict(os.environ, KILL_AT=kill_at or "")
    args = [sys.executable, str(driver), str(teacher_dir / "model"), str(config_path), str(output)]
    # ~10 s alone; the limit only stops a hang, and a loaded CI machine (a niced run
    # behind a two-thread training took over 300 s here) must not fail it.
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=1200)


def scores(output):
    state = srsly.read_json(output / "model-last" / "distill_state.json")
    return [row["step"] for row in state["history"]], state["history"][-1]["score"]


@pytest.mark.slow
def test_sigkill_during_annotation_and_training_then_rerun(teacher_dir, tmp_path):
    reference = run_distill(tmp_path, teacher_dir, tmp_path / "uninterrupted")
    assert reference.returncode == 0, reference.stderr[-2000:]

    # Killed during the teacher pass: one of the two shards is on disk.
    cache_root = tmp_path / "cache"
    shutil.rmtree(cache_root)
    killed = run_distill(tmp_path, teacher_dir, tmp_path / "out", kill_at="annotation")
    assert killed.returncode == -signal.SIGKILL
    (cache_dir,) = [p for p in cache_root.iterdir() if p.is_dir()]
    manifest = srsly.read_json(cache_dir / "manifest.json")
    assert list(manifest["shards"]) == ["0"] and not manifest["complete"]
    assert not list(cache_dir.glob("*.tmp")), "a half-written shard was left in place"

    # Killed during training, between the renames that replace model-last (step 100).
    killed = run_distill(tmp_path, teacher_dir, tmp_path / "out", kill_at="training")
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "out" / "model-last").exists()
    summary_of_pass = srsly.read_json(cache_dir / "manifest.json")
    assert summary_of_pass["complete"], "the second run finished the teacher pass"

    # The same command again: the old model-last comes back, training resumes at step 50.
    resumed = run_distill(tmp_path, teacher_dir, tmp_path / "out")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "Teacher cache" in resumed.stderr and "not running the teacher" in resumed.stderr
    assert "Resuming from" in resumed.stderr and "at step 50" in resumed.stderr
    steps, score = scores(tmp_path / "out")
    ref_steps, ref_score = scores(tmp_path / "uninterrupted")
    assert steps == ref_steps == [50, 100, 150]
    assert abs(score - ref_score) <= 0.02
    final = spacy.load(tmp_path / "out" / "model-best")
    assert predictions(final) == predictions(spacy.load(tmp_path / "uninterrupted" / "model-best"))
