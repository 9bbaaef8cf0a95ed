"""common/module.read_text: a module's input file read once, its absence and unreadability one sentence each."""

import os

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError, read_text


def test_reads_utf8_and_replaces_what_is_not(tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_bytes(b"NCCL_IB_HCA=mlx5_0\nbad=\xff\n")
    assert read_text(str(path), "x", "y") == "NCCL_IB_HCA=mlx5_0\nbad=\ufffd\n"


def test_a_missing_file_names_the_path_and_the_fix(tmp_path):
    path = str(tmp_path / "absent.conf")
    with pytest.raises(ModuleError) as err:
        read_text(path, "render it first", "")
    assert err.value.msg == "%s does not exist: render it first" % path


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a 0000 file")
def test_an_unreadable_file_names_the_error_and_the_fix(tmp_path):
    path = tmp_path / "secret.conf"
    path.write_text("x")
    path.chmod(0)
    with pytest.raises(ModuleError) as err:
        read_text(str(path), "", "; run as a user who can read it.")
    assert err.value.msg.startswith("cannot read %s: " % path) and err.value.msg.endswith("who can read it.")


def test_a_directory_is_not_a_file(tmp_path):
    with pytest.raises(ModuleError) as err:
        read_text(str(tmp_path), "point path at the file", "")
    assert "does not exist: point path at the file" in err.value.msg
