# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The words of a Slurm allocation, built in one place: checked names, hostlists, time limits, the options.

In layer 0 because two layers build Slurm commands and neither may import the other: the slurm package's
launcher (sbatch of a validation pass, layer 6) and the nccl package's srun launcher (layer 2).

- ``check_name(option, value)``: a partition, QoS, account or reservation name Slurm can parse (ValueError
  naming the option, the value and what to give instead);
- ``compress_hostlist(names)``: Slurm's hostlist syntax (``node[01-03],gpu7``);
- ``time_text(minutes)``: a time limit as ``[D-]HH:MM:00``;
- ``allocation_options(spec, time_limit)``: ``--partition``, ``--qos``, ``--account``, ``--reservation``,
  ``--time``, ``--exclusive``, ``--nice``, in that order, for sbatch and srun alike.

No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# \Z, not $: "$" also matches before a trailing newline, and "gpu\n" is no Slurm name
SLURM_NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]+\Z")
# The allocation's names, in the order their options are written.
NAME_OPTIONS = ("partition", "qos", "account", "reservation")

_NUM_TAIL_RE = re.compile(r"^(?P<stem>.*?)(?P<num>\d+)$")


def check_name(option, value):
    """ValueError unless ``value`` (a partition, QoS, account or reservation) is empty or a name Slurm parses."""
    if value and not SLURM_NAME_RE.match(str(value)):
        raise ValueError(
            "%s=%r is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show" % (option, value)
        )


def compress_hostlist(names):
    """Slurm hostlist: ['node01', 'node02', 'node03', 'gpu7'] -> 'gpu7,node[01-03]' (zero padding kept)."""
    groups = {}
    singles = []
    for name in sorted(set(names)):
        match = _NUM_TAIL_RE.match(name)
        if not match:
            singles.append(name)
            continue
        # one range per stem and digit count: node[01-16] keeps its padding, a[1-9] and a10 stay apart
        groups.setdefault((match.group("stem"), len(match.group("num"))), []).append(match.group("num"))
    parts = list(singles)
    for (stem, width), nums in groups.items():
        values = sorted(set(int(n) for n in nums))
        if len(values) == 1:
            parts.append("%s%s" % (stem, nums[0]))
            continue
        pad = "%%0%dd" % width
        ranges = []
        start = prev = values[0]
        for value in values[1:] + [None]:
            if value is not None and value == prev + 1:
                prev = value
                continue
            ranges.append((pad % start) if start == prev else "%s-%s" % (pad % start, pad % prev))
            if value is not None:
                start = prev = value
        parts.append("%s[%s]" % (stem, ",".join(ranges)))
    return ",".join(sorted(parts))


def time_text(minutes):
    """A Slurm time limit of whole ``minutes`` as [D-]HH:MM:00 (ValueError below one minute)."""
    minutes = int(minutes)
    if minutes < 1:
        raise ValueError("a Slurm time limit is at least 1 minute, got %d" % minutes)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    text = "%02d:%02d:00" % (hours, mins)
    return ("%d-%s" % (days, text)) if days else text


def allocation_options(spec, time_limit=None):
    """The allocation's options as argv words: --partition, --qos, --account, --reservation (each name
    checked), --time, --exclusive, --nice, in that order, each only when set.

    ``spec``: partition, qos, account, reservation, exclusive, nice (other keys are ignored).
    ``time_limit``: whole minutes (an int, written as [D-]HH:MM:00) or a Slurm time as text (written as it
    is); None for no --time (sbatch of a pass puts its own, from the budget, in front).
    """
    words = []
    for option in NAME_OPTIONS:
        check_name(option, spec.get(option))
    for option in NAME_OPTIONS:
        if spec.get(option):
            words.append("--%s=%s" % (option, spec[option]))
    if isinstance(time_limit, int) and not isinstance(time_limit, bool):
        words.append("--time=%s" % time_text(time_limit))
    elif time_limit:
        words.append("--time=%s" % time_limit)
    if spec.get("exclusive"):
        words.append("--exclusive")
    if spec.get("nice"):
        words.append("--nice=%d" % int(spec["nice"]))
    return words
