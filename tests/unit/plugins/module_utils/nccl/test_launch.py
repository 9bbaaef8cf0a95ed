"""Launchers as argv lists, GPUs from sysfs, and the argv run for real: Debian's Open MPI 4.1 (openmpi-bin, installed
by scripts/bootstrap.sh host) starts the ranks with the hostfile and -x variables the launcher builds, and the lab's
mpirun simulator accepts the same argv and gives the ranks the same Open MPI variables."""

import os
import shutil
import socket
import subprocess
import sys

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import launch
from tests.conftest import ROOT

LAB = ROOT / "tests" / "lab"
# Each rank writes what it was given to its own file (argv[1]/rank-N): mpirun's forwarding of two ranks' stdout
# through one pipe lost or merged a line about 1 run in 4 on a loaded machine, which is not what is tested here.
WRITE_RANK = (
    "import os, sys; values = tuple(os.environ.get(k) for k in "
    "('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK', 'NCCL_IB_HCA')); "
    "open(os.path.join(sys.argv[1], 'rank-%s' % values[0]), 'w').write('rank=%s size=%s local=%s hca=%s' % values)"
)


def gpu_tree(root, devices):
    for address, vendor, klass in devices:
        path = root / "bus" / "pci" / "devices" / address
        path.mkdir(parents=True)
        (path / "vendor").write_text(vendor + "\n")
        (path / "class").write_text(klass)


def test_gpus_are_nvidia_3d_or_vga_controllers_not_nvswitches_or_nics(tmp_path):
    gpu_tree(
        tmp_path,
        [
            ("0000:18:00.0", "0x10de", "0x030200"),  # H100 SXM: 3D controller
            ("0000:19:00.0", "0x15b3", "0x020700"),  # ConnectX-7: InfiniBand controller
            ("0000:05:00.0", "0x10de", "0x068000"),  # NVSwitch: bridge
            ("0000:2a:00.0", "0x10de", "0x030000"),  # a VGA-class NVIDIA GPU
        ],
    )
    assert launch.gpus_from_sysfs(str(tmp_path)) == ["0000:18:00.0", "0000:2a:00.0"]
    assert launch.gpus_from_sysfs(str(tmp_path / "none")) == []


def test_ranks_per_node_default_from_gpus_and_oversubscription_warns():
    assert launch.ranks_per_node(8) == 8
    assert launch.ranks_per_node(8, 1) == 1
    with pytest.raises(launch.LaunchError, match="no NVIDIA GPU found on node7"):
        launch.ranks_per_node(0, where="node7")
    assert launch.oversubscribed(8, 8) is None
    assert "2 ranks per node but the launch host has 1 GPU" in launch.oversubscribed(1, 2)


def test_srun_argv():
    argv = launch.srun_argv(["n1", "n2"], 8, mpi="pmi2", partition="gpu", time_limit_min=10, exclusive=True)
    assert argv == [
        "srun", "--mpi=pmi2", "--nodes=2", "--ntasks-per-node=8", "--nodelist=n[1-2]", "--job-name=ibtune-nccl",
        "--kill-on-bad-exit=1", "--partition=gpu", "--time=00:10:00", "--exclusive",
    ]  # fmt: skip
    with pytest.raises(launch.LaunchError, match="srun_mpi='openmpi'"):
        launch.srun_argv(["n1"], 1, mpi="openmpi")


def test_srun_argv_has_the_allocation_options_of_the_sbatch_launcher():
    argv = launch.srun_argv(
        ["gpu010", "gpu002", "gpu001", "login"], 4, partition="gpu", qos="validation", account="ops",
        reservation="fabric_maint", time_limit_min=1500, exclusive=True, extra=["--cpu-bind=none"],
    )  # fmt: skip
    assert argv == [
        "srun", "--mpi=pmix", "--nodes=4", "--ntasks-per-node=4", "--nodelist=gpu[001-002,010],login",
        "--job-name=ibtune-nccl", "--kill-on-bad-exit=1", "--partition=gpu", "--qos=validation", "--account=ops",
        "--reservation=fabric_maint", "--time=1-01:00:00", "--exclusive", "--cpu-bind=none",
    ]  # fmt: skip
    assert launch.srun_argv(["n1"], 1, time_limit_min=0)[-1] == "--kill-on-bad-exit=1"  # 0 or None: no --time


@pytest.mark.parametrize("option", ["partition", "qos", "account", "reservation"])
def test_srun_argv_refuses_a_bad_slurm_name_naming_the_option(option):
    with pytest.raises(launch.LaunchError) as caught:
        launch.srun_argv(["n1", "n2"], 1, **{option: "gpu --uid=0"})
    assert str(caught.value) == (
        "%s='gpu --uid=0' is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show" % option
    )


def test_srun_argv_refuses_a_negative_time_limit():
    with pytest.raises(launch.LaunchError, match=r"time_limit_min=-5: srun's --time is whole minutes"):
        launch.srun_argv(["n1"], 1, time_limit_min=-5)


def test_launch_argv_passes_qos_and_reservation_to_srun_and_to_torchrun_under_srun():
    spec = {
        "launcher": "srun", "hosts": ["n1", "n2"], "ranks_per_node": 2, "srun_mpi": "pmi2", "qos": "high",
        "reservation": "nccl", "account": "ops", "time_limit_min": 5,
    }  # fmt: skip
    assert launch.launch_argv(spec, ["all_reduce_perf", "-b", "8"]) == [
        "srun", "--mpi=pmi2", "--nodes=2", "--ntasks-per-node=2", "--nodelist=n[1-2]", "--job-name=ibtune-nccl",
        "--kill-on-bad-exit=1", "--qos=high", "--account=ops", "--reservation=nccl", "--time=00:05:00",
        "all_reduce_perf", "-b", "8",
    ]  # fmt: skip
    torch = dict(spec, launcher="torchrun", torchrun_under_srun=True, rdzv_id="r1")
    under = launch.launch_argv(torch, ["bench.py"])
    assert under[7:11] == ["--qos=high", "--account=ops", "--reservation=nccl", "--time=00:05:00"]
    assert under[11:13] == ["torchrun", "--nnodes=2"]


def test_srun_nice_lowers_the_priority_of_the_step_for_srun_and_torchrun_under_srun():
    """--nice comes last of the allocation options, as the validation's sbatch writes it (common/slurm_args)."""
    spec = {"launcher": "srun", "hosts": ["n1", "n2"], "ranks_per_node": 1, "srun_mpi": "pmi2", "nice": 100,
            "exclusive": True}  # fmt: skip
    assert launch.launch_argv(spec, ["all_reduce_perf"])[7:] == ["--exclusive", "--nice=100", "all_reduce_perf"]
    under = launch.launch_argv(dict(spec, launcher="torchrun", torchrun_under_srun=True), ["bench.py"])
    assert under[7:10] == ["--exclusive", "--nice=100", "torchrun"]
    assert "--nice" not in " ".join(launch.srun_argv(["n1"], 1, nice=0))  # 0: none, as for sbatch
    for bad in (True, "10", 2.5):
        with pytest.raises(launch.LaunchError, match="srun's --nice takes a whole number"):
            launch.srun_argv(["n1"], 1, nice=bad)


@pytest.mark.parametrize(
    ("hosts", "needle"), [([], "at least one host"), (["n1", "n1"], "name a node twice"), (["a b"], "odd")]
)
def test_hosts_are_checked(hosts, needle):
    with pytest.raises(launch.LaunchError, match=needle if needle != "odd" else "cannot go into a launcher"):
        launch.check_hosts(hosts)


def test_mpirun_argv_exports_every_variable_and_maps_ranks_per_node():
    argv = launch.mpirun_argv(
        "/tmp/hf", 2, 8, env_names={"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_DEBUG": "INFO"}, as_root=True
    )
    assert argv == [
        "mpirun", "--allow-run-as-root", "--hostfile", "/tmp/hf", "-np", "16", "--map-by", "ppr:8:node",
        "--bind-to", "none", "-x", "NCCL_DEBUG", "-x", "NCCL_IB_HCA",
    ]  # fmt: skip
    assert launch.hostfile_text(["n1", "n2"], 8) == "n1 slots=8\nn2 slots=8\n"


def test_torchrun_argv_alone_and_under_srun():
    spec = {"launcher": "torchrun", "hosts": ["n1", "n2"], "ranks_per_node": 8, "rdzv_id": "r1"}
    assert launch.launch_argv(spec, ["bench.py", "{}"]) == [
        "torchrun", "--nnodes=2", "--nproc-per-node=8", "--rdzv-backend=c10d", "--rdzv-endpoint=n1:29400",
        "--rdzv-id=r1", "bench.py", "{}",
    ]  # fmt: skip
    under = launch.launch_argv(dict(spec, torchrun_under_srun=True, srun_mpi="pmi2"), ["bench.py"])
    assert under[:5] == ["srun", "--mpi=pmi2", "--nodes=2", "--ntasks-per-node=1", "--nodelist=n[1-2]"]
    assert under[7:9] == ["torchrun", "--nnodes=2"]
    with pytest.raises(launch.LaunchError, match="host:port"):
        launch.torchrun_argv(2, 8, "n1", "r")


def test_run_env_adds_nccl_debug_and_refuses_line_breaks():
    assert launch.run_env({"NCCL_IB_HCA": "=mlx5_0:1", "X": True, "Y": None}) == {
        "NCCL_IB_HCA": "=mlx5_0:1", "X": "1", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,NET",
    }  # fmt: skip
    assert launch.run_env({}, nccl_debug="") == {}
    with pytest.raises(launch.LaunchError, match="line break"):
        launch.run_env({"NCCL_X": "a\nb"})


def _two_ranks(mpirun, tmp_path):
    """(the finished launcher, what each rank wrote, in rank order)."""
    ranks_dir = tmp_path / "ranks"
    ranks_dir.mkdir()
    hostfile = tmp_path / "hostfile"
    hostfile.write_text(launch.hostfile_text([socket.gethostname()], 2))
    env = dict(os.environ, NCCL_IB_HCA="=mlx5_0:1", OMPI_MCA_plm="isolated")
    argv = launch.launch_argv(
        {"launcher": "mpirun", "hosts": [socket.gethostname()], "ranks_per_node": 2, "executable": mpirun,
         "as_root": os.geteuid() == 0},
        [sys.executable, "-c", WRITE_RANK, str(ranks_dir)],
        env_names={"NCCL_IB_HCA": "=mlx5_0:1"},
        hostfile=str(hostfile),
    )  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    return done, sorted(path.read_text() for path in ranks_dir.iterdir())


def test_real_open_mpi_runs_the_argv(tmp_path):
    mpirun = shutil.which("mpirun")
    version = (
        subprocess.run([mpirun, "--version"], capture_output=True, text=True, check=False).stdout if mpirun else ""
    )
    if "Open MPI" not in version:
        pytest.skip("Open MPI's mpirun is not installed (scripts/bootstrap.sh host installs openmpi-bin)")
    done, ranks = _two_ranks(mpirun, tmp_path)
    assert done.returncode == 0, done.stderr
    assert ranks == [
        "rank=0 size=2 local=0 hca==mlx5_0:1", "rank=1 size=2 local=1 hca==mlx5_0:1",
    ]  # fmt: skip


def test_lab_mpirun_simulator_takes_the_same_argv(tmp_path):
    done, ranks = _two_ranks(str(LAB / "mpirun_sim.py"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert ranks == [
        "rank=0 size=2 local=0 hca==mlx5_0:1", "rank=1 size=2 local=1 hca==mlx5_0:1",
    ]  # fmt: skip
    refused = subprocess.run([sys.executable, str(LAB / "mpirun_sim.py"), "--npernode", "2", "true"],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert refused.returncode == 1 and 'unknown option "--npernode"' in refused.stderr
