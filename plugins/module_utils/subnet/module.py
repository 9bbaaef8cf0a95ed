# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ib_topology and opensm_conf modules do, as functions over their parameters (the modules are glue), and
the fabric_topology role's choice of the host that reads the fabric.

run_opensm_conf(params, host, check_mode, diff_mode) sets the given keys in opensm.conf (opensm.merge), keeping every
other line; ``host`` (the module) makes the backup and the atomic move, as Ansible does for every file it writes.

run(params) reads the tools' outputs (running ibnetdiscover, iblinkinfo, dump_lfts, ibqueryerrors as argument
lists with a timeout, or reading saved files), analyses them (analysis.analyse), adds routes and switch counters,
and returns the result; ModuleError carries the one sentence the module fails with.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.host.process import run_once
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import switch_counters as swc
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import load_golden
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.opensm import merge
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_lfts
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import hosts_from_facts

# where AnsibleModule.get_bin_path looks after PATH (the diags live in /usr/sbin on Debian)
SBIN_DIRS = ("/sbin", "/usr/sbin", "/usr/local/sbin")
# (output key, saved-file option, run option, tool, its arguments, what the file is)
OUTPUTS = (
    ("iblinkinfo", "linkinfo_path", "linkinfo", "iblinkinfo", (), "iblinkinfo output"),
    ("dump_lfts", "routes_path", "routes", "dump_lfts", (), "dump_lfts output"),
    ("ibqueryerrors", "errors_path", "switch_counters", "ibqueryerrors", (), "ibqueryerrors output"),
    (
        "ibqueryerrors_counters",
        "data_counters_path",
        "switch_data_counters",
        "ibqueryerrors",
        ("--counters", "--switch"),
        "ibqueryerrors --counters output",
    ),
)


def tools_host(host, source, subnet_managers=None):
    """The host that runs the fabric tools or holds the saved outputs: ``host`` when given, else the controller
    for saved files (source ``file``), else the first host of group subnet_managers ('' when it has none)."""
    if host:
        return host
    if source == "file":
        return "localhost"
    return (list(subnet_managers or []) or [""])[0]


def messages(result):
    """Every sentence the fabric checks and the switch counters produced, findings first."""
    found = result.get("findings") or []
    violations = result.get("switch_counter_violations") or []
    return [f["msg"] for f in found] + [v["msg"] for v in violations]


def read_saved(path, what):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        raise ModuleError("cannot read %s %s (%s): give a readable saved output." % (what, path, exc))


def find_tool(name, bin_dir=None):
    """The tool's path: in bin_dir when given, else on PATH or in the sbin directories; None when absent."""
    if bin_dir:
        path = os.path.join(bin_dir, name)
        return path if os.path.exists(path) else None
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d] + list(SBIN_DIRS)
    for folder in dirs:
        path = os.path.join(folder, name)
        if os.path.exists(path) and os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def _diags_argv(params, name, extra):
    exe = find_tool(name, params["bin_dir"])
    if not exe:
        raise ModuleError(
            "%s not found on %s: install infiniband-diags there, run on the subnet manager host, or give "
            "a saved output." % (name, params["bin_dir"] or "PATH")
        )
    argv = [exe] + list(extra)
    if params["ca"]:
        argv += ["-C", params["ca"]]
    if params["ca_port"] is not None:
        argv += ["-P", str(params["ca_port"])]
    return argv


def run_tool(params, name, extra=()):
    """One tool's stdout; ModuleError when it is missing, times out or fails (ibqueryerrors exits non-zero
    when it found errors: its report is still the output)."""
    res = run_once(_diags_argv(params, name, extra), params["timeout"])
    if res["timed_out"]:
        raise ModuleError(
            "%s did not finish in %ds and was killed: raise timeout or check the fabric (a hung port "
            "stalls the sweep)." % (name, params["timeout"])
        )
    reported = name == "ibqueryerrors" and ("## Summary" in res["stdout"] or "Data Counters for" in res["stdout"])
    if res["rc"] != 0 and not reported:
        last = (res["stderr"].strip().splitlines() or ["no error output"])[-1]
        raise ModuleError(
            "%s exited %s: %s; run it where the fabric is visible (ib_umad loaded, access to "
            "/dev/infiniband/umad*)." % (name, res["rc"], last)
        )
    return res["stdout"]


def read_outputs(params):
    """{tool: output} of every tool asked for (a saved file wins over running the tool)."""
    if params["path"]:
        outputs = {"ibnetdiscover": read_saved(params["path"], "ibnetdiscover output")}
    else:
        outputs = {"ibnetdiscover": run_tool(params, "ibnetdiscover")}
    for key, path_option, run_option, tool, extra, what in OUTPUTS:
        # iblinkinfo runs only against the live fabric (a saved ibnetdiscover has no live ports to ask)
        live_only = key == "iblinkinfo" and params["path"]
        if params[path_option]:
            outputs[key] = read_saved(params[path_option], what)
        elif params[run_option] and not live_only:
            outputs[key] = run_tool(params, tool, extra)
    return outputs


def _golden(params):
    text = read_saved(params["golden_path"], "golden topology") if params["golden_path"] else params["golden"]
    return load_golden(text)


def _add_switch_counters(result, text, params, golden):
    """Error counters of every switch port; with counters_previous, the violations since then (returned)."""
    parsed = swc.parse_ibqueryerrors(text)
    snap = swc.snapshot_from_ibqueryerrors(parsed, result)
    found = []
    if params["counters_previous"] is not None:
        thresholds = params["counter_thresholds"]
        found = swc.switch_violations(params["counters_previous"], snap, result, thresholds, golden=golden)
    result.update(
        switch_counters=snap,
        switch_counter_violations=found,
        switch_saturated=swc.switch_saturated(snap, result, swc.ibqueryerrors_sources(parsed)),
    )
    if found:
        counters_msg = swc.describe(found)
        result["msg"] = counters_msg if not result["findings"] else result["msg"] + " " + counters_msg
    return found


def _add_data_counters(result, text, params):
    data = swc.snapshot_from_ibqueryerrors(swc.parse_ibqueryerrors(text), result)
    result["switch_data_counters"] = data
    if params["data_counters_previous"] is not None:
        previous = params["data_counters_previous"]
        result["isl_traffic"] = swc.isl_traffic(previous, data, result, params["traffic_min_bytes"])


def run(params, check_mode=False):
    """The ib_topology result (read-only on the fabric: check mode runs the same reads)."""
    outputs = read_outputs(params)
    hosts = hosts_from_facts(params["facts"])
    hosts.update(params["hosts"] or {})
    try:
        golden = _golden(params)
        result = analyse(
            outputs["ibnetdiscover"],
            outputs.get("iblinkinfo"),
            hosts,
            golden,
            params["rail_groups"],
            params["checks"],
            params["rail_alignment"],
            params["max_oversubscription"],
            params["min_global_gbps"],
        )
    except ValueError as exc:
        raise ModuleError(str(exc))
    if not result["switches"] and not result["cas"]:
        raise ModuleError("ibnetdiscover output has no node: check that it is a complete ibnetdiscover output.")
    failing = [f for f in result["findings"] if f["severity"] == "error"]
    if "dump_lfts" in outputs:
        result["routes"] = parse_lfts(outputs["dump_lfts"])
    if "ibqueryerrors" in outputs:
        failing += _add_switch_counters(result, outputs["ibqueryerrors"], params, golden)
    if "ibqueryerrors_counters" in outputs:
        _add_data_counters(result, outputs["ibqueryerrors_counters"], params)
    if params["return_outputs"]:
        result["outputs"] = outputs
    result["messages"] = messages(result)
    result["changed"] = False
    result["failed"] = bool(failing and params["fail_on_findings"])
    return result


def run_opensm_conf(params, host, check_mode=False, diff_mode=False):
    """The opensm_conf result: changed and the keys whose value changed (the file untouched in check mode)."""
    path = params["path"]
    exists = os.path.isfile(path)
    before = ""
    if exists:
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
    after, changed = merge(before, params["keys"])
    result = dict(changed=bool(changed), changed_keys=changed)
    if diff_mode:
        result["diff"] = dict(before=before, after=after, before_header=path, after_header=path)
    if changed and not check_mode:
        if exists and params["backup"]:
            result["backup_file"] = host.backup_local(path)
        # Not common/files.py: Ansible's atomic_move keeps the existing file's owner, mode and SELinux context
        # (opensm.conf is a system file the module edits in place), which the common writer does not do.
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".opensm_conf.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(after)
        if not exists:
            os.chmod(tmp, 0o644)
        host.atomic_move(tmp, path)
    return result
