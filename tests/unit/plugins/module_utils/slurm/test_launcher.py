"""The Slurm launcher on the real outputs of Slurm 22.05 (captured from molecule slurm's slurmctld,
tests/fixtures/slurm/launcher/SOURCE.md) and sacct lines of a Slurm with accounting."""

import shlex
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "slurm" / "launcher"


def captured(name):
    """(command words, output, rc) of one captured call."""
    lines = (FIXTURES / name).read_text().splitlines()
    assert lines[0].startswith("$ ") and lines[-1].startswith("[rc=")
    return lines[0][2:].split(), "\n".join(lines[1:-1]) + "\n", int(lines[-1][4:-1])


def replay(*names):
    """run(argv) answering each Slurm command with its captured output (the job ids are the captured ones)."""
    answers = {}
    for name in names:
        words, out, rc = captured(name)
        answers[words[0]] = (rc, out if rc == 0 else "", out if rc != 0 else "")
    calls = []

    def run(argv):
        calls.append(argv)
        return answers.get(argv[0], (1, "", "%s: not captured" % argv[0]))

    run.calls = calls
    return run


def test_sbatch_parsable_gives_the_job_id_and_a_refusal_its_own_words():
    _words, out, rc = captured("sbatch-ok")
    assert launcher.parse_sbatch(out, "", rc) == "6"
    assert launcher.parse_sbatch("42;cluster1\n") == "42"
    _words, err, rc = captured("sbatch-bad-partition")
    with pytest.raises(
        launcher.SlurmError, match="sbatch refused the pass: sbatch: error: invalid partition specified"
    ):
        launcher.parse_sbatch("", err, rc)
    with pytest.raises(launcher.SlurmError, match="printed no job id"):
        launcher.parse_sbatch("Submitted batch job 6\n")


@pytest.mark.parametrize(
    "name, job_id, state, reason",
    [
        ("squeue-running", "6", "RUNNING", None),
        ("squeue-cancelled", "6", "CANCELLED", None),
        ("squeue-pending", "7", "PENDING", "ReqNodeNotAvail, UnavailableNodes:ibt-slurm-n3"),
        ("squeue-completed", "8", "COMPLETED", None),
        ("squeue-preempted", "9", "FAILED", "NonZeroExitCode"),
        ("squeue-timeout", "11", "TIMEOUT", "TimeLimit"),
    ],
)
def test_squeue_with_states_all_reports_every_state(name, job_id, state, reason):
    _words, out, rc = captured(name)
    job = launcher.parse_squeue(out, job_id)
    assert rc == 0 and (job["state"], job["reason"]) == (state, reason)
    assert launcher.is_terminal(job) == (state not in ("RUNNING", "PENDING"))


def test_squeue_of_a_job_slurm_forgot_is_none():
    _words, out, rc = captured("squeue-unknown")
    assert rc == 1 and "Invalid job id specified" in out
    assert launcher.parse_squeue("", "999999") is None


def test_scontrol_oneliner_fields_and_the_preemption_slurm_records_as_failed():
    _words, out, _rc = captured("scontrol-preempted")
    fields = launcher.parse_scontrol_job(out)
    assert fields["JobName"] == "ibtune-capture-sweep" and fields["Partition"] == "sweep"
    assert fields["AllocNode:Sid"].startswith("ibt-slurm-ctl:")  # keys with ':' are fields too
    job = launcher.job_from_scontrol(fields)
    assert job["state"] == "FAILED" and job["exit_code"] == "143:0" and job["preempted_at"]
    assert launcher.job_words(job) == "the Slurm job 9 was preempted by a higher-priority job"
    _words, out, _rc = captured("scontrol-cancelled")
    job = launcher.job_from_scontrol(launcher.parse_scontrol_job(out))
    assert (job["state"], job["exit_code"], job["preempted_at"]) == ("CANCELLED", "0:15", None)
    _words, out, _rc = captured("scontrol-unknown")
    assert launcher.parse_scontrol_job(out) is None


def test_query_reads_squeue_then_scontrol_for_an_ended_job():
    run = replay("squeue-preempted", "scontrol-preempted", "sacct-disabled")
    job = launcher.query(run, "9")
    assert job["source"] == "scontrol" and job["preempted_at"]
    assert run.calls[0][:3] == ["squeue", "--states=all", "--jobs=9"]
    assert [c[0] for c in run.calls] == ["squeue", "scontrol"]


def test_query_of_a_running_job_asks_only_squeue():
    run = replay("squeue-running")
    assert launcher.query(run, "6")["state"] == "RUNNING" and len(run.calls) == 1


def test_query_falls_back_to_sacct_and_says_unknown_without_accounting():
    run = replay("squeue-unknown", "scontrol-unknown", "sacct-disabled")
    job = launcher.query(run, "999999")
    assert job["state"] == "UNKNOWN" and [c[0] for c in run.calls] == ["squeue", "scontrol", "sacct"]


GC3PIE_FIELDS = ("JobID", "ExitCode", "State", "NCPUS", "Elapsed", "TotalCPU", "Submit", "Start", "End")


@pytest.mark.parametrize(
    "job_id, state, words",
    [
        ("123", "CANCELLED", "the Slurm job 123 was cancelled (by 1000)"),
        ("124", "NODE_FAIL", "the Slurm job 124 lost a node (NODE_FAIL)"),
        ("125", "TIMEOUT", "the Slurm job 125 reached its time limit"),
        ("126", "RUNNING", "the Slurm job 126 ended in state RUNNING"),
    ],
)
def test_sacct_allocation_lines_of_a_slurm_with_accounting(job_id, state, words):
    text = (FIXTURES / "sacct-gc3pie.txt").read_text()
    job = launcher.parse_sacct(text, job_id, GC3PIE_FIELDS)
    assert job["state"] == state and launcher.job_words(job) == words
    # the allocation, never its steps (123.batch is CANCELLED without "by")
    assert job["job_id"] == job_id


def test_sbatch_argv_is_an_argument_list_with_the_options_the_real_sbatch_accepted():
    spec = {
        "pass_dir": "/shared/ibtune/run 1/pass1",
        "script": "/shared/ibtune/run 1/pass1/job.sh",
        "nodes": ["gpu003", "gpu001", "gpu002", "gpu010"],
        "job_name": "ibtune-pass1",
        "budget_s": 250,
        "partition": "gpu",
        "qos": "validation",
        "account": "ops",
        "reservation": "fabric_maint",
        "exclusive": True,
        "nice": 100,
        "extra_args": ["--comment=ibtune"],
    }
    argv = launcher.sbatch_argv(spec)
    assert argv[:2] == ["sbatch", "--parsable"]
    assert "--nodes=4" in argv and "--nodelist=gpu[001-003,010]" in argv
    assert "--time=00:06:00" in argv  # 250 s + 60 s start margin, rounded up to minutes
    for word in (
        "--partition=gpu",
        "--qos=validation",
        "--account=ops",
        "--reservation=fabric_maint",
        "--exclusive",
        "--nice=100",
        "--comment=ibtune",
        "--no-requeue",
    ):
        assert word in argv
    assert argv[-1] == spec["script"]
    accepted, _out, _rc = captured("sbatch-ok")
    options = set(a.split("=")[0] for a in accepted if a.startswith("--"))
    base = set(
        a.split("=")[0]
        for a in launcher.sbatch_argv(
            dict(
                spec,
                partition=None,
                qos=None,
                account=None,
                reservation=None,
                exclusive=False,
                nice=None,
                extra_args=[],
            )
        )
        if a.startswith("--")
    )
    assert base <= options, "an option the captured, accepted sbatch call did not have: %s" % (base - options)


def test_a_bad_slurm_name_is_refused_with_the_option():
    with pytest.raises(ValueError, match="partition='gpu; rm' is not a Slurm name"):
        launcher.sbatch_argv(
            {"pass_dir": "/p", "script": "/p/job.sh", "nodes": ["a"], "budget_s": 1, "partition": "gpu; rm"}
        )
    with pytest.raises(ValueError, match="at least one node"):
        launcher.sbatch_argv({"pass_dir": "/p", "script": "/p/job.sh", "nodes": [], "budget_s": 1})


def test_job_script_quotes_every_word_of_its_one_step():
    text = launcher.job_script(
        {
            "nodes": ["a", "b"],
            "runner": "/usr/local/libexec/ibtune-schedule",
            "pass_dir": "/shared/run 1/pass1",
            "srun_args": ["--mpi=none"],
        }
    )
    lines = text.splitlines()
    assert lines[0] == "#!/bin/sh" and lines[-1].startswith("exec ")
    words = shlex.split(lines[-1])[1:]
    assert words == [
        "srun",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=0",
        "--no-kill",
        "--mpi=none",
        "/usr/local/libexec/ibtune-schedule",
        "--pass-dir",
        "/shared/run 1/pass1",
    ]


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("00:05:00", 300),
        ("5:00", 300),
        ("1:18", 78),
        ("30", 1800),
        ("1-00:00:00", 86400),
        ("2-01", 176400),
        ("UNLIMITED", None),
    ],
)
def test_slurm_times(text, seconds):
    assert launcher.parse_duration_s(text) == seconds


def test_time_limit_rounds_up_to_minutes_and_days():
    assert launcher.time_limit(0) == "00:01:00"
    assert launcher.time_limit(61, margin_s=0) == "00:02:00"
    assert launcher.time_limit(86400) == "1-00:01:00"
    assert launcher.parse_duration_s(launcher.time_limit(4000)) >= 4000 + launcher.START_MARGIN_S


def test_next_step():
    pending = {"state": "PENDING"}
    running = {"state": "RUNNING"}
    assert launcher.next_step(pending, 10, None, 600, 300) == "wait"
    assert launcher.next_step(pending, 601, None, 600, 300) == "cancel_pending"
    assert launcher.next_step(running, 900, 100, 600, 300) == "wait"
    assert launcher.next_step(running, 900, 301, 600, 300) == "cancel_overdue"
    assert launcher.next_step({"state": "TIMEOUT"}, 900, 301, 600, 300) == "done"


def test_missing_reason_says_what_happened_to_the_job():
    _words, out, _rc = captured("scontrol-timeout")
    timeout = launcher.job_from_scontrol(launcher.parse_scontrol_job(out))
    assert launcher.missing_reason(timeout) == (
        "no result: the Slurm job 11 reached its time limit (00:01:00) before this side ran"
    )
    _words, out, _rc = captured("scontrol-cancelled")
    cancelled = launcher.job_from_scontrol(launcher.parse_scontrol_job(out))
    assert launcher.missing_reason(cancelled, {"stopped": "SIGTERM"}) == (
        "no result: the Slurm job 6 was cancelled and stopped this host's runner (SIGTERM) before this side ran"
    )
    _words, out, _rc = captured("scontrol-completed")
    completed = launcher.job_from_scontrol(launcher.parse_scontrol_job(out))
    assert "wrote no result for this side (see the job's output file, slurm-8.out)" in launcher.missing_reason(
        completed
    )
    _words, out, _rc = captured("scontrol-pending")
    pending = launcher.job_from_scontrol(launcher.parse_scontrol_job(out))
    text = launcher.never_started_text(pending, 600)
    assert text == (
        "the Slurm job 7 was still PENDING (ReqNodeNotAvail,_UnavailableNodes:ibt-slurm-n3) after 600 s, so the "
        "controller cancelled it"
    )
    assert launcher.missing_reason(pending, never_started=text) == "no result: " + text


def test_progress_text_before_and_while_the_runners_report():
    assert launcher.progress_text({"job_id": "7", "state": "PENDING", "reason": "Resources"}, None, "pass 1") == (
        "pass 1: Slurm job 7 PENDING (Resources)"
    )
    line = "pass 1: round 2/7, 0 sides failing, ETA 50 s (2 hosts reporting)"
    assert launcher.progress_text({"job_id": "7", "state": "RUNNING"}, line, "pass 1") == line + " (Slurm job 7)"


def test_sides_of_pass_adds_exactly_the_missing_sides_with_the_jobs_reason():
    slices = {
        "a": [
            {"pass": 1, "round": 1, "role": "server", "host": "a", "peer": "b", "rail": "r0"},
            {"pass": 1, "round": 2, "role": "client", "host": "a", "peer": "c", "rail": "r0", "address": "c"},
        ],
        "b": [{"pass": 1, "round": 1, "role": "client", "host": "b", "peer": "a", "rail": "r0", "address": "a"}],
    }
    back = {"a": [dict(slices["a"][0], failure_kind=None)], "b": [dict(slices["b"][0], failure_kind=None)]}
    job = {"job_id": "9", "state": "FAILED", "preempted_at": "2026-12-02T00:36:47"}
    sides, missing = launcher.sides_of_pass(slices, back, job, {"a": {"stopped": "SIGTERM"}})
    assert missing == 1 and len(sides) == 3
    lost = [s for s in sides if s["failure_kind"] == "no_result"]
    assert lost[0]["round"] == 2 and lost[0]["failure"] == (
        "no result: the Slurm job 9 was preempted by a higher-priority job and stopped this host's runner (SIGTERM) "
        "before this side ran"
    )
