"""Atomic writes: a reader sees the old or the new version, never a torn one."""
import json

import pytest

from greenkd_spacy.atomic import atomic_write_json, recover_directory, write_directory


def test_json_and_directory_replace_and_recover(tmp_path):
    atomic_write_json(tmp_path / "sub/rows.json", [{"a": 1}])
    assert json.loads((tmp_path / "sub/rows.json").read_text()) == [{"a": 1}]
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["rows.json"]  # no temp file left

    def fill(version):
        def write(tmp):
            tmp.mkdir()
            (tmp / "v").write_text(version)
        return write

    target = tmp_path / "model-last"
    write_directory(target, fill("1"))
    write_directory(target, fill("2"))
    assert (target / "v").read_text() == "2" and sorted(p.name for p in tmp_path.iterdir()) == ["model-last", "sub"]

    def crash(tmp):
        tmp.mkdir()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_directory(target, crash)
    assert (target / "v").read_text() == "2"  # a kill while writing leaves the old version
    target.rename(tmp_path / ".model-last.old")  # a kill between the two renames
    recover_directory(target)
    assert (target / "v").read_text() == "2"
