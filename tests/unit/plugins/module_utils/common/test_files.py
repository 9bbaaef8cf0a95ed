"""common/files.py, the one atomic writer: a reader sees the old file or the new one, and a failed write leaves
the old file and no temporary file behind."""

import io
import json
import os
import stat
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_mode_none_gives_what_open_gives_and_dir_mode_none_needs_the_directory(tmp_path):
    old = os.umask(0o027)
    try:
        files.write_text(str(tmp_path / "a.txt"), "a")
        files.write_json(str(tmp_path / "b.json"), {"b": 1}, mode=None)
        with open(str(tmp_path / "c.txt"), "w") as handle:
            handle.write("c")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644  # an explicit mode ignores the umask
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == stat.S_IMODE((tmp_path / "c.txt").stat().st_mode)
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o640
    with pytest.raises(OSError):
        files.write_text(str(tmp_path / "missing" / "d.txt"), "d", dir_mode=None)
    assert not (tmp_path / "missing").exists()
    files.write_text(str(tmp_path / "state" / "e.json"), "{}", dir_mode=0o700)
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.json", "c.txt", "state"]


def test_fsync_syncs_the_file_before_the_rename(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.fstat(fd).st_size) or real(fd))
    files.write_text(str(tmp_path / "r.prom"), "x 1\n")
    assert synced == []
    files.write_json(str(tmp_path / "r.json"), {"x": 1}, fsync=True)
    assert synced == [len('{"x": 1}')]
    assert json.loads((tmp_path / "r.json").read_text()) == {"x": 1}


@pytest.mark.parametrize("count", [0, 1, 4, 5, 9, 10, 11])
def test_json_list_chunks_are_byte_for_byte_json_dumps_of_the_list(count):
    items = [{"b": i, "a": [i, "x%d" % i], "f": i / 3.0, "n": None} for i in range(count)]
    for options in ({}, {"sort_keys": True, "separators": (",", ":")}):
        text = "".join(files.json_list_chunks(iter(items), chunk=5, **options))
        assert text == json.dumps(items, **options)


def test_json_list_chunks_refuse_indent_which_they_cannot_reproduce():
    with pytest.raises(ValueError, match="indent"):
        list(files.json_list_chunks([1], indent=1))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(JSON_VALUES, max_size=8),
    indent=st.sampled_from([None, 0, 2]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")]),
    around=st.sampled_from(["", " ", "\n\t \r"]),
    block=st.sampled_from([1, 2, 3, 7, files.READ_BLOCK]),
)
def test_iter_json_list_yields_what_json_loads_makes_of_the_list_whatever_the_blocks(
    items, indent, separators, around, block
):
    """Decoded an item at a time from blocks of any size (a block of 1 cuts every number, string and literal):
    the items json.loads makes of the whole text, in order. Whitespace around and between as JSON allows."""
    text = around + json.dumps(items, indent=indent, separators=separators) + around
    assert list(files.iter_json_list(io.StringIO(text), block)) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ["", " ", "{}", '"[1]"', "[1,", "[1 2]", "[1,]", "[,1]", "[", "[]]", "[] 1", "[1]x", "[1.2.3]", '["a]', "[tru]"],
)
@pytest.mark.parametrize("block", [1, 2, files.READ_BLOCK])
def test_iter_json_list_leaves_anything_but_a_well_formed_list_to_json_load(text, block):
    """NotStreamable (perhaps after some items), and json.load then raises or returns something else than a list:
    the reader never says more than json.load would, nor differently."""
    with pytest.raises(files.NotStreamable):
        list(files.iter_json_list(io.StringIO(text), block))
    try:
        assert not isinstance(json.loads(text), list)
    except ValueError:
        pass


def test_write_chunks_streams_a_generator_and_a_failure_midway_keeps_the_old_file(tmp_path):
    path = tmp_path / "pass1-results.json"
    files.write_chunks(str(path), files.json_list_chunks(({"i": i} for i in range(3)), chunk=2))
    assert json.loads(path.read_text()) == [{"i": 0}, {"i": 1}, {"i": 2}]

    def broken():
        yield "[1,"
        raise RuntimeError("the join failed half way")

    with pytest.raises(RuntimeError):
        files.write_chunks(str(path), broken())
    assert json.loads(path.read_text()) == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert sorted(os.listdir(tmp_path)) == ["pass1-results.json"]
