"""common/files.py, the one atomic writer: a reader sees the old file or the new one, and a failed write leaves
the old file and no temporary file behind."""

import json
import os
import stat
import threading

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files


def test_writes_json_with_its_mode_creating_the_directory(tmp_path):
    path = tmp_path / "plan" / "pass1.json"
    files.write_json(str(path), {"b": 1, "a": [1, 2]}, sort_keys=True, separators=(",", ":"))
    assert path.read_text() == '{"a":[1,2],"b":1}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    files.write_json(str(path), {"x": 1}, mode=0o600, newline=True, indent=1)
    assert path.read_text() == '{\n "x": 1\n}\n' and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "state.json"
    files.write_json(str(path), {"round": 1})
    with pytest.raises(TypeError):
        files.write_json(str(path), {"round": object()})  # not JSON: fails before anything is written
    with pytest.raises(TypeError):
        files.write_text(str(path), b"bytes are not text")
    assert json.loads(path.read_text()) == {"round": 1}
    assert sorted(os.listdir(tmp_path)) == ["state.json"]


def test_a_reader_never_sees_half_a_file(tmp_path):
    path = str(tmp_path / "progress.json")
    big = {"sides": ["x" * 1000] * 200}
    files.write_json(path, big)
    seen, done = [], threading.Event()

    def read():
        while not done.is_set():
            with open(path) as handle:
                seen.append(json.load(handle) == big)  # a torn file would not parse

    reader = threading.Thread(target=read)
    reader.start()
    for _write in range(200):
        files.write_json(path, big)
    done.set()
    reader.join()
    assert seen and all(seen)
