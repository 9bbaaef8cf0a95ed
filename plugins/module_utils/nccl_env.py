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

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl_schema import (
    FOREIGN,
    FUNCTIONS,
    VARIABLES,
    parse_version,
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
    """(value, problem) with strtoll base-0 semantics; problem is None when fine."""
    if not _INT_RE.match(text):
        return None, "is not an integer"
    body = text.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] not in "xX":
        try:
            octal = int(text, 8)
        except ValueError:
            return None, "has a leading 0, which NCCL reads as octal, and is not a valid octal number"
        return None, "has a leading 0, which NCCL reads as octal (%d); write it without the leading 0" % octal
    return int(text, 0), None


def did_you_mean(name):
    candidates = list(VARIABLES) + list(FOREIGN)
    return difflib.get_close_matches(name.upper(), candidates, n=3, cutoff=0.75)


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
    errors, warnings = [], []
    vtype = entry["type"]
    if text == "":
        if entry.get("allow_empty"):
            return errors, warnings
        return ["is empty: give a value or remove the variable"], warnings
    if text != text.strip():
        return ["has leading or trailing whitespace, which NCCL keeps as part of the value: remove it"], warnings
    if len(text) > MAX_VALUE_LEN:
        errors.append("is %d characters long: NCCL cuts values at %d" % (len(text), MAX_VALUE_LEN))
    if vtype == "int":
        value, problem = _parse_int(text)
        if problem:
            errors.append("%s: use an integer %s%s" % (problem, _range_text(entry), _default_hint(entry)))
        elif (entry.get("min") is not None and value < entry["min"]) or (
            entry.get("max") is not None and value > entry["max"]
        ):
            errors.append("is out of range: use %s%s" % (_range_text(entry), _default_hint(entry)))
    elif vtype == "bool":
        if text not in ("0", "1"):
            errors.append("must be 0 or 1%s" % _default_hint(entry))
    elif vtype == "enum":
        choices = entry["choices"]
        if text.upper() not in [c.upper() for c in choices]:
            errors.append("is not one of the allowed values %s%s" % (", ".join(choices), _default_hint(entry)))
    elif vtype == "level":
        choices = entry["choices"]
        if text.upper() in choices:
            pass
        elif _INT_RE.match(text) and not text.startswith("-"):
            warnings.append(
                "is a legacy integer level, whose meaning changed between NCCL versions: use one of %s"
                % ", ".join(choices)
            )
        else:
            errors.append("is not a path level: use one of %s (or a legacy integer >= 0)" % ", ".join(choices))
    elif vtype == "list":
        problem = _check_list(name, text, entry["choices"], allow_negate_items=(name == "NCCL_DEBUG_SUBSYS"))
        if problem:
            errors.append(problem)
    elif vtype == "algo":
        problem = _check_algo(name, text, entry["choices"])
        if problem:
            errors.append(problem)
    elif vtype == "iflist":
        body = text.lstrip("^").lstrip("=")
        tokens = body.split(",")
        if not body or any(not t or not _IF_TOKEN_RE.match(t) for t in tokens):
            errors.append(
                "is not a list of interface names: use e.g. 'eth0', '=eth0,eth1' (exact) or '^docker,lo' (exclude)"
            )
    elif vtype == "hcalist":
        errors.extend(_check_hca(text))
    elif vtype == "cidr":
        try:
            ipaddress.ip_network(text, strict=False)
        except ValueError:
            errors.append("is not a CIDR network: use e.g. 10.0.0.0/16 or fd00::/64")
    elif vtype == "ctapolicy":
        names = [t.strip().upper() for t in text.split("|")]
        legacy = text in ("0", "1", "2")
        if not legacy and any(n not in ("DEFAULT", "EFFICIENCY", "ZERO") for n in names):
            errors.append("is not a CTA policy: use DEFAULT, EFFICIENCY, ZERO (joined with '|') or legacy 0..2")
    elif vtype == "netdevs":
        upper = text.upper()
        match = re.match(r"^MAX:(\d+)$", upper)
        if upper not in ("AUTO", "ALL") and not (match and int(match.group(1)) >= 1):
            errors.append("is not a policy: use AUTO, ALL or MAX:N (N >= 1)")
    elif vtype == "path" and "~" in text:
        errors.append("contains '~', which NCCL does not expand: use an absolute path")
    return errors, warnings


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


def _hca_prefix_warning(text):
    body = text[1:] if text.startswith("^") else text
    if body.startswith("="):
        return None
    return (
        "has no '=' prefix, so each entry is a prefix: mlx5_1 also selects mlx5_10..mlx5_19 when they exist; "
        "write %s=%s for an exact list" % ("^" if text.startswith("^") else "", body)
    )


def lint(env, nccl_version=None, link_layer=None):
    """Check a {name: value} dict. Returns (errors, warnings), each a list of {variable, value, message}.

    ``nccl_version`` (e.g. '2.28.9') enables since/removed checks against that version; ``link_layer``
    ('InfiniBand' or 'Ethernet') enables the NCCL_IB_GID_INDEX-on-InfiniBand check.
    """
    errors, warnings = [], []
    version = parse_version(nccl_version) if nccl_version else None
    values = {}
    for name in sorted(env or {}):
        raw = env[name]
        text = to_text(raw)
        if not isinstance(name, str) or not _NAME_RE.match(name):
            errors.append(_issue(name, text, "%r is not a valid environment variable name" % (name,)))
            continue
        if text is None:
            errors.append(_issue(name, text, "%s has no value: give one or remove it" % name))
            continue
        if isinstance(raw, (list, dict)):
            errors.append(_issue(name, text, "%s must be a scalar, not a %s" % (name, type(raw).__name__)))
            continue
        if "\n" in text or "\r" in text:
            errors.append(_issue(name, text, "%s contains a line break, which a KEY=VALUE file cannot hold" % name))
            continue
        if name in FOREIGN:
            warnings.append(_issue(name, text, "%s %s" % (name, FOREIGN[name])))
            continue
        entry = VARIABLES.get(name)
        if entry is None:
            if name.startswith("NCCL_"):
                hints = did_you_mean(name)
                hint = (": did you mean %s?" % " or ".join(hints)) if hints else ": check NCCL's environment docs"
                errors.append(_issue(name, text, "%s is not an NCCL variable%s" % (name, hint)))
            else:
                warnings.append(
                    _issue(name, text, "%s is not an NCCL variable: NCCL's config file would still export it" % name)
                )
            continue
        values[name] = text
        if entry.get("removed"):
            message = "%s was removed in NCCL %s" % (name, entry["removed"])
            if entry.get("replacement"):
                message += ": use %s instead" % entry["replacement"]
            if version is not None and version < parse_version(entry["removed"]):
                warnings.append(_issue(name, text, message + " (your NCCL %s still reads it)" % nccl_version))
            else:
                errors.append(_issue(name, text, message + "; NCCL ignores it"))
            continue
        if entry.get("deprecated"):
            message = "%s is deprecated since NCCL %s" % (name, entry["deprecated"])
            if entry.get("replacement"):
                message += ": use %s instead" % entry["replacement"]
            warnings.append(_issue(name, text, message))
        if version is not None and entry.get("since") and version < parse_version(entry["since"]):
            warnings.append(
                _issue(
                    name,
                    text,
                    "%s appeared in NCCL %s: NCCL %s ignores it" % (name, entry["since"], nccl_version),
                )
            )
        errs, warns = _check_value(name, entry, text)
        for message in errs:
            errors.append(_issue(name, text, "%s=%s %s" % (name, text, message)))
        for message in warns:
            warnings.append(_issue(name, text, "%s=%s %s" % (name, text, message)))
        if errs:
            continue
        if entry.get("warn_always"):
            warnings.append(
                _issue(name, text, "%s is forced to %s: %s Leave it unset in production." % (name, text, entry["note"]))
            )
        warn_values = entry.get("warn_values")
        if warn_values and text.upper() in warn_values:
            warnings.append(
                _issue(
                    name,
                    text,
                    "%s=%s is a debugging setting: remove it once the investigation is over" % (name, text),
                )
            )
        elif name in _DEBUG_LEFT_ON:
            warnings.append(
                _issue(name, text, "%s is a debugging setting left on: remove it once the investigation is over" % name)
            )
    _cross_checks(values, errors, warnings, (version, nccl_version, link_layer))
    return errors, warnings


def _int_or_none(text):
    value, problem = _parse_int(text) if text is not None else (None, "absent")
    return None if problem else value


def _cross_checks(values, errors, warnings, context):
    version, nccl_version, link_layer = context
    hca = values.get("NCCL_IB_HCA")
    if hca and not _check_hca(hca):
        message = _hca_prefix_warning(hca)
        if message:
            warnings.append(_issue("NCCL_IB_HCA", hca, "NCCL_IB_HCA=%s %s" % (hca, message)))
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
    low, high = _int_or_none(values.get("NCCL_MIN_CTAS")), _int_or_none(values.get("NCCL_MAX_CTAS"))
    if low and high and low > high:
        errors.append(
            _issue(
                "NCCL_MIN_CTAS",
                values["NCCL_MIN_CTAS"],
                "NCCL_MIN_CTAS=%s is above NCCL_MAX_CTAS=%s: make the minimum <= the maximum" % (low, high),
            )
        )
    timeout = _int_or_none(values.get("NCCL_IB_TIMEOUT"))
    if timeout == 0:
        warnings.append(
            _issue("NCCL_IB_TIMEOUT", "0", "NCCL_IB_TIMEOUT=0 means an infinite timeout: a dead link hangs the job")
        )
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


def parse_conf(text):
    """Parse an nccl.conf as NCCL does. Returns (env, problems).

    env: {name: value} as NCCL would see it (first occurrence wins). problems: a list of
    {line, variable, value, message, severity ('error'|'warning')} for what NCCL would read
    differently from what the author meant.
    """
    env = {}
    first_line = {}
    problems = []

    def problem(lineno, severity, variable, value, message):
        problems.append(
            {"line": lineno, "severity": severity, "variable": variable, "value": value, "message": message}
        )

    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw
        if line.endswith("\r"):
            line = line[:-1]
            problem(
                lineno,
                "warning",
                None,
                None,
                "line %d ends in CR (a DOS line end): NCCL before 2.27 keeps the CR in the value" % lineno,
            )
        if line.startswith("#") or line == "":
            continue
        if "=" not in line:
            if line.strip():
                severity = "warning" if line.strip().startswith("#") else "error"
                problem(lineno, severity, None, line, "line %d has no '=': NCCL skips it" % lineno)
            continue
        name, value = line.split("=", 1)
        if name.strip().startswith("#"):
            problem(
                lineno,
                "error",
                None,
                line,
                "line %d: a comment must start in column 1 ('#' first), or NCCL reads it as a variable" % lineno,
            )
            continue
        if name.startswith("export "):
            problem(
                lineno,
                "error",
                name,
                value,
                "line %d starts with 'export': NCCL would set a variable named %r; write %s=%s"
                % (lineno, name, name[len("export ") :].strip(), value),
            )
            continue
        if name != name.strip():
            problem(
                lineno,
                "error",
                name.strip(),
                value,
                "line %d: NCCL keeps the spaces around the name, so %r is not %s: remove the spaces"
                % (lineno, name, name.strip()),
            )
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            problem(
                lineno,
                "error",
                name,
                value,
                "line %d: NCCL does not strip quotes, so %s would be %s with the quotes: remove them"
                % (lineno, name, value),
            )
        elif " #" in value or "\t#" in value:
            problem(
                lineno,
                "error",
                name,
                value,
                "line %d: NCCL has no end-of-line comments, so %s would be %r: move the comment to its own line"
                % (lineno, name, value),
            )
        if name in first_line:
            problem(
                lineno,
                "warning",
                name,
                value,
                "line %d sets %s again: NCCL keeps the first value (line %d) and ignores this one"
                % (lineno, name, first_line[name]),
            )
            continue
        first_line[name] = lineno
        env[name] = value
    return env, problems


def lint_conf(text, nccl_version=None, link_layer=None):
    """parse_conf + lint; file problems become errors/warnings too (with 'line')."""
    env, problems = parse_conf(text)
    errors, warnings = lint(env, nccl_version=nccl_version, link_layer=link_layer)
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
