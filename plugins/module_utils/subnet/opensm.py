# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""opensm.conf: merge only the QoS keys into a subnet manager's existing file, and tell a UFM-managed SM.

opensm.conf is one ``key value`` per line, ``#`` comments (``opensm --create-config`` writes every option with a
comment above it). A subnet manager's file carries settings that are not ours (routing_engine, sm_priority, guid,
...): ``merge()`` rewrites only the lines of the keys it is given, in place, appends the ones the file lacks, and
keeps every other line byte for byte. Pure functions; the module ibtune.fabric.opensm_conf writes the result.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z0-9_]*)(?P<sep>\s+)(?P<value>.*?)\s*$")
APPENDED_HEADER = "# QoS keys set by ibtune.fabric fabric_qos (the other keys of this file are left as they were)"


def conf_value(value):
    """An Ansible value as opensm.conf spells it: booleans TRUE/FALSE, the rest as text."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def parse(text):
    """{key: value} of the uncommented lines (the last occurrence wins, as OpenSM reads it)."""
    out = {}
    for line in (text or "").splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match:
            out[match.group("key")] = match.group("value")
    return out


def unknown_keys(defaults_text, keys, options=None):
    """The keys (then the options' keys) that ``opensm --create-config``'s file does not list, in order, once each:
    opensm.conf would get a key this OpenSM ignores."""
    known = parse(defaults_text)
    out = []
    for key in list(keys or []) + list(options or {}):
        if key not in known and key not in out:
            out.append(key)
    return out


def qos_keys(model, policy_file, options=None):
    """The opensm.conf keys the QoS model sets (qos_model's normalized dict), plus fabric_qos_opensm_options."""
    keys = {
        "qos": "TRUE",
        "qos_policy_file": policy_file,
        "qos_max_vls": conf_value(model["ib_max_vls"]),
        "qos_high_limit": conf_value(model["ib_high_limit"]),
        "qos_vlarb_high": conf_value(model["ib_vlarb_high"]),
        "qos_vlarb_low": conf_value(model["ib_vlarb_low"]),
        "qos_sl2vl": conf_value(model["ib_sl2vl"]),
    }
    for key in sorted(options or {}):
        keys[key] = conf_value(options[key])
    return keys


def merge(text, keys):
    """(new_text, changed) with keys set in text: each key's last uncommented line gets the new value (its earlier
    duplicates are left, OpenSM reads the last); missing keys are appended under one comment. changed lists the keys
    whose value differs, sorted; with none, new_text is text unchanged."""
    text = text or ""
    lines = text.splitlines()
    last = {}
    for index, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match and match.group("key") in keys:
            last[match.group("key")] = index
    current = parse(text)
    changed = sorted(k for k in keys if current.get(k) != conf_value(keys[k]))
    if not changed:
        return text, []
    for key, index in last.items():
        match = _LINE.match(lines[index])
        lines[index] = "%s%s%s%s" % (match.group("indent"), key, match.group("sep"), conf_value(keys[key]))
    missing = [k for k in keys if k not in last]
    if missing:
        if lines and lines[-1].strip():
            lines.append("")
        if APPENDED_HEADER not in lines:
            lines.append(APPENDED_HEADER)
        lines.extend("%s %s" % (k, conf_value(keys[k])) for k in missing)
    return "\n".join(lines) + "\n", changed


def ufm_evidence(existing_paths=(), unit_names=(), processes=()):
    """Why this host's SM looks managed by NVIDIA UFM (which runs and rewrites its own OpenSM): sentences, or []."""
    out = []
    for path in sorted(existing_paths or ()):
        out.append("%s exists" % path)
    for unit in sorted(u for u in (unit_names or ()) if u.split("@")[0].startswith("ufm")):
        out.append("systemd knows %s" % unit)
    for proc in sorted(set(processes or ())):
        if "/opt/ufm/" in proc:
            out.append("OpenSM runs from UFM (%s)" % proc)
    return out
