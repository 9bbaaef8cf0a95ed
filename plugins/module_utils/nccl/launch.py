# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Launchers for multi-node NCCL runs, as argv lists: srun (Slurm), mpirun (Open MPI, hostfile) and torchrun.

One run = one launcher command on one host (the launch host) that starts every rank of the group:

- ``srun --mpi=pmix|pmi2 --nodes=N --ntasks-per-node=R --nodelist=n[1-2]``: Slurm starts the ranks and hands
  nccl-tests' MPI build its rank through PMIx or PMI-2. The allocation's options (partition, QoS, account,
  reservation, time limit, exclusive) and the hostlist are common/slurm_args', as for the sbatch of a validation
  pass. The environment goes through srun's own (srun's default
  ``--export=ALL``): ``--export=NAME=value`` cannot carry values with commas, and ``NCCL_IB_HCA=`` lists have them.
- ``mpirun --hostfile F -np N --map-by ppr:R:node -x NAME ...``: Open MPI (4.1 and 5 read the same options); the
  hostfile (``host slots=R`` lines) is written from the inventory's hosts; ``-x NAME`` exports each variable of
  the run's environment to every rank.
- ``torchrun --nnodes=N --nproc-per-node=R --rdzv-backend=c10d --rdzv-endpoint=host:port``: one agent per node
  (with srun: ``srun --ntasks-per-node=1 torchrun ...``, the same argv on every node; c10d numbers the nodes).

Ranks per node come from the GPUs found: NVIDIA display or 3D controllers (PCI vendor 0x10de, class 0x0300xx or
0x0302xx) under ``<sysfs_root>/bus/pci/devices``, the way the kernel lists them (NVSwitches are bridges, 0x0680).
No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args

LAUNCHERS = ("none", "srun", "mpirun", "torchrun")
SRUN_MPI = ("pmix", "pmi2")
NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")  # VGA compatible controller, 3D controller (class files read 0x030200)
DEFAULT_RDZV_PORT = 29400
# what a launcher variable or option may hold: no newline, no NUL (they end up in argv or a hostfile)
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\-]+$")


class LaunchError(ValueError):
    """One sentence: what is wrong, where, what to do."""


def gpus_from_sysfs(sysfs_root="/sys"):
    """PCI addresses of the NVIDIA GPUs under ``<sysfs_root>/bus/pci/devices``, sorted (empty when none)."""
    base = os.path.join(sysfs_root, "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    return [name for name in names if _is_nvidia_gpu(os.path.join(base, name))]


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip().lower()
    except (IOError, OSError):
        return ""


def _is_nvidia_gpu(device_dir):
    if _read(os.path.join(device_dir, "vendor")) != NVIDIA_VENDOR:
        return False
    return _read(os.path.join(device_dir, "class")).startswith(GPU_CLASSES)


def ranks_per_node(gpus_found, requested=None, where="the node"):
    """Ranks (one per GPU) to start on each node: ``requested`` when given, else every GPU found.

    Raises LaunchError when no GPU was found and none was asked for. More ranks than GPUs, asked for, are
    allowed (NCCL 2.30 runs several ranks on one GPU; older NCCL only across distinct NCCL_HOSTID):
    oversubscribed() says so."""
    found = int(gpus_found or 0)
    if requested is None:
        if found < 1:
            raise LaunchError(
                "no NVIDIA GPU found on %s (no PCI device of vendor 0x10de, class 0x0300/0x0302 under "
                "bus/pci/devices): load the driver, or set ranks_per_node" % where
            )
        return found
    value = int(requested)
    if value < 1:
        raise LaunchError("ranks_per_node must be >= 1, got %r" % (requested,))
    return value


def oversubscribed(gpus_found, ranks, where="the launch host"):
    """A warning when more ranks than GPUs will run on a node (None otherwise, or when no GPU is visible here)."""
    if not gpus_found or ranks <= gpus_found:
        return None
    return (
        "%d ranks per node but %s has %d GPU%s: ranks share GPUs (nccl-tests needs NCCL_TESTS_DEVICE; NCCL before "
        "2.30 refuses two ranks of one host on one GPU, 'Duplicate GPU detected')"
        % (ranks, where, gpus_found, "" if gpus_found == 1 else "s")
    )


def check_hosts(hosts):
    """The hosts of a run, as a list of names; raises LaunchError for an empty list or a name with odd characters."""
    if not hosts:
        raise LaunchError("a launch needs at least one host: give hosts (the inventory names of the group)")
    out = []
    for host in hosts:
        name = str(host)
        if not _HOST_RE.match(name):
            raise LaunchError(
                "host name %r cannot go into a launcher command or a hostfile: use the node's name" % name
            )
        out.append(name)
    if len(set(out)) != len(out):
        raise LaunchError("hosts %s name a node twice: each node once, ranks_per_node says how many ranks" % out)
    return out


def hostfile_text(hosts, slots):
    """An Open MPI hostfile: one ``host slots=N`` line per host, in the order given (rank order)."""
    return "".join("%s slots=%d\n" % (host, int(slots)) for host in check_hosts(hosts))


def srun_argv(hosts, ranks, mpi="pmix", srun="srun", partition=None, account=None, time_limit_min=None,
              job_name="ibtune-nccl", exclusive=False, extra=(), qos=None, reservation=None, nice=None):  # fmt: skip
    """srun's argv up to (not including) the program: every rank of the group in one job step.

    The allocation's options (--partition --qos --account --reservation --time --exclusive --nice) and the
    --nodelist hostlist come from common/slurm_args, the same words the sbatch of a validation pass uses;
    a name Slurm cannot parse is a LaunchError naming the option. ``time_limit_min``: whole minutes, None or
    0 for none (written [D-]HH:MM:00). ``nice``: srun's --nice (a positive number lowers the step's job's
    priority, so a check between jobs yields to them; 0 or None: none)."""
    hosts = check_hosts(hosts)
    if mpi not in SRUN_MPI:
        raise LaunchError("srun_mpi=%r: use one of %s (the PMI nccl-tests' MPI build talks to)" % (mpi, SRUN_MPI))
    if time_limit_min is not None and int(time_limit_min) < 0:
        raise LaunchError(
            "time_limit_min=%r: srun's --time is whole minutes, at least 1 (null for none)" % (time_limit_min,)
        )
    allocation = {
        "partition": partition,
        "qos": qos,
        "account": account,
        "reservation": reservation,
        "exclusive": exclusive,
        "nice": nice,
    }
    if nice is not None and (isinstance(nice, bool) or not isinstance(nice, int)):
        raise LaunchError("nice=%r: srun's --nice takes a whole number (positive lowers the priority)" % (nice,))
    try:
        options = _slurm_args.allocation_options(allocation, time_limit=int(time_limit_min or 0) or None)
    except ValueError as exc:
        raise LaunchError(str(exc))
    argv = [
        srun,
        "--mpi=%s" % mpi,
        "--nodes=%d" % len(hosts),
        "--ntasks-per-node=%d" % int(ranks),
        "--nodelist=%s" % _slurm_args.compress_hostlist(hosts),
        "--job-name=%s" % job_name,
        "--kill-on-bad-exit=1",
    ]
    return argv + options + [str(arg) for arg in extra]


def mpirun_argv(hostfile, nhosts, ranks, env_names=(), mpirun="mpirun", as_root=False, extra=()):
    """mpirun's argv up to the program: ``ranks`` ranks on each of ``nhosts`` hosts of ``hostfile``, in host
    order, every variable of ``env_names`` exported to the ranks (``-x NAME`` takes mpirun's own value)."""
    argv = [mpirun]
    if as_root:
        argv.append("--allow-run-as-root")
    argv += [
        "--hostfile",
        hostfile,
        "-np",
        str(int(nhosts) * int(ranks)),
        "--map-by",
        "ppr:%d:node" % int(ranks),
        "--bind-to",
        "none",
    ]
    for name in sorted(env_names):
        argv += ["-x", name]
    return argv + [str(arg) for arg in extra]


def torchrun_argv(nnodes, nproc_per_node, rdzv_endpoint, rdzv_id, torchrun="torchrun", node_rank=None, extra=()):
    """torchrun's argv up to the script: one agent per node, c10d rendezvous at ``rdzv_endpoint`` (host:port)."""
    if not re.match(r"^[A-Za-z0-9_.\-]+:\d+$", str(rdzv_endpoint)):
        raise LaunchError("rdzv_endpoint %r must be host:port (e.g. node1:29400)" % (rdzv_endpoint,))
    argv = [
        torchrun,
        "--nnodes=%d" % int(nnodes),
        "--nproc-per-node=%d" % int(nproc_per_node),
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=%s" % rdzv_endpoint,
        "--rdzv-id=%s" % rdzv_id,
    ]
    if node_rank is not None:
        argv.append("--node-rank=%d" % int(node_rank))
    return argv + [str(arg) for arg in extra]


def launch_argv(spec, program, env_names=(), hostfile=None):
    """The whole argv of one run: the launcher's part (``spec``) followed by ``program`` (a list).

    spec: {launcher: none|srun|mpirun|torchrun, hosts, ranks_per_node, srun_mpi, executable, partition, qos,
    account, reservation, time_limit_min, exclusive, extra_args, rdzv_port, rdzv_id, as_root}. ``hostfile``: the
    path the mpirun hostfile is written to (the caller writes hostfile_text there). For torchrun ``program`` is the
    script and its arguments; with ``srun`` in front (spec ``torchrun_under_srun``) one agent per node is started
    by Slurm.
    """
    kind = spec.get("launcher") or "none"
    if kind not in LAUNCHERS:
        raise LaunchError("launcher=%r: use one of %s" % (kind, ", ".join(LAUNCHERS)))
    program = [str(arg) for arg in program]
    if kind == "none":
        return list(spec.get("extra_args") or []) + program
    hosts = check_hosts(spec.get("hosts"))
    ranks = int(spec["ranks_per_node"])
    extra = spec.get("extra_args") or ()
    if kind == "srun":
        return srun_argv(hosts, ranks, **_srun_options(spec, extra)) + program
    if kind == "mpirun":
        if not hostfile:
            raise LaunchError("mpirun needs a hostfile path to write the hosts to")
        return (
            mpirun_argv(
                hostfile,
                len(hosts),
                ranks,
                env_names=env_names,
                mpirun=spec.get("executable") or "mpirun",
                as_root=bool(spec.get("as_root")),
                extra=extra,
            )
            + program
        )
    endpoint = "%s:%d" % (hosts[0], int(spec.get("rdzv_port") or DEFAULT_RDZV_PORT))
    torch_argv = torchrun_argv(
        len(hosts),
        ranks,
        endpoint,
        spec.get("rdzv_id") or "ibtune-nccl",
        torchrun=spec.get("executable") or "torchrun",
        node_rank=spec.get("node_rank"),
        extra=extra,
    )
    if spec.get("torchrun_under_srun"):
        options = _srun_options(dict(spec, executable=spec.get("srun_executable")), ())
        return srun_argv(hosts, 1, **options) + torch_argv + program
    return torch_argv + program


def _srun_options(spec, extra):
    return {
        "mpi": spec.get("srun_mpi") or "pmix",
        "srun": spec.get("executable") or "srun",
        "partition": spec.get("partition"),
        "qos": spec.get("qos"),
        "account": spec.get("account"),
        "reservation": spec.get("reservation"),
        "time_limit_min": spec.get("time_limit_min"),
        "exclusive": bool(spec.get("exclusive")),
        "nice": spec.get("nice"),
        "extra": extra,
    }


def run_env(overrides=None, nccl_debug="INFO", debug_subsys="INIT,ENV,NET"):
    """The environment a run adds to the launcher's own: the test's overrides, then NCCL_DEBUG (and
    NCCL_DEBUG_SUBSYS when given) so every rank logs the network, the NICs and GPUDirect it chose. NCCL reads
    /etc/nccl.conf on each node for the rest (the process environment wins over the file)."""
    env = dict((str(k), _text(v)) for k, v in (overrides or {}).items() if v is not None)
    if nccl_debug:
        env["NCCL_DEBUG"] = str(nccl_debug)
        if debug_subsys and "NCCL_DEBUG_SUBSYS" not in env:
            env["NCCL_DEBUG_SUBSYS"] = str(debug_subsys)
    for name, value in env.items():
        if "\n" in value or "\0" in value:
            raise LaunchError("env %s holds a line break or NUL: NCCL reads one line per variable" % name)
    return env


def _text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
