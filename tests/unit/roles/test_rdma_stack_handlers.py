"""rdma_stack's handlers set the maintenance flag before every driver reload and clear it after (handlers run in
the order they are written), on the same topics and at one path, and that path's default is the one the node
health check (role node_health, slurm/node_health.py) honours."""

import re
from pathlib import Path

import yaml

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import node_health

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "rdma_stack"
FLAG_VAR = "__rdma_stack_maintenance_flag"


def _load(path):
    return yaml.safe_load(path.read_text())


def _handlers():
    return _load(ROLE / "handlers" / "main.yml")


def _topics(handler):
    listen = handler.get("listen") or []
    return {listen} if isinstance(listen, str) else set(listen)


def _is_reload(handler):
    unit = handler.get("ansible.builtin.systemd_service") or {}
    return unit.get("state") in ("restarted", "reloaded")


def _flag_handlers(handlers):
    set_ = [
        i for i, h in enumerate(handlers) if "maintenance" in str((h.get("ansible.builtin.copy") or {}).get("dest"))
    ]
    clear = [
        i
        for i, h in enumerate(handlers)
        if (h.get("ansible.builtin.file") or {}).get("state") == "absent"
        and "maintenance" in str(h["ansible.builtin.file"].get("path"))
    ]
    assert len(set_) == 1 and len(clear) == 1, "one handler sets the flag, one clears it"
    return set_[0], clear[0]


def test_the_flag_is_set_before_every_driver_reload_and_cleared_after():
    handlers = _handlers()
    set_at, clear_at = _flag_handlers(handlers)
    reloads = [i for i, h in enumerate(handlers) if _is_reload(h)]
    names = [handlers[i]["name"] for i in reloads]
    assert any("openibd" in n for n in names) and any("kernel modules" in n for n in names), names
    assert all(set_at < i < clear_at for i in reloads), (set_at, reloads, clear_at)


def test_set_and_clear_listen_to_every_reload_topic_and_run_when_the_reloads_run():
    handlers = _handlers()
    set_at, clear_at = _flag_handlers(handlers)
    reloads = [h for h in handlers if _is_reload(h)]
    reload_topics = set().union(*(_topics(h) for h in reloads))
    assert _topics(handlers[set_at]) == reload_topics
    assert _topics(handlers[clear_at]) == reload_topics
    # a flag set without its reload (or a reload without the flag) would pause the check for nothing, or not at all
    assert {handlers[set_at]["when"], handlers[clear_at]["when"]} == {h["when"] for h in reloads}


def test_set_and_clear_use_one_path_whose_default_is_node_healths():
    handlers = _handlers()
    set_at, clear_at = _flag_handlers(handlers)
    expression = "{{ %s }}" % FLAG_VAR
    assert handlers[set_at]["ansible.builtin.copy"]["dest"] == expression
    assert handlers[clear_at]["ansible.builtin.file"]["path"] == expression
    flag = _load(ROLE / "vars" / "main.yml")[FLAG_VAR]
    match = re.fullmatch(r"\{\{ ibtune_maintenance_flag \| default\('([^']+)'\) \}\}", flag)
    assert match, flag
    default = match.group(1)
    node_health_role = ROOT / "roles" / "node_health"
    assert _load(node_health_role / "defaults" / "main.yml")["node_health_maintenance_flag"] == default
    spec = _load(node_health_role / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert spec["node_health_maintenance_flag"]["default"] == default
    assert node_health.DEFAULTS["maintenance_flag"] == default
