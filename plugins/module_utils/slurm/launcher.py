# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A validation pass as ONE Slurm job: the submission, the job's state, and what a lost side says.

The controller plans and slices the pass (validate/plan.py) and writes the pass directory
(validate/sidefiles.py) on the cluster's shared filesystem; this module turns it into one batch job
whose only step runs the standalone schedule runner (``ibtune-schedule``, validate/runner.py) once on
every node of the pass, and reads the job's state back from Slurm:

- ``sbatch_argv(spec)`` / ``job_script(spec)``: the submission as an argument list and a batch script
  (every word quoted: the script is the only shell text, and it is generated);
- ``parse_sbatch``, ``parse_squeue``, ``parse_scontrol_job``, ``parse_sacct``: the real outputs of Slurm
  22.05's sbatch --parsable, squeue, scontrol show job --oneliner and sacct --parsable2;
- ``submit``, ``query``, ``cancel``: the same calls through an injected ``run(argv) -> (rc, out, err)``,
  so the submit host's module and the sweep (which runs there by itself) share them;
- ``missing_reason(job, done)``: the sentence a side that never came back carries (``no_result``): the job
  was cancelled, preempted, timed out, lost a node, or never started.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shlex

from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import progress as _progress
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import schedule as _schedule
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles as _sidefiles

# Job states (squeue %T, scontrol JobState, sacct State) that end a job; anything else is still on its way.
TERMINAL_STATES = (
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "REVOKED",
    "SPECIAL_EXIT",
    "TIMEOUT",
)
# Seconds the job may need beyond the pass's budget before its time limit stops it (start, the step).
START_MARGIN_S = 60
SQUEUE_FORMAT = "%i|%T|%r|%M|%l|%D|%N"  # id|state|reason|elapsed|time limit|node count|nodes
SACCT_FIELDS = ("JobID", "JobName", "State", "ExitCode", "Elapsed", "NodeList")
# scontrol's oneliner: "Key=value Key=value ..."; keys like MCS_label, CPUs/Task or ReqB:S:C:T
_FIELD_RE = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_:/]*)=")

_WHY = {
    "CANCELLED": "was cancelled%s",
    "PREEMPTED": "was preempted by a higher-priority job",
    "TIMEOUT": "reached its time limit%s",
    "NODE_FAIL": "lost a node (NODE_FAIL)",
    "BOOT_FAIL": "could not boot its nodes (BOOT_FAIL)",
    "OUT_OF_MEMORY": "ran out of memory (OUT_OF_MEMORY)",
    "DEADLINE": "passed its deadline (DEADLINE)",
    "FAILED": "failed (exit code %s)",
    "REVOKED": "was revoked (REVOKED)",
    "SPECIAL_EXIT": "ended with SPECIAL_EXIT",
}


class SlurmError(Exception):
    """A Slurm command refused or failed; the message is one sentence with Slurm's own words."""


# --- the submission --------------------------------------------------------------------------------


def time_limit(budget_s, margin_s=START_MARGIN_S):
    """sbatch --time for a pass budget: whole minutes, rounded up (Slurm counts minutes), as
    [D-]HH:MM:00."""
    minutes = int(-(-(float(budget_s) + float(margin_s)) // 60))
    return _slurm_args.time_text(max(1, minutes))


def parse_duration_s(text):
    """Seconds of a Slurm time ("30", "5:00", "1:02:03", "2-00", "2-01:00", "2-01:00:00"); None for
    UNLIMITED/INFINITE/empty. ValueError names the format."""
    text = (text or "").strip()
    if text.upper() in ("", "UNLIMITED", "INFINITE", "NONE", "N/A"):
        return None
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        days = int(day_text)
        parts = [int(p) for p in text.split(":")] + [0, 0]
        hours, minutes, seconds = parts[0], parts[1], parts[2]
    else:
        parts = [int(p) for p in text.split(":")]
        if len(parts) == 1:
            hours, minutes, seconds = 0, parts[0], 0
        elif len(parts) == 2:
            hours, minutes, seconds = 0, parts[0], parts[1]
        elif len(parts) == 3:
            hours, minutes, seconds = parts
        else:
            raise ValueError("%r is not a Slurm time ([D-]HH:MM:SS, MM:SS or minutes)" % text)
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def sbatch_argv(spec):
    """The sbatch call of a pass, as an argument list (never a shell string).

    ``spec``: pass_dir, script (path of job_script's text), nodes (Slurm node names), job_name,
    time_limit (or budget_s), and optionally partition, qos, account, reservation, exclusive, nice,
    extra_args (sbatch arguments, appended as they are), sbatch (the program).
    """
    nodes = list(spec["nodes"])
    if not nodes:
        raise ValueError("a pass needs at least one node to submit")
    # the names are checked before anything else is read; --time is the pass's own, from its budget
    options = _slurm_args.allocation_options(spec)
    limit = spec.get("time_limit") or time_limit(spec["budget_s"])
    argv = [
        spec.get("sbatch") or "sbatch",
        "--parsable",
        "--job-name=%s" % (spec.get("job_name") or "ibtune-pass"),
        "--nodes=%d" % len(nodes),
        "--nodelist=%s" % _slurm_args.compress_hostlist(nodes),
        "--ntasks-per-node=1",
        "--time=%s" % limit,
        # a pass that was stopped is reported, not run again later behind the controller's back
        "--no-requeue",
        "--chdir=%s" % spec["pass_dir"],
        "--output=%s/slurm-%%j.out" % spec["pass_dir"],
    ]
    argv.extend(options)
    argv.extend(str(a) for a in spec.get("extra_args") or [])
    argv.append(spec["script"])
    return argv


def job_script(spec):
    """The batch script: one srun step, one task per node, each running the schedule runner.

    --kill-on-bad-exit=0 and --no-kill: a node whose runner fails or dies costs only that node's sides,
    the other nodes finish their rounds.
    """
    step = [
        spec.get("srun") or "srun",
        "--nodes=%d" % len(spec["nodes"]),
        "--ntasks=%d" % len(spec["nodes"]),
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=0",
        "--no-kill",
    ]
    step.extend(str(a) for a in spec.get("srun_args") or [])
    step.extend([spec["runner"], "--pass-dir", spec["pass_dir"]])
    return "\n".join(
        [
            "#!/bin/sh",
            "# ibtune.fabric: %s as one Slurm job (generated by the slurm launcher; edit nothing here)"
            % (spec.get("job_name") or "a validation pass"),
            "exec " + " ".join(shlex.quote(word) for word in step),
            "",
        ]
    )


# --- what Slurm says ------------------------------------------------------------------------------


def _first_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else ""


def parse_sbatch(stdout, stderr="", rc=0):
    """The job id from ``sbatch --parsable`` ("42" or "42;cluster"); SlurmError with sbatch's words."""
    if rc != 0:
        raise SlurmError("sbatch refused the pass: %s" % (_first_line(stderr) or _first_line(stdout) or "rc %s" % rc))
    first = _first_line(stdout)
    job_id = first.split(";", 1)[0]
    if not job_id.isdigit():
        raise SlurmError("sbatch printed no job id (%r): is this Slurm's sbatch --parsable?" % first)
    return job_id


def _state_word(text):
    """'CANCELLED by 0' -> 'CANCELLED'; 'CANCELLED+' -> 'CANCELLED'."""
    word = (text or "").split()[0] if (text or "").split() else ""
    return word.rstrip("+").upper()


def parse_squeue(text, job_id):
    """The job's record from ``squeue --jobs=ID --noheader --format=SQUEUE_FORMAT``, or None when squeue no
    longer lists it."""
    for line in (text or "").splitlines():
        fields = line.strip().split("|")
        if len(fields) < 7 or fields[0] != str(job_id):
            continue
        return {
            "job_id": fields[0],
            "state": _state_word(fields[1]),
            "reason": None if fields[2] in ("None", "") else fields[2],
            "elapsed": fields[3],
            "time_limit": fields[4],
            "node_count": fields[5],
            "nodes": fields[6],
            "source": "squeue",
        }
    return None


def parse_scontrol_job(text):
    """``scontrol show job --oneliner ID`` -> {key: value} (None when Slurm no longer knows the job)."""
    line = _first_line(text)
    if not line.startswith("JobId="):
        return None
    return split_fields(line)


def split_fields(line):
    """'JobId=42 JobName=a b JobState=RUNNING' -> {JobId: '42', JobName: 'a b', JobState: 'RUNNING'}: a value
    runs to the next Key= (so a job name or comment with spaces stays whole)."""
    marks = list(_FIELD_RE.finditer(line))
    fields = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(line)
        fields[mark.group(1)] = line[mark.end() : end].strip()
    return fields


def job_from_scontrol(fields):
    if not fields:
        return None
    return {
        "job_id": fields.get("JobId"),
        "state": _state_word(fields.get("JobState")),
        "reason": None if fields.get("Reason") in (None, "None") else fields.get("Reason"),
        "elapsed": fields.get("RunTime"),
        "time_limit": fields.get("TimeLimit"),
        "node_count": fields.get("NumNodes"),
        "nodes": fields.get("NodeList"),
        "exit_code": fields.get("ExitCode"),
        # a job preempted in CANCEL mode that exits on the SIGTERM within GraceTime ends FAILED (or COMPLETED)
        # with PreemptTime set (Slurm 22.05, seen here): the time, not the state, says it was preempted
        "preempted_at": None if fields.get("PreemptTime") in (None, "", "None") else fields.get("PreemptTime"),
        "source": "scontrol",
    }


def parse_sacct(text, job_id, fields=SACCT_FIELDS):
    """The job's allocation line of ``sacct --jobs=ID --noheader --parsable2 --format=<fields>`` (the job
    steps, ``ID.batch``, ``ID.0``, left out), or None. ``fields``: the --format names, in order."""
    names = [f.lower() for f in fields]
    for line in (text or "").splitlines():
        values = line.strip().split("|")
        if len(values) < len(names):
            continue
        row = dict(zip(names, values))
        if row.get("jobid") != str(job_id):
            continue
        return {
            "job_id": row["jobid"],
            "state": _state_word(row.get("state")),
            "state_text": row.get("state"),
            "exit_code": row.get("exitcode"),
            "elapsed": row.get("elapsed"),
            "nodes": row.get("nodelist"),
            "reason": None,
            "source": "sacct",
        }
    return None


def is_terminal(job):
    return bool(job) and job.get("state") in TERMINAL_STATES


# --- the calls, through an injected run(argv) -> (rc, stdout, stderr) -------------------------------


def submit(run, spec):
    """Submit the pass; returns the job id (SlurmError when sbatch refuses)."""
    rc, out, err = run(sbatch_argv(spec))
    return parse_sbatch(out, err, rc)


def query(run, job_id, commands=None):
    """The job's record: squeue while Slurm keeps it in memory, then scontrol, then sacct (accounting);
    {state: UNKNOWN} when none of them knows it any more."""
    commands = commands or {}
    rc, out, _err = run(
        [
            commands.get("squeue") or "squeue",
            # without --states=all squeue leaves out a job that ended, even when asked for it by id
            "--states=all",
            "--jobs=%s" % job_id,
            "--noheader",
            "--format=" + SQUEUE_FORMAT,
        ]
    )
    job = parse_squeue(out, job_id) if rc == 0 else None
    if job is None or is_terminal(job):
        rc, out, _err = run([commands.get("scontrol") or "scontrol", "show", "job", "--oneliner", str(job_id)])
        detail = job_from_scontrol(parse_scontrol_job(out)) if rc == 0 else None
        job = detail or job
    if job is None:
        rc, out, _err = run(
            [
                commands.get("sacct") or "sacct",
                "--jobs=%s" % job_id,
                "--allocations",
                "--noheader",
                "--parsable2",
                "--format=" + ",".join(SACCT_FIELDS),
            ]
        )
        job = parse_sacct(out, job_id) if rc == 0 else None
    return job or {"job_id": str(job_id), "state": "UNKNOWN", "reason": None, "source": None}


def cancel_argv(job_id, scancel="scancel", signal=None):
    argv = [scancel]
    if signal:
        argv.append("--signal=%s" % signal)
    argv.append(str(job_id))
    return argv


def cancel(run, job_id, commands=None):
    """scancel the job (ours: we submitted it); a job that already ended is not an error."""
    rc, out, err = run(cancel_argv(job_id, (commands or {}).get("scancel") or "scancel"))
    text = _first_line(err) or _first_line(out)
    if rc != 0 and "already completing or completed" not in text and "Invalid job id" not in text:
        raise SlurmError("scancel %s failed: %s" % (job_id, text or "rc %s" % rc))


# --- a side that did not come back -----------------------------------------------------------------


def job_words(job):
    """'the Slurm job 42 was preempted by a higher-priority job' from a job record."""
    state = (job or {}).get("state") or "UNKNOWN"
    if (job or {}).get("preempted_at"):
        state = "PREEMPTED"
    job_id = (job or {}).get("job_id") or "?"
    pattern = _WHY.get(state)
    if state == "CANCELLED":
        text = pattern % ((" (%s)" % job["state_text"].split(None, 1)[1]) if " " in job.get("state_text", "") else "")
    elif state == "TIMEOUT":
        text = pattern % ((" (%s)" % job["time_limit"]) if job.get("time_limit") else "")
    elif state == "FAILED":
        text = pattern % (job.get("exit_code") or "?")
    elif pattern:
        text = pattern
    elif state == "COMPLETED":
        text = "completed"
    else:
        text = "ended in state %s" % state
    return "the Slurm job %s %s" % (job_id, text)


def missing_reason(job, done=None, never_started=None):
    """Why a host's side did not come back, in one sentence.

    ``done``: the host's done file, when its runner wrote one (stopped by which signal); ``never_started``:
    a sentence when the controller gave up on a job that never left PENDING.
    """
    if never_started:
        return "no result: %s" % never_started
    words = job_words(job)
    if done and done.get("stopped"):
        return "no result: %s and stopped this host's runner (%s) before this side ran" % (words, done["stopped"])
    if (job or {}).get("state") == "COMPLETED":
        return (
            "no result: %s, but this host's runner wrote no result for this side "
            "(see the job's output file, slurm-%s.out)" % (words, (job or {}).get("job_id"))
        )
    return "no result: %s before this side ran" % words


# --- the submit host's side of a pass (module slurm_job, and the sweep) ------------------------------

JOB_SCRIPT = "job.sh"
JOB_FILE = "job.json"


def stage_and_submit(spec, run, bundle=None):
    """Make ``spec['pass_dir']`` fresh, unpack the controller's ``bundle`` into it (when given: the sweep
    writes its pass directory itself), write the batch script and submit it. Returns {job_id, argv, script}."""
    pass_dir = spec["pass_dir"]
    if bundle is not None:
        _sidefiles.fresh_pass_dir(pass_dir)
        _sidefiles.unpack(bundle, pass_dir)
    script = os.path.join(pass_dir, JOB_SCRIPT)
    with open(script, "w") as handle:
        handle.write(job_script(spec))
    os.chmod(script, 0o755)
    argv = sbatch_argv(dict(spec, script=script))
    rc, out, err = run(argv)
    job_id = parse_sbatch(out, err, rc)
    _schedule.write_state(os.path.join(pass_dir, JOB_FILE), {"job_id": job_id, "argv": argv})
    return {"job_id": job_id, "argv": argv, "script": script}


def status(run, job_id, pass_dir, commands=None):
    """{job, states, done}: Slurm's record of the job and the runners' progress and end files."""
    results = os.path.join(pass_dir, _sidefiles.RESULTS)
    return {
        "job": query(run, job_id, commands),
        "states": _sidefiles.read_states(results),
        "done": _sidefiles.read_done(results),
    }


# --- the controller's wait ----------------------------------------------------------------------------

PENDING_STATES = ("PENDING", "CONFIGURING", "REQUEUED", "RESV_DEL_HOLD", "REQUEUE_FED", "REQUEUE_HOLD")


def next_step(job, waited_s, started_s, start_timeout_s, run_timeout_s):
    """What the controller does after a look at the job: ``done`` (it ended), ``wait``, ``cancel_pending``
    (still waiting for nodes after start_timeout_s), ``cancel_overdue`` (running past run_timeout_s: Slurm's
    own time limit should have ended it first). ``waited_s``: since submission; ``started_s``: since it was
    first seen running (None before)."""
    state = (job or {}).get("state")
    if is_terminal(job):
        return "done"
    if state in PENDING_STATES or started_s is None:
        return "cancel_pending" if waited_s >= start_timeout_s else "wait"
    return "cancel_overdue" if started_s >= run_timeout_s else "wait"


def progress_text(job, states, label, running=None):
    """The controller's line: the runners' own progress line (validate/progress.line, as the ssh launcher
    prints it; ``running``: the pass's participants) while the job runs, else where the job stands in Slurm
    and how far its rounds got."""
    job = job or {}
    line = _progress.line(states, label, running)
    if line and job.get("state") == "RUNNING":
        return "%s (Slurm job %s)" % (line, job.get("job_id"))
    words = "%s: Slurm job %s %s" % (label, job.get("job_id"), job.get("state"))
    if job.get("reason"):
        words += " (%s)" % job["reason"]
    reporting = [s for s in (states or {}).values() if isinstance(s, dict) and s.get("rounds_total")]
    if reporting:
        words += ", %d/%d rounds done" % (
            min(int(s.get("rounds_done") or 0) for s in reporting),
            max(int(s["rounds_total"]) for s in reporting),
        )
    return words


def never_started_text(job, waited_s):
    return "the Slurm job %s was still %s%s after %d s, so the controller cancelled it" % (
        (job or {}).get("job_id"),
        (job or {}).get("state"),
        (" (%s)" % job["reason"]) if (job or {}).get("reason") else "",
        int(waited_s),
    )


def sides_of_pass(slices, back, job, done, never_started=None):
    """Every planned side of the pass: those that came back, and a no_result side (with the reason) for
    each one that did not. Returns (sides, missing count)."""
    back_list = [side for host in sorted(back) for side in back[host]]
    missing = _sidefiles.missing_sides(
        slices, back_list, lambda host: missing_reason(job, (done or {}).get(host), never_started)
    )
    return back_list + missing, len(missing)
