#!/usr/bin/env python3
"""Open MPI's mpirun for the ibtune.fabric lab: the options the collection's launcher builds, parsed as Open MPI
4.1/5 parse them, every rank started as a process of THIS node (the lab nodes have no ssh between them).

Lab code only: installed on lab nodes as /opt/ibtune-lab/bin/mpirun, never shipped in plugins/ or roles/.
Python 3 standard library only.

Real: the hostfile (``host slots=N`` lines, ``#`` comments), -np, --map-by ppr:N:node (else by slot), -x NAME and
-x NAME=VALUE, --bind-to, --mca, --allow-run-as-root (refused to root without it, as Open MPI does), --oversubscribe;
an unknown option is refused with Open MPI's words; a host that does not resolve fails the way a daemon that
cannot be started does. Each rank gets OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE/NODE_RANK; ranks of the
first host (where mpirun runs) inherit mpirun's whole environment, ranks of the other hosts get only PATH, HOME
and the -x variables, as ranks started through Open MPI's daemons on other nodes do (forgetting -x NCCL_IB_HCA
shows). Simulated: a rank "on" another host runs here, with IBTUNE_LAB_NODE set to that host (the lab's
simulators then speak for it; its /etc/nccl.conf and fixture sysfs are this node's, the same on every lab node),
and IBTUNE_LAB_RANK_HOSTS listing every rank's host. The real Open MPI accepts the same argv: the collection's
unit tests run it (tests/unit/plugins/module_utils/nccl/test_launch.py).
"""

import os
import socket
import subprocess
import sys

VALUED = ("--hostfile", "-hostfile", "--machinefile", "-np", "-n", "--np", "--map-by", "--bind-to", "-x", "-H",
          "--host")  # fmt: skip
FLAGS = ("--allow-run-as-root", "--oversubscribe", "--tag-output", "--report-bindings", "-q", "--quiet")


def usage_error(option):
    sys.stderr.write("%s: Error: unknown option \"%s\"\nType '%s --help' for usage.\n" % ("mpirun", option, "mpirun"))
    return 1


def parse(argv):
    opts = {"hostfile": None, "np": None, "ppr": None, "export": [], "root_ok": False, "hosts": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            return opts, argv[i:], None
        if arg in ("--mca", "-mca"):
            i += 3
            continue
        if arg in FLAGS:
            opts["root_ok"] = opts["root_ok"] or arg == "--allow-run-as-root"
            i += 1
            continue
        if arg not in VALUED:
            return opts, [], arg
        value = argv[i + 1]
        if arg in ("--hostfile", "-hostfile", "--machinefile"):
            opts["hostfile"] = value
        elif arg in ("-np", "-n", "--np"):
            opts["np"] = int(value)
        elif arg == "--map-by" and value.startswith("ppr:"):
            opts["ppr"] = int(value.split(":")[1])
        elif arg == "-x":
            opts["export"].append(value)
        elif arg in ("-H", "--host"):
            opts["hosts"] = [(h.split(":")[0], int(h.split(":")[1]) if ":" in h else 1) for h in value.split(",")]
        i += 2
    return opts, [], None


def read_hostfile(path):
    hosts = []
    with open(path) as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            slots = 1
            for word in words[1:]:
                if word.startswith("slots="):
                    slots = int(word.split("=", 1)[1])
            hosts.append((words[0], slots))
    return hosts


def placement(hosts, np, ppr):
    """The host of every rank, in rank order."""
    out = []
    for host, slots in hosts:
        out += [host] * (ppr or slots)
    return out[: np or len(out)]


def rank_env(rank, ranks, local_host, exports):
    host = ranks[rank]
    if host == local_host:
        env = dict(os.environ)
    else:
        env = dict((k, os.environ[k]) for k in ("PATH", "HOME") if k in os.environ)
    for item in exports:
        name, sep, value = item.partition("=")
        if sep:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
    nodes = sorted(set(ranks), key=ranks.index)
    env.update(
        {
            "OMPI_COMM_WORLD_RANK": str(rank),
            "OMPI_COMM_WORLD_SIZE": str(len(ranks)),
            "OMPI_COMM_WORLD_LOCAL_RANK": str(ranks[:rank].count(host)),
            "OMPI_COMM_WORLD_LOCAL_SIZE": str(ranks.count(host)),
            "OMPI_COMM_WORLD_NODE_RANK": str(nodes.index(host)),
            "IBTUNE_LAB_NODE": host,
            "IBTUNE_LAB_RANK_HOSTS": ",".join(ranks),
        }
    )
    return env


def main(argv):
    opts, program, bad = parse(argv)
    if bad:
        return usage_error(bad)
    if not program:
        sys.stderr.write("mpirun: no executable was specified\n")
        return 1
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not opts["root_ok"]:
        sys.stderr.write("mpirun has detected an attempt to run as root.\nRunning as root is *strongly* discouraged"
                         " ... use --allow-run-as-root\n")  # fmt: skip
        return 1
    hosts = opts["hosts"] or (read_hostfile(opts["hostfile"]) if opts["hostfile"] else [(socket.gethostname(), 1)])
    for host, _slots in hosts:
        try:
            socket.gethostbyname(host)
        except OSError:
            sys.stderr.write("ORTE was unable to reliably start one or more daemons: %s could not be resolved\n" % host)
            return 1
    ranks = placement(hosts, opts["np"], opts["ppr"])
    if opts["np"] and len(ranks) < opts["np"]:
        sys.stderr.write("There are not enough slots available in the system to satisfy the %d slots\n" % opts["np"])
        return 1
    local = socket.gethostname().split(".")[0]
    local_host = next((h for h in ranks if h.split(".")[0] == local), ranks[0])
    procs = [
        subprocess.Popen(
            program,
            env=rank_env(r, ranks, local_host, opts["export"]),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
        )  # fmt: skip
        for r in range(len(ranks))
    ]
    outputs = [p.communicate()[0] for p in procs]
    for text in outputs[1:] + outputs[:1]:
        sys.stdout.write(text)
    failed = [p.returncode for p in procs if p.returncode]
    if failed:
        sys.stdout.write(
            "-" * 74 + "\nPrimary job  terminated normally, but 1 process returned\na non-zero exit code. Per "
            "user-direction, the job has been aborted.\n" + "-" * 74 + "\n"
        )
        return failed[0]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
