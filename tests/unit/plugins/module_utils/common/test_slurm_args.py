"""The words of a Slurm allocation, shared by the sbatch of a pass (slurm/launcher) and NCCL's srun (nccl/launch)."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["node%02d" % i for i in range(1, 17)], "node[01-16]"),
        (["node01", "node02", "node04", "node10"], "node[01-02,04,10]"),
        (["a1", "a2", "a10"], "a10,a[1-2]"),
        (["login"], "login"),
        (["gpu-a1", "gpu-b1"], "gpu-a1,gpu-b1"),
        (["ibt-slurm-n2", "ibt-slurm-n1", "ibt-slurm-n2"], "ibt-slurm-n[1-2]"),
    ],
)
def test_compress_hostlist(names, expected):
    assert slurm_args.compress_hostlist(names) == expected


@pytest.mark.parametrize(
    ("minutes", "text"),
    [(1, "00:01:00"), (10, "00:10:00"), (61, "01:01:00"), (1439, "23:59:00"), (1440, "1-00:00:00")]
    + [(2941, "2-01:01:00")],
)
def test_time_text(minutes, text):
    assert slurm_args.time_text(minutes) == text


def test_time_text_refuses_less_than_a_minute():
    with pytest.raises(ValueError, match="at least 1 minute, got 0"):
        slurm_args.time_text(0)


@pytest.mark.parametrize("option", slurm_args.NAME_OPTIONS)
def test_a_bad_name_is_refused_naming_the_option_the_value_and_the_fix(option):
    with pytest.raises(ValueError) as caught:
        slurm_args.allocation_options({option: "gpu; rm -rf /"})
    assert str(caught.value) == (
        "%s='gpu; rm -rf /' is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show" % option
    )


def test_a_trailing_newline_is_no_slurm_name():
    with pytest.raises(ValueError, match=r"reservation='maint\\n' is not a Slurm name"):
        slurm_args.check_name("reservation", "maint\n")


def test_good_names_and_empty_ones_pass():
    for value in ("gpu", "ops.team+1", "fabric_maint-2", "", None):
        slurm_args.check_name("partition", value)


def test_allocation_options_every_option_in_order():
    spec = {
        "partition": "gpu",
        "qos": "validation",
        "account": "ops",
        "reservation": "fabric_maint",
        "exclusive": True,
        "nice": 100,
        "job_name": "ignored",
    }
    assert slurm_args.allocation_options(spec, time_limit=90) == [
        "--partition=gpu",
        "--qos=validation",
        "--account=ops",
        "--reservation=fabric_maint",
        "--time=01:30:00",
        "--exclusive",
        "--nice=100",
    ]


def test_allocation_options_only_what_is_set():
    assert slurm_args.allocation_options({}) == []
    assert slurm_args.allocation_options({"partition": "", "qos": None, "exclusive": False, "nice": 0}) == []
    assert slurm_args.allocation_options({"qos": "low"}, time_limit="1-00:00:00") == [
        "--qos=low",
        "--time=1-00:00:00",
    ]


def test_allocation_options_time_in_minutes_is_checked():
    with pytest.raises(ValueError, match="at least 1 minute"):
        slurm_args.allocation_options({}, time_limit=-5)
