"""opensm_conf on a copy of the real `opensm --create-config` file: merge in place, backup, check mode, idempotence."""

import os
import shutil
from pathlib import Path

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.opensm import parse
from ansible_collections.ibtune.fabric.plugins.modules import opensm_conf
from tests.conftest import FIXTURES
from tests.unit.modules_harness import run_module

KEYS = {"qos": True, "qos_sl2vl": "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7", "qos_max_vls": 8}


def _conf(tmp_path):
    path = tmp_path / "opensm.conf"
    shutil.copy(FIXTURES / "opensm" / "opensm-3.3.23-create-config.conf", path)
    text = path.read_text().replace("\nsm_priority 0\n", "\nsm_priority 14\n")
    path.write_text(text)
    return path


def test_merges_keeps_the_rest_backs_up_and_is_idempotent(tmp_path):
    path = _conf(tmp_path)
    before = path.read_text()
    result = run_module(opensm_conf, {"path": str(path), "keys": KEYS})
    assert result["changed"] and result["changed_keys"] == ["qos", "qos_max_vls", "qos_sl2vl"]
    parsed = parse(path.read_text())
    assert parsed["qos"] == "TRUE" and parsed["sm_priority"] == "14" and parsed["qos_max_vls"] == "8"
    assert Path(result["backup_file"]).read_text() == before
    again = run_module(opensm_conf, {"path": str(path), "keys": KEYS})
    assert not again["changed"] and again["changed_keys"] == [] and "backup_file" not in again


def test_check_mode_writes_nothing(tmp_path):
    path = _conf(tmp_path)
    before = path.read_text()
    result = run_module(opensm_conf, {"path": str(path), "keys": KEYS, "_ansible_diff": True}, check_mode=True)
    assert result["changed"] and path.read_text() == before
    assert "qos TRUE" in result["diff"]["after"] and "qos FALSE" in result["diff"]["before"]
    assert sorted(os.listdir(tmp_path)) == ["opensm.conf"]


def test_missing_file_is_created_with_the_keys(tmp_path):
    path = tmp_path / "new.conf"
    result = run_module(opensm_conf, {"path": str(path), "keys": {"qos": True}})
    assert result["changed"] and parse(path.read_text()) == {"qos": "TRUE"}
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"
