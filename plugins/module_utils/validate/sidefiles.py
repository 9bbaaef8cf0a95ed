# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pass directory: what a pass's hosts read and write when no Ansible task carries it (layer 4).

The standalone schedule runner (runner.py, run as a Slurm job step or by a sweep) and the controller
meet in one directory per pass, on a filesystem both see (the cluster's shared filesystem, or a copy):

    settings.json              the runner's settings (perftest_schedule's options, plus ``checks``)
    nodes.json                 {scheduler node name: inventory host} (absent: the names are the hosts)
    slices/<host>.json         each host's sides, as fabric_plan sliced them
    results/<host>.sides.jsonl the host's side results, one JSON document per line, appended after
                               every round (a stopped runner keeps every round it finished); the sides
                               of a round that share their keys are one table item (resultfile.py).
                               A runner that finished rewrites it whole (write_sides), as the
                               controller writes the sides it brought back itself
    results/<host>.state.json  progress for the controller's line (perftest_schedule's state file)
    results/<host>.done.json   written when the runner ends: {finished} or {stopped: signal}, rounds, ...
    results/<host>.checks.json the host's quick checks (node health, ...) when settings name some

Everything here is plain file handling with no scheduler in it; the join reads the side files the same
way whichever launcher ran the pass.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tarfile

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

SETTINGS = "settings.json"
NODES = "nodes.json"
SLICES = "slices"
RESULTS = "results"
SIDES_SUFFIX = ".sides.jsonl"
STATE_SUFFIX = ".state.json"
DONE_SUFFIX = ".done.json"
CHECKS_SUFFIX = ".checks.json"


def result_path(results_dir, host, suffix):
    """results/<host><suffix>; a host name never walks out of the directory."""
    if not host or "/" in host or host in (".", ".."):
        raise ValueError("host name %r cannot name a results file" % (host,))
    return os.path.join(results_dir, host + suffix)


def side_lines(results):
    """The lines of a side file for ``results``: one JSON document per line, the sides of a round that share their
    keys as one table item (resultfile.py: what they share once, the rest per row). A runner's round of 8 rails is
    a line or two instead of 8: a side file a fifth of the size, read in half the time by the join."""
    return "".join(
        json.dumps(item, sort_keys=True, separators=(",", ":")) + "\n" for item in resultfile.table_items(results)
    )


def append_sides(path, results):
    """Append side results (a round's) as JSON lines and push them to the disk before the next round starts."""
    if not results:
        return
    with open(path, "a") as handle:
        handle.write(side_lines(results))
        handle.flush()
        os.fsync(handle.fileno())


def whole_lines(results):
    """The lines of a side file written whole (write_sides) for ``results``, in order: runs of sides with the same
    keys as version 2 table items of up to resultfile.TABLE_ROWS sides, each row naming its round (a column of runs),
    its peer and role, its rail (a cycle). A host's 1023 rounds at 1024 x 8 all_pairs are a few items, about a fifth
    of side_lines' text, decoded in a sixth of the time; the join cuts them back into rounds
    (join._item_rounds)."""
    return "".join(
        json.dumps(item, sort_keys=True, separators=(",", ":")) + "\n"
        for item in resultfile.table_items(results, resultfile.COLUMNS_VERSION)
    )


def write_sides(path, results, fsync=False):
    """Replace a side file with ``results`` written whole (whole_lines), atomically: what a runner that finished
    leaves (compact_side_file) and what the controller keeps of each host's sides, whichever launcher brought
    them."""
    _files.write_text(path, whole_lines(results), mode=None, dir_mode=0o777, fsync=fsync)


def compact_side_file(path):
    """Rewrite a runner's side file (a line per round, appended) whole, once its schedule has finished: the same
    sides, in the same order, read by the controller in a fraction of the time. On the disk before it replaces the
    lines, as each round was (append_sides); the lines stay where the rewrite fails (it is atomic: a reader sees
    one or the other)."""
    write_sides(path, read_side_file(path), fsync=True)


def read_side_items(path):
    """The items of one side file as written (side dicts and table items, in order), for the join to index without
    a dict per side. A last line cut short (the runner was killed while writing it) is left out: its sides did not
    come back. A bad line before the end is an error: the file is not ours."""
    with open(path) as handle:
        lines = handle.read().split("\n")
    filled = [line for line in lines if line.strip()]
    try:  # the common case, a whole file of sides, in one C call (a pass's millions of lines: a third faster)
        docs = json.loads("[%s]" % ",".join(filled))
    except ValueError:
        docs = None  # a line cut short, or one that is not ours: line by line below, to tell which
    if docs is not None and len(docs) == len(filled) and all(isinstance(doc, dict) for doc in docs):
        return docs
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            if number >= len(lines) - 1:
                break
            raise ValueError("%s line %d is not a side result (JSON): %.60r" % (path, number, line))
        if isinstance(doc, dict):
            out.append(doc)
    return out


def read_side_file(path):
    """The side results of one file (read_side_items), a table item's expanded in order."""
    return resultfile.expand_items(read_side_items(path), path)


def _host_files(results_dir, suffix):
    try:
        names = sorted(os.listdir(results_dir))
    except OSError:
        return []
    return [(name[: -len(suffix)], os.path.join(results_dir, name)) for name in names if name.endswith(suffix)]


def iter_side_items(results_dir):
    """(path, items) of every side file in ``results_dir`` (read_side_items), one host's file at a time: the join
    indexes them as they come (join.index_sides), so a pass's millions of sides are never all in memory as read,
    and never a dict each."""
    for _host, path in _host_files(results_dir, SIDES_SUFFIX):
        yield path, read_side_items(path)


def read_sides(results_dir):
    """{host: [side result]} for every side file in ``results_dir`` (no directory: nothing came back)."""
    return dict((host, read_side_file(path)) for host, path in _host_files(results_dir, SIDES_SUFFIX))


def _read_json_files(results_dir, suffix):
    out = {}
    for host, path in _host_files(results_dir, suffix):
        try:
            with open(path) as handle:
                out[host] = json.load(handle)
        except (IOError, OSError, ValueError):
            # written atomically, so only a foreign file fails here; the controller just skips it
            continue
    return out


def read_states(results_dir):
    """{host: progress state} (the schedule's state files), for the controller's progress line."""
    return _read_json_files(results_dir, STATE_SUFFIX)


def read_done(results_dir):
    """{host: how its runner ended} for the runners that ended (normally or stopped by a signal)."""
    return _read_json_files(results_dir, DONE_SUFFIX)


def read_checks(results_dir):
    """{host: [check result]} for the hosts that ran quick checks."""
    return _read_json_files(results_dir, CHECKS_SUFFIX)


def side_key(side):
    """What identifies a side in a pass: (pass, round, rail, role, host)."""
    return (int(side.get("pass") or 1), int(side["round"]), str(side.get("rail")), side["role"], side["host"])


def missing_sides(slices, back, reason):
    """A ``no_result`` side result for every planned side of ``slices`` ({host: [side]}) that is not in
    ``back`` (side results that came back), saying why: ``reason`` is a sentence, or a function of the host
    that returns one (a host whose runner was stopped by a signal says so)."""
    reason_for = reason if callable(reason) else (lambda _host: reason)
    have = set(side_key(s) for s in back if isinstance(s, dict) and "role" in s and "host" in s)
    out = []
    for host in sorted(slices):
        for side in slices[host]:
            if side_key(side) in have:
                continue
            res = dict(
                (k, side[k]) for k in ("pass", "round", "role", "host", "peer", "rail", "device", "port") if k in side
            )
            res.update(failure_kind="no_result", failure=reason_for(host), rc=None)
            out.append(res)
    return out


# --- a host's slice: its sides of a pass, one entry per pair and round -----------------------------------
#
# A side is one perftest end on one rail; a pair runs on all the rails both hosts share, so a slice lists each
# (round, pair) once with its rails, and the sides are made from it where they are run (the runner, the
# perftest_schedule task): at 1024 hosts x 8 rails all_pairs that is 1 M entries instead of 8.4 M side dicts.
#   {"format": 2, "pass": N, "host": H, "order": [this host's rails, in the plan's rail order],
#    "rails": {rail: {device, port[, gid_index]}}, "rail_index": {rail: its index in the plan's rail order},
#    "entries": [[round, role, peer, address (the server's, for a client) or null, first TCP port of the round,
#                 [rails] or null (null: every rail of "order")], ...]}
# A side's TCP port is the round's first port plus its rail's index (plan.tcp_port_for). Format 1, a plain list
# of sides, is still read.

SLICE_FORMAT = 2


def compact_slice(pass_no, host, rails, order, rail_index, entries):
    """A format-2 slice (see above) of ``host``; ``rails`` {rail: {device, port[, gid_index]}} of the rails in
    ``order``."""
    return {
        "format": SLICE_FORMAT,
        "pass": pass_no,
        "host": host,
        "order": order,
        "rails": rails,
        "rail_index": dict((name, rail_index[name]) for name in order),
        "entries": entries,
    }


def _check_slice(doc):
    if isinstance(doc, list):
        return None
    if not isinstance(doc, dict) or doc.get("format") != SLICE_FORMAT:
        raise ValueError(
            "a slice is a list of sides or a format-%d slice, got %s: re-plan the pass with this collection's "
            "fabric_plan"
            % (SLICE_FORMAT, type(doc).__name__ if not isinstance(doc, dict) else "format %r" % doc.get("format"))
        )
    return doc


def slice_sides(doc):
    """The sides of a slice, each {pass, round, role, host, peer, rail, device, port, tcp_port[, address]
    [, gid_index]}, in the plan's order (round, then rail)."""
    if _check_slice(doc) is None:
        return doc
    pass_no, host, rails, index = doc["pass"], doc["host"], doc["rails"], doc["rail_index"]
    out = []
    for round_no, role, peer, address, first_port, names in doc["entries"]:
        for name in doc["order"] if names is None else names:
            mine = rails[name]
            side = {
                "pass": pass_no,
                "round": round_no,
                "role": role,
                "host": host,
                "peer": peer,
                "rail": name,
                "device": mine["device"],
                "port": mine["port"],
                "tcp_port": first_port + index[name],
            }
            if role == "client":
                side["address"] = address
            if mine.get("gid_index") is not None:
                side["gid_index"] = mine["gid_index"]
            out.append(side)
    return out


def slice_size(doc):
    """How many sides a slice holds (without making them)."""
    if _check_slice(doc) is None:
        return len(doc)
    every = len(doc["order"])
    return sum(every if entry[5] is None else len(entry[5]) for entry in doc["entries"])


def read_slices(slice_dir, hosts):
    """{host: [side]} from fabric_plan's slice files of ``hosts`` (a host without a file has no side)."""
    out = {}
    for host in hosts:
        path = os.path.join(slice_dir, "%s.json" % host)
        if os.path.exists(path):
            with open(path) as handle:
                out[host] = slice_sides(json.load(handle))
        else:
            out[host] = []
    return out


# --- moving a pass directory between the controller and the submit host (one file each way) ---------

MARKER = ".ibtune-pass"


def pack(directory, dest, members, extra=None):
    """tar.gz of ``members`` (paths relative to ``directory``; missing ones are left out) and of ``extra``
    ([(path, name in the archive)]) at ``dest``; returns the names packed. Compression level 1: the files are
    JSON, already small, and a 2048-host pass is packed in the time of one sbatch."""
    packed = []
    with tarfile.open(dest, "w:gz", compresslevel=1) as archive:
        for member in members:
            path = os.path.join(directory, member)
            if os.path.exists(path):
                archive.add(path, arcname=member)
                packed.append(member)
        for path, name in extra or []:
            archive.add(path, arcname=name)
            packed.append(name)
    return packed


def result_members(pass_dir):
    """What comes back from a pass directory: results/ and the job's output files."""
    names = [RESULTS]
    try:
        names.extend(sorted(n for n in os.listdir(pass_dir) if n.startswith("slurm-") and n.endswith(".out")))
    except OSError:
        pass
    return names


def unpack(bundle, directory):
    """Unpack a pack() archive into ``directory``; refuses members that would land outside it."""
    root = os.path.realpath(directory)
    with tarfile.open(bundle, "r:gz") as archive:
        members = archive.getmembers()
        for member in members:
            target = os.path.realpath(os.path.join(root, member.name))
            if not (target == root or target.startswith(root + os.sep)) or not (member.isfile() or member.isdir()):
                raise ValueError("%s holds %r, which is not a plain file of a pass directory" % (bundle, member.name))
        for member in members:
            target = os.path.join(root, member.name)
            if member.isdir():
                if not os.path.isdir(target):
                    os.makedirs(target)
                continue
            if not os.path.isdir(os.path.dirname(target)):
                os.makedirs(os.path.dirname(target))
            with archive.extractfile(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return len(members)


def fresh_pass_dir(pass_dir):
    """Make ``pass_dir`` empty and ours (a marker file): an old pass directory of ours is removed first, a
    directory that is not ours is refused rather than emptied."""
    if os.path.exists(pass_dir):
        if not os.path.exists(os.path.join(pass_dir, MARKER)):
            raise ValueError(
                "%s exists and is not an ibtune pass directory (no %s): choose another shared directory or run id"
                % (pass_dir, MARKER)
            )
        shutil.rmtree(pass_dir)
    os.makedirs(os.path.join(pass_dir, RESULTS))
    with open(os.path.join(pass_dir, MARKER), "w") as handle:
        handle.write("ibtune.fabric pass directory: removed by the next pass of the same run\n")


def remove_pass_dir(pass_dir):
    """Remove a pass directory of ours (nothing else), and its run directory once that is empty; True when
    something was removed."""
    if not os.path.exists(os.path.join(pass_dir, MARKER)):
        return False
    shutil.rmtree(pass_dir)
    try:
        os.rmdir(os.path.dirname(os.path.abspath(pass_dir)))  # only when empty: another pass may still be there
    except OSError:
        pass
    return True
