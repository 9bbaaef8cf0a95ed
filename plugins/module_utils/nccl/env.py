# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lint NCCL environments against nccl_schema, and read/write NCCL's KEY=VALUE config files.

NCCL reads ``$NCCL_CONF_FILE`` (2.23+) or ``~/.nccl.conf``, then ``/etc/nccl.conf``, line by line:
a line starting with ``#`` is a comment, a line without ``=`` is skipped, the name is everything
before the first ``=`` and the value everything after it (nothing is trimmed or unquoted, values
are cut at 1023 characters), and ``setenv(name, value, 0)`` never overrides a variable that is
already set: the process environment wins, and within a file the FIRST line for a name wins.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import ipaddress
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import active_ports as sysfs_active_ports
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.schema import (
    FOREIGN,
    FUNCTIONS,
    LEGACY_LEVELS,
    NCCL_SOURCE,
    PLUGIN_VARIABLES,
    VARIABLES,
    parse_version,
    strtoll,
)

MAX_VALUE_LEN = 1023
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# NCCL parses integers with strtoll(value, &end, 0): 0x.. is hex and a leading 0 means octal.
_INT_RE = re.compile(r"^[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)$")
_HCA_ENTRY_RE = re.compile(r"^(?P<dev>[A-Za-z0-9_.\-]+)(?::(?P<port>\d*)(?::(?P<rail>-?\d*)(?::(?P<plane>-?\d*))?)?)?$")
_DEBUG_LEFT_ON = ("NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE")
_IF_TOKEN_RE = re.compile(r"^[A-Za-z0-9_.:@\-]+$")


def _issue(variable, value, message):
    return {"variable": variable, "value": value, "message": message}


def to_text(value):
    """Render a value the way it will be written: booleans as 1/0, numbers as decimal."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _parse_int(text):
    """(value, problem, note) as NCCL's strtoll(text, NULL, 0) reads it.

    problem: why NCCL would not read the number that was written (value None); note: the value is read,
    but not as a reader of decimal numbers would think (a leading 0 is octal: "0152" is 106).
    """
    if not _INT_RE.match(text):
        value, used = strtoll(text)
        if used == 0:
            return None, "is not an integer (NCCL's strtoll reads 0 from it)", None
        return None, "is not an integer: NCCL reads only %r of it (%s)" % (text[:used], value), None
    value, used = strtoll(text)
    if value is None:
        return None, "does not fit in 64 bits (NCCL keeps its default)", None
    if used < len(text):
        return None, "has a leading 0, so NCCL reads it as octal and stops at %r (%d)" % (text[used], value), None
    body = text.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] not in "xX":
        return value, None, "has a leading 0, so NCCL reads it as octal %d: write %d" % (value, value)
    return value, None, None


def _edit_distance(a, b):
    """Optimal string alignment distance (insert, delete, substitute, swap two neighbours)."""
    prev2, prev = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def did_you_mean(name):
    candidates = list(VARIABLES) + list(PLUGIN_VARIABLES) + list(FOREIGN)
    return difflib.get_close_matches(name.upper(), candidates, n=3, cutoff=0.75)


def close_typo(name):
    """The known name ``name`` is a typo of (one edit away; two for names of 20+ characters), or None."""
    upper = name.upper()
    limit = 2 if len(upper) >= 20 else 1
    best = None
    for known in list(VARIABLES) + list(PLUGIN_VARIABLES):
        if abs(len(known) - len(upper)) > limit:
            continue
        distance = _edit_distance(upper, known)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, known)
    return best[1] if best else None


def _range_text(entry):
    low, high = entry.get("min"), entry.get("max")
    if low is not None and high is not None:
        return "%d..%d" % (low, high)
    if low is not None:
        return ">= %d" % low
    return "<= %d" % high


def _default_hint(entry):
    return " (NCCL's default is %s)" % entry["default"] if entry.get("default") is not None else ""


def _check_list(name, text, choices, allow_negate_items=False):
    """A comma list of choices, optionally led by '^'. Returns an error message or None."""
    body = text[1:] if text.startswith("^") else text
    bad = []
    for item in body.split(","):
        token = item.strip()
        if allow_negate_items and token.startswith("^"):
            token = token[1:]
        if not token or token.upper() not in choices:
            bad.append(item)
    if bad:
        return "has %s not in the allowed values: use a comma list of %s" % (
            ", ".join(repr(b) for b in bad),
            ", ".join(choices),
        )
    return None


def _check_algo(name, text, choices):
    """NCCL_ALGO / NCCL_PROTO: 'a,b', '^a', or (2.24+) 'a,b;func:c;func:^d'."""
    problems = []
    for part in text.split(";"):
        if not part:
            problems.append("an empty ';' section")
            continue
        items = part
        if ":" in part:
            func, items = part.split(":", 1)
            if func.strip().upper() not in FUNCTIONS:
                problems.append("function %r (use one of %s)" % (func, ", ".join(FUNCTIONS)))
        if items.startswith("^"):
            items = items[1:]
        for item in items.split(","):
            if item.strip().upper() not in choices:
                problems.append("%r" % item)
    if problems:
        return "has %s not understood by NCCL: allowed items are %s" % (", ".join(problems), ", ".join(choices))
    return None


def _check_value(name, entry, text):
    """Type/range checks. Returns (errors, warnings) as lists of messages."""
    if text == "":
        if entry.get("allow_empty"):
            return [], []
        return ["is empty: give a value or remove the variable"], []
    if text != text.strip():
        return ["has leading or trailing whitespace, which NCCL keeps as part of the value: remove it"], []
    errors = []
    if len(text) > MAX_VALUE_LEN:
        errors.append("is %d characters long: NCCL cuts values at %d" % (len(text), MAX_VALUE_LEN))
    checker = _TYPE_CHECKS.get(entry["type"])
    if checker is None:
        return errors, []
    more, warnings = checker(name, entry, text)
    return errors + more, warnings


def _int_check(name, entry, text):
    value, problem, note = _parse_int(text)
    if problem:
        if entry.get("min") is None and entry.get("max") is None:
            return ["%s: use an integer%s" % (problem, _default_hint(entry))], []
        return ["%s: use an integer %s%s" % (problem, _range_text(entry), _default_hint(entry))], []
    low, high = entry.get("min"), entry.get("max")
    if (low is not None and value < low) or (high is not None and value > high):
        shown = " (read as %d)" % value if note else ""
        return ["is out of range%s: use %s%s" % (shown, _range_text(entry), _default_hint(entry))], []
    return [], [note] if note else []


def _bool_check(name, entry, text):
    return ([] if text in ("0", "1") else ["must be 0 or 1%s" % _default_hint(entry)]), []


def _enum_check(name, entry, text):
    choices = entry["choices"]
    if entry.get("case_sensitive") and text not in choices and text.upper() in choices:
        return [
            "is not read: NCCL compares these names case-sensitively; write %s%s" % (text.upper(), _default_hint(entry))
        ], []
    if text.upper() not in [c.upper() for c in choices]:
        return ["is not one of the allowed values %s%s" % (", ".join(choices), _default_hint(entry))], []
    return [], []


def _level_check(name, entry, text):
    choices = entry["choices"]
    if text in choices:
        return [], []
    if text.upper() in choices:
        return [
            "is not read: NCCL compares level names case-sensitively (strcmp), so it ignores %r and keeps "
            "its own choice; write %s" % (text, text.upper())
        ], []
    if text[:1].isdigit():
        # src/graph/paths.cc ncclGetLevel: strtol(str, NULL, 0) into levelsOldToNew, clamped to 5.
        old, _used = strtoll(text)
        level = LEGACY_LEVELS[min(max(old or 0, 0), len(LEGACY_LEVELS) - 1)]
        return [], ["is a legacy integer level, which NCCL reads as %s: write %s" % (level, level)]
    return [
        "is not a path level: use one of %s (or a legacy integer: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS)"
        % ", ".join(choices)
    ], []


def _list_check(name, entry, text):
    problem = _check_list(name, text, entry["choices"], allow_negate_items=(name == "NCCL_DEBUG_SUBSYS"))
    return ([problem] if problem else []), []


def _algo_check(name, entry, text):
    problem = _check_algo(name, text, entry["choices"])
    return ([problem] if problem else []), []


def _iflist_check(name, entry, text):
    body = text.lstrip("^").lstrip("=")
    if not body or any(not t or not _IF_TOKEN_RE.match(t) for t in body.split(",")):
        return ["is not a list of interface names: use e.g. 'eth0', '=eth0,eth1' (exact) or '^docker,lo' (exclude)"], []
    return [], []


def _hcalist_check(name, entry, text):
    return _check_hca(text), []


def _cidr_check(name, entry, text):
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return ["is not a CIDR network: use e.g. 10.0.0.0/16 or fd00::/64"], []
    return [], []


def _ctapolicy_check(name, entry, text):
    names = [t.strip().upper() for t in text.split("|")]
    if text not in ("0", "1", "2") and any(n not in ("DEFAULT", "EFFICIENCY", "ZERO") for n in names):
        return ["is not a CTA policy: use DEFAULT, EFFICIENCY, ZERO (joined with '|') or legacy 0..2"], []
    return [], []


def _netdevs_check(name, entry, text):
    upper = text.upper()
    match = re.match(r"^MAX:(\d+)$", upper)
    if upper not in ("AUTO", "ALL") and not (match and int(match.group(1)) >= 1):
        return ["is not a policy: use AUTO, ALL or MAX:N (N >= 1)"], []
    return [], []


def _path_check(name, entry, text):
    return (["contains '~', which NCCL does not expand: use an absolute path"] if "~" in text else []), []


# one checker per schema type: (name, entry, text) -> (errors, warnings)
_TYPE_CHECKS = {
    "int": _int_check,
    "bool": _bool_check,
    "enum": _enum_check,
    "level": _level_check,
    "list": _list_check,
    "algo": _algo_check,
    "iflist": _iflist_check,
    "hcalist": _hcalist_check,
    "cidr": _cidr_check,
    "ctapolicy": _ctapolicy_check,
    "netdevs": _netdevs_check,
    "path": _path_check,
}


def _check_hca(text):
    body = text
    if body.startswith("^"):
        body = body[1:]
    if body.startswith("="):
        body = body[1:]
    if not body:
        return ["is empty after its '^'/'=' prefix: list devices as dev[:port],..."]
    bad = [t for t in body.split(",") if not _HCA_ENTRY_RE.match(t)]
    if bad:
        return [
            "has entries %s that are not dev[:port[:rail[:plane]]]: use e.g. '=mlx5_0:1,mlx5_1:1'"
            % ", ".join(repr(b) for b in bad)
        ]
    return []


# RDMA device families: the kernel names their devices <family>_<n> (mlx5_0, efa_0, hfi1_0) or <family><n>.
HCA_FAMILIES = ("mlx4", "mlx5", "bnxt_re", "irdma", "erdma", "efa", "hfi1", "qedr", "rxe", "siw", "mana", "ionic")
_FULL_DEVICE_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*_\d+|(?:bnxt_re|irdma|qedr|rxe|siw)\d+)$")


def _hca_entries(text):
    """(exclude, exact, [(entry, device)]) of an NCCL_IB_HCA value, split as parseStringList does."""
    body = text
    exclude = body.startswith("^")
    if exclude:
        body = body[1:]
    exact = body.startswith("=")
    if exact:
        body = body[1:]
    return exclude, exact, [(entry, entry.split(":", 1)[0]) for entry in body.split(",") if entry]


def _hca_checks(text):
    """NCCL_IB_HCA matching (src/misc/utils.cc matchIfList): (errors, warnings) as message tails.

    Without '=', each entry is a prefix (strncmp over the entry's length): 'mlx5' selects every mlx5 device,
    as NCCL documents, but 'mlx5_1' also selects mlx5_10..mlx5_19. With '=', names compare whole, so
    '=mlx5' selects no device at all and NCCL falls back to sockets.
    """
    exclude, exact, entries = _hca_entries(text)
    lead = "^" if exclude else ""
    if exact:
        families = [dev for _entry, dev in entries if dev in HCA_FAMILIES]
        if families:
            return [
                "asks for devices named exactly %s, and no device has that name (they are %s_0, %s_1, ...): "
                "NCCL %s; write %s%s (prefix: every %s device) or name each device (=%s_0:1,...)"
                % (
                    ", ".join(families),
                    families[0],
                    families[0],
                    "would exclude nothing" if exclude else "would find no IB device and fall back to sockets",
                    lead,
                    ",".join(e for e, _d in entries),
                    families[0],
                    families[0],
                )
            ], []
        return [], []
    full = [dev for _entry, dev in entries if _FULL_DEVICE_RE.match(dev)]
    # The kernel never pads indexes: a name ending in index 0 (mlx5_0) is the prefix of no other device.
    ambiguous = [dev for dev in full if not re.search(r"(?<![0-9])0$", dev)]
    if not ambiguous:
        return [], []
    full = ambiguous
    example = full[0]
    also = "%s0..%s9" % (example, example)
    if all(_FULL_DEVICE_RE.match(dev) for _entry, dev in entries):
        fix = "write %s=%s for an exact list" % (lead, ",".join(e for e, _d in entries))
    else:
        fix = "'=' makes the whole list exact, so name every device in full and write %s=..." % lead
    return [], [
        "uses the full device name%s %s as a prefix, so NCCL also %s %s when they exist: %s"
        % ("s" if len(full) > 1 else "", ", ".join(full), "excludes" if exclude else "selects", also, fix)
    ]


def _unknown_name(name, text, strict):
    """(severity, issue) for an NCCL_* name the schema does not know.

    The schema holds every name NCCL 2.30.7 reads, so an unknown name is most likely a typo, but it may be
    one that a newer NCCL (or a plugin) reads: a warning with a did-you-mean, an error only when it is one
    edit away from a known name (a typo that silently drops the setting) or in strict mode.
    """
    typo = close_typo(name)
    if typo:
        return "error", _issue(
            name,
            text,
            "%s is not an NCCL variable, so NCCL ignores it: did you mean %s? (one typo away)" % (name, typo),
        )
    hints = did_you_mean(name)
    hint = ": did you mean %s?" % " or ".join(hints) if hints else ""
    base = "%s is not read by NCCL %s" % (name, NCCL_SOURCE["version"])
    if strict:
        return "error", _issue(
            name, text, "%s%s (strict mode allows only the names NCCL reads)" % (base, hint or ": remove it")
        )
    return "warning", _issue(
        name, text, "%s%s" % (base, hint or ": check the name (a newer NCCL or a plugin may read it)")
    )


def lint(env, nccl_version=None, link_layer=None, strict=False):
    """Check a {name: value} dict. Returns (errors, warnings), each a list of {variable, value, message}.

    ``nccl_version`` (e.g. '2.28.9') enables since/removed checks against that version; ``link_layer``
    ('InfiniBand' or 'Ethernet') enables the NCCL_IB_GID_INDEX-on-InfiniBand check; ``strict`` makes an
    unknown ``NCCL_*`` name an error (by default a warning, unless it is one typo away from a known name).
    """
    errors, warnings = [], []
    version = (parse_version(nccl_version) if nccl_version else None, nccl_version)
    values = {}
    for name in sorted(env or {}):
        errs, warns, text = _lint_one(name, env[name], version, strict)
        errors += errs
        warnings += warns
        if text is not None:
            values[name] = text
    _cross_checks(values, errors, warnings, (version[0], nccl_version, link_layer))
    return errors, warnings


def _lint_one(name, raw, version, strict):
    """(errors, warnings, the value when NCCL reads the variable, else None) of one variable."""
    text = to_text(raw)
    problem = _shape_problem(name, raw, text)
    if problem:
        return [_issue(name, text, problem)], [], None
    if name in FOREIGN:
        return [], [_issue(name, text, "%s %s" % (name, FOREIGN[name]))], None
    entry = VARIABLES.get(name) or PLUGIN_VARIABLES.get(name)
    if entry is None:
        if not name.startswith("NCCL_"):
            message = "%s is not an NCCL variable: NCCL's config file would still export it" % name
            return [], [_issue(name, text, message)], None
        severity, issue = _unknown_name(name, text, strict)
        return ([issue], [], None) if severity == "error" else ([], [issue], None)
    if entry.get("removed"):
        errs, warns = _removed(name, entry, text, version)
        return errs, warns, text
    warnings = _lifecycle_warnings(name, entry, text, version)
    errs, warns = _check_value(name, entry, text)
    errors = [_issue(name, text, "%s=%s %s" % (name, text, message)) for message in errs]
    warnings += [_issue(name, text, "%s=%s %s" % (name, text, message)) for message in warns]
    if not errs:
        warnings += _setting_warnings(name, entry, text)
    return errors, warnings, text


def _shape_problem(name, raw, text):
    """What makes a name/value unusable at all, in words; None when it is a plain NAME=value."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        return "%r is not a valid environment variable name" % (name,)
    if text is None:
        return "%s has no value: give one or remove it" % name
    if isinstance(raw, (list, dict)):
        return "%s must be a scalar, not a %s" % (name, type(raw).__name__)
    if "\n" in text or "\r" in text:
        return "%s contains a line break, which a KEY=VALUE file cannot hold" % name
    return None


def _removed(name, entry, text, version):
    message = "%s was removed in NCCL %s" % (name, entry["removed"])
    if entry.get("replacement"):
        message += ": use %s instead" % entry["replacement"]
    parsed, given = version
    if parsed is not None and parsed < parse_version(entry["removed"]):
        return [], [_issue(name, text, message + " (your NCCL %s still reads it)" % given)]
    return [_issue(name, text, message + "; NCCL ignores it")], []


def _lifecycle_warnings(name, entry, text, version):
    out = []
    if entry.get("deprecated"):
        message = "%s is deprecated since NCCL %s" % (name, entry["deprecated"])
        if entry.get("replacement"):
            message += ": use %s instead" % entry["replacement"]
        out.append(_issue(name, text, message))
    parsed, given = version
    if parsed is not None and entry.get("since") and parsed < parse_version(entry["since"]):
        out.append(_issue(name, text, "%s appeared in NCCL %s: NCCL %s ignores it" % (name, entry["since"], given)))
    return out


def _setting_warnings(name, entry, text):
    """Forced algorithms, debugging settings left on."""
    out = []
    if entry.get("warn_always"):
        out.append(
            _issue(name, text, "%s is forced to %s: %s Leave it unset in production." % (name, text, entry["note"]))
        )
    warn_values = entry.get("warn_values")
    if warn_values and text.upper() in warn_values:
        out.append(
            _issue(name, text, "%s=%s is a debugging setting: remove it once the investigation is over" % (name, text))
        )
    elif name in _DEBUG_LEFT_ON:
        out.append(
            _issue(name, text, "%s is a debugging setting left on: remove it once the investigation is over" % name)
        )
    return out


def _int_or_none(text):
    value, problem, _note = _parse_int(text) if text is not None else (None, "absent", None)
    return None if problem else value


def _cross_checks(values, errors, warnings, context):
    """Checks across variables (each of the _CROSS_CHECKS adds to errors and warnings)."""
    for check in _CROSS_CHECKS:
        check(values, errors, warnings, context)


def _cross_hca(values, errors, warnings, context):
    hca = values.get("NCCL_IB_HCA")
    if hca and not _check_hca(hca):
        hca_errors, hca_warnings = _hca_checks(hca)
        for message in hca_errors:
            errors.append(_issue("NCCL_IB_HCA", hca, "NCCL_IB_HCA=%s %s" % (hca, message)))
        for message in hca_warnings:
            warnings.append(_issue("NCCL_IB_HCA", hca, "NCCL_IB_HCA=%s %s" % (hca, message)))


def _cross_gid(values, errors, warnings, context):
    version, nccl_version, link_layer = context
    gid = values.get("NCCL_IB_GID_INDEX")
    gid_value = _int_or_none(gid)
    if gid is not None and gid_value is not None and gid_value != -1:
        if link_layer == "InfiniBand":
            warnings.append(
                _issue(
                    "NCCL_IB_GID_INDEX",
                    gid,
                    "NCCL_IB_GID_INDEX=%s is set on InfiniBand ports, where GIDs play no part in addressing: remove it"
                    % gid,
                )
            )
        elif version is None or version >= (2, 21, 0):
            which = ("NCCL %s" % nccl_version) if version is not None else "NCCL >= 2.21"
            warnings.append(
                _issue(
                    "NCCL_IB_GID_INDEX",
                    gid,
                    "NCCL_IB_GID_INDEX=%s pins the GID, but %s picks the RoCE v2 GID itself "
                    "(NCCL_IB_ADDR_FAMILY/NCCL_IB_ROCE_VERSION_NUM): remove it unless NCCL is older than 2.21"
                    % (gid, which),
                )
            )


def _cross_sockets(values, errors, warnings, context):
    nthreads = _int_or_none(values.get("NCCL_SOCKET_NTHREADS"))
    nsocks = _int_or_none(values.get("NCCL_NSOCKS_PERTHREAD"))
    if nthreads and nsocks and nthreads * nsocks > 64:
        errors.append(
            _issue(
                "NCCL_NSOCKS_PERTHREAD",
                values["NCCL_NSOCKS_PERTHREAD"],
                "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = %d exceeds NCCL's limit of 64: lower one of them"
                % (nthreads * nsocks),
            )
        )


def _cross_ctas(values, errors, warnings, context):
    low, high = _int_or_none(values.get("NCCL_MIN_CTAS")), _int_or_none(values.get("NCCL_MAX_CTAS"))
    if low and high and low > high:
        errors.append(
            _issue(
                "NCCL_MIN_CTAS",
                values["NCCL_MIN_CTAS"],
                "NCCL_MIN_CTAS=%s is above NCCL_MAX_CTAS=%s: make the minimum <= the maximum" % (low, high),
            )
        )


def _cross_timeout(values, errors, warnings, context):
    timeout = _int_or_none(values.get("NCCL_IB_TIMEOUT"))
    if timeout == 0:
        warnings.append(
            _issue("NCCL_IB_TIMEOUT", "0", "NCCL_IB_TIMEOUT=0 means an infinite timeout: a dead link hangs the job")
        )


def _cross_tc(values, errors, warnings, context):
    tc = _int_or_none(values.get("NCCL_IB_TC"))
    if tc is not None and 0 <= tc <= 255 and tc & 3 == 3:
        warnings.append(
            _issue(
                "NCCL_IB_TC",
                values["NCCL_IB_TC"],
                "NCCL_IB_TC=%s has both ECN bits set (CE, 'congestion experienced') on every packet: "
                "use DSCP << 2 | 2 (ECT0) or | 1 (ECT1), e.g. %s" % (tc, (tc >> 2) << 2 | 2),
            )
        )


def _cross_ib_disabled(values, errors, warnings, context):
    if values.get("NCCL_IB_DISABLE") == "1":
        for name in ("NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_TIMEOUT"):
            if name in values:
                warnings.append(
                    _issue(name, values[name], "%s has no effect: NCCL_IB_DISABLE=1 turns IB/RoCE off" % name)
                )
        if (values.get("NCCL_NET") or "").upper() == "IB":
            errors.append(
                _issue(
                    "NCCL_NET",
                    values["NCCL_NET"],
                    "NCCL_NET=IB contradicts NCCL_IB_DISABLE=1: NCCL would fail to find its network; drop one",
                )
            )


# --- KEY=VALUE files ---------------------------------------------------------------------------


_CROSS_CHECKS = (_cross_hca, _cross_gid, _cross_sockets, _cross_ctas, _cross_timeout, _cross_tc, _cross_ib_disabled)


def parse_conf(text):
    """Parse an nccl.conf as NCCL does. Returns (env, problems).

    env: {name: value} as NCCL would see it (first occurrence wins). problems: a list of
    {line, variable, value, message, severity ('error'|'warning')} for what NCCL would read
    differently from what the author meant.
    """
    env = {}
    first_line = {}
    problems = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw
        if line.endswith("\r"):
            line = line[:-1]
            message = "line %d ends in CR (a DOS line end): NCCL before 2.27 keeps the CR in the value" % lineno
            problems.append(_conf_problem(lineno, "warning", None, None, message))
        if line.startswith("#") or line == "":
            continue
        found, name, value = _conf_line(lineno, line)
        problems += found
        if name is None:
            continue
        if name in first_line:
            message = "line %d sets %s again: NCCL keeps the first value (line %d) and ignores this one" % (
                lineno,
                name,
                first_line[name],
            )
            problems.append(_conf_problem(lineno, "warning", name, value, message))
            continue
        first_line[name] = lineno
        env[name] = value
    return env, problems


def _conf_problem(lineno, severity, variable, value, message):
    return {"line": lineno, "severity": severity, "variable": variable, "value": value, "message": message}


def _conf_line(lineno, line):
    """(problems, name or None when NCCL sets nothing from the line, value) of one KEY=VALUE line."""
    if "=" not in line:
        if not line.strip():
            return [], None, None
        severity = "warning" if line.strip().startswith("#") else "error"
        return [_conf_problem(lineno, severity, None, line, "line %d has no '=': NCCL skips it" % lineno)], None, None
    name, value = line.split("=", 1)
    unread = _unread_line(lineno, line, name, value)
    if unread:
        return [unread], None, None
    return _misread_value(lineno, name, value), name, value


def _unread_line(lineno, line, name, value):
    """The problem of a line whose variable NCCL does not set as written, None for a plain NAME=value."""
    if name.strip().startswith("#"):
        message = "line %d: a comment must start in column 1 ('#' first), or NCCL reads it as a variable" % lineno
        return _conf_problem(lineno, "error", None, line, message)
    if name.startswith("export "):
        message = "line %d starts with 'export': NCCL would set a variable named %r; write %s=%s" % (
            lineno,
            name,
            name[len("export ") :].strip(),
            value,
        )
        return _conf_problem(lineno, "error", name, value, message)
    if name != name.strip():
        message = "line %d: NCCL keeps the spaces around the name, so %r is not %s: remove the spaces" % (
            lineno,
            name,
            name.strip(),
        )
        return _conf_problem(lineno, "error", name.strip(), value, message)
    return None


def _misread_value(lineno, name, value):
    """Values NCCL reads with what was meant as syntax in them: quotes, end-of-line comments."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        message = "line %d: NCCL does not strip quotes, so %s would be %s with the quotes: remove them" % (
            lineno,
            name,
            value,
        )
        return [_conf_problem(lineno, "error", name, value, message)]
    if " #" in value or "\t#" in value:
        message = "line %d: NCCL has no end-of-line comments, so %s would be %r: move the comment to its own line" % (
            lineno,
            name,
            value,
        )
        return [_conf_problem(lineno, "error", name, value, message)]
    return []


def lint_conf(text, nccl_version=None, link_layer=None, strict=False):
    """parse_conf + lint; file problems become errors/warnings too (with 'line')."""
    env, problems = parse_conf(text)
    errors, warnings = lint(env, nccl_version=nccl_version, link_layer=link_layer, strict=strict)
    first_line = {}
    for lineno, raw in enumerate(text.split("\n"), 1):
        name = raw.split("=", 1)[0] if "=" in raw and not raw.startswith("#") else None
        if name and name not in first_line:
            first_line[name] = lineno
    for issue in errors + warnings:
        if issue["variable"] in first_line:
            issue["line"] = first_line[issue["variable"]]
    for item in problems:
        issue = {"variable": item["variable"], "value": item["value"], "message": item["message"], "line": item["line"]}
        (errors if item["severity"] == "error" else warnings).append(issue)
    return env, errors, warnings


HEADER = "# Managed by Ansible (ibtune.fabric.nccl_env): local edits are overwritten."


def render_conf(env, header=HEADER):
    """KEY=VALUE lines, sorted by name, as NCCL reads them (no quotes, no export)."""
    lines = [header] if header else []
    for name in sorted(env):
        lines.append("%s=%s" % (name, to_text(env[name])))
    return "\n".join(lines) + "\n"


# --- What the nccl_env role writes -------------------------------------------------------------

PROFILE_LINK_LAYERS = {"ib": "InfiniBand", "roce": "Ethernet", "socket": ""}
# The QoS variable each profile takes from the QoS model, and the model mode it belongs to.
PROFILE_QOS = {"ib": ("NCCL_IB_SL", "infiniband"), "roce": ("NCCL_IB_TC", "roce_lossless"), "socket": (None, None)}
# From 2.21 NCCL picks the RoCE v2 GID itself; before, its default GID index 0 is the RoCE v1 link-local GID.
AUTO_GID_SINCE = (2, 21, 0)


class NcclEnvPlanError(ValueError):
    """Raised with one sentence naming what, where and the fix."""


def profile_for(profile, fabric=None):
    """nccl_env_profile, or (when empty) the one the fabric's link layer implies: Ethernet -> roce, else ib."""
    if profile:
        return profile
    link_layer = (fabric or {}).get("link_layer")
    if link_layer in (None, ""):
        return "ib"
    if link_layer not in ("InfiniBand", "Ethernet"):
        raise NcclEnvPlanError(
            "ibtune_fabric.link_layer=%r is not InfiniBand or Ethernet: fix ibtune_fabric or set nccl_env_profile."
            % (link_layer,)
        )
    return "roce" if link_layer == "Ethernet" else "ib"


def active_ports(rdma, link_layer):
    """['dev:port', ...] of the ACTIVE LinkUp ports of one link layer in ib_facts' ibtune_rdma, sorted."""
    return sysfs_active_ports((rdma or {}).get("devices") or {}, link_layer)


def roce_gid_index(rdma, ports):
    """The one RoCE v2 IPv4 GID index shared by the ports (NCCL_IB_GID_INDEX is one value for all of them)."""
    devices = (rdma or {}).get("devices") or {}
    found = {}
    for name in ports:
        dev, port = name.split(":", 1)
        found[name] = ((devices.get(dev) or {}).get("ports") or {}).get(port, {}).get("roce_v2_ipv4_gid_index")
    missing = sorted(n for n, index in found.items() if index is None)
    if missing:
        raise NcclEnvPlanError(
            "RoCE port%s %s ha%s no RoCE v2 IPv4 GID, and NCCL before 2.21 needs NCCL_IB_GID_INDEX set to one: "
            "give the port's netdev an IPv4 address, or set NCCL_IB_GID_INDEX in nccl_env_vars."
            % ("s" if len(missing) > 1 else "", ", ".join(missing), "ve" if len(missing) > 1 else "s")
        )
    indexes = sorted(set(found.values()))
    if len(indexes) > 1:
        raise NcclEnvPlanError(
            "the RoCE ports have their RoCE v2 IPv4 GID at different indexes (%s), but NCCL_IB_GID_INDEX is one "
            "value for all of them: make the ports agree, or set NCCL_IB_GID_INDEX in nccl_env_vars."
            % ", ".join("%s: %s" % (n, found[n]) for n in sorted(found))
        )
    return indexes[0] if indexes else None


def plan_env(
    profile,
    profile_vars,
    overrides=None,
    rdma=None,
    default_interface=None,
    socket_ifname="",
    qos_env=None,
    derive_hca=True,
    nccl_version=None,
    inspector=None,
):
    """The variables the nccl_env role writes, in order of precedence: the profile's base variables, what is
    derived (NCCL_IB_HCA from the active ports of the profile's link layer, NCCL_SOCKET_IFNAME from the default
    route, NCCL_IB_GID_INDEX on RoCE for an NCCL older than 2.21), the QoS model's variable for the profile, the
    NCCL Inspector's variables when ``inspector`` (ibtune_nccl_inspector) enables it, then the user's overrides
    (None removes a variable). Returns {env, link_layer, hca_ports, gid_index, sources}.
    """
    if profile not in PROFILE_LINK_LAYERS:
        raise NcclEnvPlanError("nccl_env_profile=%r is not ib, roce or socket: pick one of those." % (profile,))
    if profile not in (profile_vars or {}):
        raise NcclEnvPlanError("nccl_env_profile_vars has no entry for profile %s: add one (it may be {})." % profile)
    overrides = overrides or {}
    link_layer = PROFILE_LINK_LAYERS[profile]
    ports = active_ports(rdma, link_layer) if profile != "socket" and derive_hca else []
    layers = [("profile", dict(profile_vars[profile] or {}))]
    derived = {}
    if ports:
        derived["NCCL_IB_HCA"] = "=" + ",".join(ports)
    if socket_ifname:
        derived["NCCL_SOCKET_IFNAME"] = socket_ifname
    elif default_interface and default_interface != "lo":
        derived["NCCL_SOCKET_IFNAME"] = "=" + default_interface
    version = parse_version(nccl_version) if nccl_version else None
    gid_index = None
    if (
        profile == "roce"
        and ports
        and version is not None
        and version < AUTO_GID_SINCE
        and "NCCL_IB_GID_INDEX" not in overrides
    ):
        gid_index = roce_gid_index(rdma, ports)
        derived["NCCL_IB_GID_INDEX"] = str(gid_index)
    layers.append(("derived", derived))
    qos_name = PROFILE_QOS[profile][0]
    layers.append(("qos", {k: v for k, v in (qos_env or {}).items() if k == qos_name}))
    layers.append(("inspector", inspector_env(inspector_settings(inspector))))
    layers.append(("override", overrides))
    env, sources = {}, {}
    for source, values in layers:
        for name, value in values.items():
            if value is None:
                env.pop(name, None)
                sources.pop(name, None)
            else:
                env[name] = to_text(value)
                sources[name] = source
    return {"env": env, "link_layer": link_layer, "hca_ports": ports, "gid_index": gid_index, "sources": sources}


# The NCCL Inspector profiler plugin, declared once for the collection as ibtune_nccl_inspector: fabric_monitoring
# builds it to ``plugin`` and exports what it writes to ``dump_dir``; nccl_env points NCCL at it.
INSPECTOR_DEFAULTS = {
    "enabled": False,
    "plugin": "/opt/ibtune/nccl-inspector/libnccl-profiler-inspector.so",
    "dump_dir": "/var/lib/ibtune/nccl-inspector",
    "dump_interval_us": 1000000,
    "verbose": False,
}
# Before 2.30 the Inspector's dump thread sleeps tv_sec = us / 10^6 and tv_nsec = us % 10^6 (inspector.cc
# dumpMain): the sub-second part is slept as NANOseconds, so 500 us means a thread that never rests.
INSPECTOR_SLEEP_FIXED = (2, 30, 0)


def _inspector_error(key, value, fix):
    return NcclEnvPlanError("ibtune_nccl_inspector.%s=%r %s" % (key, value, fix))


def inspector_settings(raw, plugin_version=None):
    """ibtune_nccl_inspector with defaults filled in and checked; NcclEnvPlanError names the bad key.

    ``plugin_version`` (the NCCL tag the plugin is built from, e.g. v2.28.9-1) enables the check that an
    Inspector older than 2.30 gets whole seconds as its dump interval.
    """
    raw = raw or {}
    if not isinstance(raw, dict):
        raise NcclEnvPlanError("ibtune_nccl_inspector must be a dict of %s" % ", ".join(sorted(INSPECTOR_DEFAULTS)))
    unknown = sorted(set(raw) - set(INSPECTOR_DEFAULTS))
    if unknown:
        raise NcclEnvPlanError(
            "ibtune_nccl_inspector has unknown key(s) %s: use %s"
            % (", ".join(unknown), ", ".join(sorted(INSPECTOR_DEFAULTS)))
        )
    settings = dict(INSPECTOR_DEFAULTS, **raw)
    for key in ("plugin", "dump_dir"):
        value = settings[key]
        if not isinstance(value, str) or not value.startswith("/") or any(c.isspace() for c in value):
            raise _inspector_error(key, value, "must be an absolute path without whitespace")
    interval = settings["dump_interval_us"]
    if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
        raise _inspector_error("dump_interval_us", interval, "must be a positive number of microseconds")
    version = parse_version(str(plugin_version).lstrip("vV")) if plugin_version else None
    if version is not None and version < INSPECTOR_SLEEP_FIXED and interval % 1000000:
        raise _inspector_error(
            "dump_interval_us",
            interval,
            "is not whole seconds: the Inspector of %s sleeps the part below one second as nanoseconds (fixed in "
            "2.30), so its dump thread would spin on a CPU core; use 1000000 (1 s) or another multiple of 1000000"
            % plugin_version,
        )
    for key in ("enabled", "verbose"):
        if not isinstance(settings[key], bool):
            raise _inspector_error(key, settings[key], "must be true or false")
    return settings


def inspector_env(settings):
    """The variables that load and configure the Inspector ({} when it is not enabled)."""
    if not settings or not settings.get("enabled"):
        return {}
    return {
        "NCCL_PROFILER_PLUGIN": settings["plugin"],
        "NCCL_INSPECTOR_ENABLE": "1",
        "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS": str(settings["dump_interval_us"]),
        "NCCL_INSPECTOR_DUMP_DIR": settings["dump_dir"],
        "NCCL_INSPECTOR_DUMP_VERBOSE": "1" if settings["verbose"] else "0",
    }
