"""ibtune-sweep's executor when Slurm refuses it half-way: what it started or changed is undone (the probation
node drained again with its own reason, the reservation deleted, the pass directory removed). Slurm's answers are
the real captured outputs (tests/fixtures/slurm/); the whole sweep on the real slurmctld is molecule slurm's case."""

import json
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher, sweep, sweep_run

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "slurm"


def captured(name):
    lines = (FIXTURES / "launcher" / name).read_text().splitlines()
    return int(lines[-1][4:-1]), "\n".join(lines[1:-1]) + "\n"


class Slurm(object):
    """Answers each command with a captured output; records every argv."""

    def __init__(self):
        self.calls = []
        show = (FIXTURES / "show-node-ours-drained.txt").read_text()
        # n2 back in service (the admin's drain lifted), so n1 (ours) is on probation with n2 as its partner
        self.show = show.replace(
            "State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-01T08:16:32 SlurmdStartTime=2026-12-01T08:24:52 LastBusyTime=2026-12-01T08:24:52 CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=admin: replacing DIMM B2 [root@2026-12-01T08:24:59]",  # noqa: E501
            "State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-01T08:16:32 SlurmdStartTime=2026-12-01T08:24:52 LastBusyTime=2026-12-01T08:24:52 CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s",  # noqa: E501
        )

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:2] == ["scontrol", "show"]:
            return 0, self.show, ""
        if argv[0] == "sbatch":
            rc, text = captured("sbatch-bad-partition")
            return rc, "", text
        return 0, "", ""  # scontrol create/update/delete reservation: silent on success


def test_a_refused_job_undoes_the_reservation_the_probation_undrain_and_the_pass_directory(tmp_path):
    cfg = sweep.load_config(
        {
            "partition": "debug",
            "shared_dir": str(tmp_path / "shared"),
            "rails": [{"rail": "r0", "device": "mlx5_0", "port": 1, "rate_gbps": 400}],
            "max_share": 1.0,
            "state_dir": str(tmp_path / "state"),
            "budget_s": 120,
            "duration_s": 2,
        }
    )
    slurm = Slurm()
    history = sweep.empty_history()
    with pytest.raises(launcher.SlurmError, match="invalid partition specified: nosuch"):
        sweep_run.Sweep(cfg, run=slurm, sleep=lambda _s: None, log=lambda _t: None).sweep(history)
    words = [" ".join(a) for a in slurm.calls]
    reserve = [w for w in words if w.startswith("scontrol create reservation")]
    assert reserve and "Nodes=ibt-slurm-n[1-2]" in reserve[0] and "Users=root" in reserve[0]
    assert "scontrol update NodeName=ibt-slurm-n1 State=RESUME" in words
    # undone, in this order: n1 drained again exactly as it was, then the reservation ends
    redrain = words.index(
        "scontrol update NodeName=ibt-slurm-n1 State=DRAIN "
        "Reason=ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"
    )
    delete = [i for i, w in enumerate(words) if w.startswith("scontrol delete ReservationName=ibtune-sweep-")]
    assert delete and redrain < delete[0]
    assert list((tmp_path / "shared").iterdir()) == []  # the pass directory and its run directory are gone


def test_nothing_to_sweep_runs_nothing_and_records_why(tmp_path):
    cfg = sweep.load_config(
        {
            "partition": "debug",
            "shared_dir": str(tmp_path),
            "rails": [{"rail": "r0", "device": "mlx5_0"}],
            "max_share": 0.34,
            "state_dir": str(tmp_path / "state"),
        }
    )
    slurm = Slurm()
    run = sweep_run.Sweep(cfg, run=slurm, log=lambda _t: None).sweep(sweep.empty_history())
    assert run["outcome"] == "none" and "at most 1 of its 3 nodes" in run["why"]
    assert [a[:2] for a in slurm.calls] == [["scontrol", "show"]]


def test_check_mode_of_the_program_reads_the_config_and_the_budget(tmp_path, capsys):
    path = tmp_path / "sweep.json"
    path.write_text(
        json.dumps(
            {
                "partition": "p",
                "shared_dir": "/s",
                "rails": [{"rail": "r", "device": "d"}],
                "budget_s": 120,
                "duration_s": 2,
                "rounds": 3,
            }
        )
    )
    assert sweep_run.main(["--config", str(path), "--check"]) == 0
    assert (
        "up to 3 round(s) of 2 s tests, 0 quick check(s), within 120 s (sbatch --time=00:02:00)"
        in capsys.readouterr().out
    )
    path.write_text(json.dumps({"partition": "p", "shared_dir": "/s", "rails": [], "nice": 1}))
    assert sweep_run.main(["--config", str(path), "--check"]) == 1
    assert "rails is empty" in capsys.readouterr().err
