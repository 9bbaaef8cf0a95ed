# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write RDMA hw_counters as Prometheus textfile metrics.

node_exporter's infiniband collector exports ports/<n>/hw_counters/* only from node_exporter 1.11.0; older
releases (Debian 12 ships 1.5.0) leave out the RoCE congestion and retransmit counters (np_cnp_sent,
rp_cnp_handled, np_ecn_marked_roce_packets, out_of_sequence, local_ack_timeout_err, ...). This script reads
<sysfs-root>/class/infiniband/<dev>/ports/<n>/hw_counters/<counter> and writes

    ibtune_rdma_hw_events_total{device="mlx5_0",port="1",counter="out_of_sequence"} 11

to --output atomically (temporary file + rename), so node_exporter's textfile collector never reads half a
file. Unreadable or non-numeric files (e.g. "N/A") and the non-counter `lifespan` are skipped. Installed and run
by a systemd timer of the ibtune.fabric role fabric_monitoring.
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import sys
import tempfile

METRIC = "ibtune_rdma_hw_events_total"
NOT_COUNTERS = frozenset(["lifespan"])


def _escape(value):
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _read_int(path):
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("ascii", "replace").strip()
    except (IOError, OSError):
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def collect(sysfs_root):
    """Return [(device, port, counter, value)] for every numeric hw_counter under sysfs_root, sorted."""
    samples = []
    class_dir = os.path.join(sysfs_root, "class", "infiniband")
    for device in _listdir(class_dir):
        ports_dir = os.path.join(class_dir, device, "ports")
        for port in _listdir(ports_dir):
            counters_dir = os.path.join(ports_dir, port, "hw_counters")
            for counter in _listdir(counters_dir):
                if counter in NOT_COUNTERS:
                    continue
                value = _read_int(os.path.join(counters_dir, counter))
                if value is not None:
                    samples.append((device, port, counter, value))
    return samples


def render(samples):
    lines = [
        "# HELP %s RDMA port hw_counters from sysfs (ports/<n>/hw_counters), written by ibtune-hw-counters." % METRIC,
        "# TYPE %s counter" % METRIC,
    ]
    for device, port, counter, value in samples:
        labels = 'device="%s",port="%s",counter="%s"' % (_escape(device), _escape(port), _escape(counter))
        lines.append("%s{%s} %d" % (METRIC, labels, value))
    return "\n".join(lines) + "\n"


def write_atomically(path, text):
    # Not module_utils/common/files.py write_text: this script is copied alone (tasks/hw_counters.yml), without the
    # collection's module_utils beside it, so it cannot import the one writer; same steps (mkstemp, 0644, rename).
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ibtune_hw_counters.", dir=directory)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sysfs-root", default="/sys", help="sysfs mount point (default /sys)")
    parser.add_argument("--output", required=True, help="textfile to write, e.g. .../ibtune_hw_counters.prom")
    args = parser.parse_args(argv)
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        sys.stderr.write(
            "ibtune-hw-counters: the directory of %s does not exist: create node_exporter's textfile directory "
            "or fix --output\n" % args.output
        )
        return 2
    write_atomically(args.output, render(collect(args.sysfs_root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
