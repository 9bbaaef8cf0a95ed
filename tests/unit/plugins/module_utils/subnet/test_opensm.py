"""opensm.merge on the real `opensm --create-config` of Debian 12's OpenSM 3.3.23, edited as an SM admin does."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import opensm
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import normalize_model
from tests.conftest import FIXTURES

CREATED = (FIXTURES / "opensm" / "opensm-3.3.23-create-config.conf").read_text()


def _users_conf():
    # What a subnet manager's admin changes: routing engine, priority, the port GUID the SM binds to.
    text = CREATED.replace("\nrouting_engine (null)\n", "\nrouting_engine ftree,minhop\n")
    text = text.replace("\nsm_priority 0\n", "\nsm_priority 14\n")
    text = text.replace("\nguid 0x0000000000000000\n", "\nguid 0x0002c90300a1b2c3\n")
    assert "\nrouting_engine ftree,minhop\n" in text and "sm_priority 14" in text and "0x0002c90300a1b2c3" in text
    return text


KEYS = opensm.qos_keys(normalize_model({"mode": "infiniband", "ib_sl": 0}), "/etc/opensm/qos-policy.conf")


def test_parse_reads_the_created_config():
    parsed = opensm.parse(CREATED)
    assert parsed["qos"] == "FALSE" and parsed["sm_priority"] == "0" and parsed["routing_engine"] == "(null)"
    assert len(parsed) > 150


def test_merge_sets_only_the_qos_keys_and_keeps_everything_else():
    before = _users_conf()
    after, changed = opensm.merge(before, KEYS)
    # The created file already names /etc/opensm/qos-policy.conf: that key is not a change.
    assert changed == sorted(k for k in KEYS if k != "qos_policy_file")
    parsed = opensm.parse(after)
    assert {k: parsed[k] for k in KEYS} == KEYS
    assert parsed["routing_engine"] == "ftree,minhop"
    assert parsed["sm_priority"] == "14"
    assert parsed["guid"] == "0x0002c90300a1b2c3"
    # Every key of the created file is set in place: same line count, only the QoS lines differ.
    before_lines, after_lines = before.splitlines(), after.splitlines()
    assert len(before_lines) == len(after_lines)
    differing = [b for b, a in zip(before_lines, after_lines) if a != b]
    assert sorted(line.split()[0] for line in differing) == changed
    # The per-port qos_ca_* / qos_sw0_* keys are not touched.
    assert parsed["qos_ca_sl2vl"] == "(null)"


def test_second_merge_changes_nothing():
    once, _changed = opensm.merge(_users_conf(), KEYS)
    twice, changed = opensm.merge(once, KEYS)
    assert (twice, changed) == (once, [])


def test_only_the_key_that_differs_is_reported():
    once, _changed = opensm.merge(_users_conf(), KEYS)
    other = dict(KEYS, qos_high_limit="255")
    after, changed = opensm.merge(once, other)
    assert changed == ["qos_high_limit"]
    assert opensm.parse(after)["qos_high_limit"] == "255"


def test_missing_keys_are_appended_under_one_comment_and_the_rest_kept():
    text = "# my SM\nrouting_engine updn\nsm_priority 15\n"
    after, changed = opensm.merge(text, KEYS)
    assert after.startswith(text)
    assert opensm.APPENDED_HEADER in after
    assert opensm.parse(after)["routing_engine"] == "updn" and opensm.parse(after)["qos"] == "TRUE"
    assert changed == sorted(KEYS)


def test_an_empty_or_missing_file_gets_the_keys():
    after, changed = opensm.merge("", KEYS)
    assert opensm.parse(after) == KEYS and changed == sorted(KEYS)


def test_commented_key_is_not_mistaken_for_a_setting():
    after, _changed = opensm.merge("# qos TRUE\n", {"qos": "TRUE"})
    assert after == "# qos TRUE\n\n%s\nqos TRUE\n" % opensm.APPENDED_HEADER


def test_the_last_duplicate_is_the_one_set():
    after, changed = opensm.merge("qos FALSE\nqos FALSE\n", {"qos": "TRUE"})
    assert after == "qos FALSE\nqos TRUE\n" and changed == ["qos"]


@pytest.mark.parametrize("value,text", [(True, "TRUE"), (False, "FALSE"), (7, "7"), ("ftree", "ftree")])
def test_conf_value(value, text):
    assert opensm.conf_value(value) == text


def test_options_are_added_to_the_keys():
    keys = opensm.qos_keys(normalize_model({"mode": "infiniband"}), "/p", {"sa_db_dump": True})
    assert keys["sa_db_dump"] == "TRUE" and keys["qos_policy_file"] == "/p"


def test_ufm_evidence():
    assert opensm.ufm_evidence() == []
    found = opensm.ufm_evidence(
        ["/opt/ufm"], ["ufm-enterprise.service", "opensm.service"], ["/opt/ufm/opensm/sbin/opensm"]
    )
    assert found == [
        "/opt/ufm exists",
        "systemd knows ufm-enterprise.service",
        "OpenSM runs from UFM (/opt/ufm/opensm/sbin/opensm)",
    ]


def test_unknown_keys_against_the_real_create_config_file():
    text = CREATED
    model_keys = ["qos", "qos_policy_file", "qos_max_vls", "qos_high_limit", "qos_vlarb_high", "qos_sl2vl", "qos_sl2vl"]
    # OpenSM 3.3.23 knows every QoS key the role sets (and routing_engine); a typo or a key of another version not
    assert opensm.unknown_keys(text, model_keys, {"routing_engine": "ftree"}) == []
    assert opensm.unknown_keys(text, model_keys + ["qos_sl2vll"], {"routing_engin": "ftree", "qos_max_vls": 8}) == [
        "qos_sl2vll",
        "routing_engin",
    ]
    # commented keys are not known keys
    assert opensm.unknown_keys("# qos_sl2vl 0,1\nqos FALSE\n", ["qos", "qos_sl2vl"]) == ["qos_sl2vl"]
