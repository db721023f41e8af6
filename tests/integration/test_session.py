"""The session's lifecycle: how a run ends (its -p targets exit, a signal
comes while it is still starting), and that it leaves nothing loaded."""

import json
import os
import signal
import subprocess
import tempfile
import time

from harness import TOOL, Tool, Work, bpf_prog_ids, count, run
from harness import test
from harness import Process



# Names of the tool's programs as the kernel keeps them (15 characters).
def our_prog_names():
    p = run("bpftool", "-j", "prog", "list", check=True)
    return {prog["id"]: prog.get("name", "") for prog in json.loads(p.stdout or "[]")}


@test
def p_targets_that_exit_end_the_run_with_its_report():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        first = Work("-c", "pread", "300", path)
        second = Work("-c", "pread", "200", path)
        tool = Tool("-T", "syscall", "-p", f"{first.pid},{second.pid}", "--json")
        first.go()
        first.finish()
        # One of two targets is gone: the run goes on.
        time.sleep(0.5)
        assert tool.proc.poll() is None, "the run ended while a -p target still lives"
        second.go()
        second.finish()
        rc, out, err = tool.wait(timeout=30)
        assert rc == 0, err
        reports = [json.loads(l) for l in out.splitlines() if l.strip()]
        assert len(reports) == 1, out
        assert count(reports[0], "syscall", "read") == 500, reports[0]
        ended = [l for l in err.splitlines() if "exited" in l]
        assert ended == ["iostackbreak: every process given with -p has exited: run ended"], err


@test
def p_target_exit_ends_an_interval_run_too():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "pread", "250", path)
        tool = Tool("-T", "syscall", "-p", str(work.pid), "--json", "10")
        work.go()
        work.finish()
        rc, out, err = tool.wait(timeout=8)  # well before the first interval
        assert rc == 0, err
        reports = [json.loads(l) for l in out.splitlines() if l.strip()]
        assert sum(count(r, "syscall", "read") for r in reports) == 250, out


def wait_signals_blocked(pid, timeout=10):
    """Until the process has blocked SIGINT and SIGTERM (main()'s first
    step; before it, as for any program, they kill)."""
    want = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as f:
            blocked = int([l for l in f if l.startswith("SigBlk:")][0].split()[1], 16)
        if blocked & want == want:
            return
        time.sleep(0.0005)
    raise AssertionError(f"{pid} never blocked SIGINT and SIGTERM")


@test
def a_stop_signal_during_start_up_is_honoured():
    """A SIGINT 10 ms after start, 50 times; then SIGINT or SIGTERM 0-18 ms
    after the tool has blocked them (its first step), 20 times, so at every
    stage of loading and attaching: a clean exit every time, and none of
    the tool's programs left loaded."""
    before = bpf_prog_ids()
    outcomes = {}
    for i in range(70):
        sig = signal.SIGINT if i < 50 or i % 2 == 0 else signal.SIGTERM
        t0 = time.monotonic()
        p = Process([TOOL, "-T", "syscall,blk"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        wait_signals_blocked(p.pid)
        if i < 50:
            # 10 ms after start, or at once if blocking them took longer
            # (before it, a SIGINT kills any program, ours included).
            time.sleep(max(0.0, 0.010 - (time.monotonic() - t0)))
        else:
            time.sleep(0.002 * (i % 10))
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        lines = [l for l in err.splitlines() if l.strip()]
        if p.returncode == 0:
            outcomes["exit 0"] = outcomes.get("exit 0", 0) + 1
        else:
            # Anything else must be one clear line of ours, never a kill.
            assert p.returncode > 0, f"run {i}: killed by signal {-p.returncode}"
            assert len(lines) == 1 and lines[0].startswith("iostackbreak: "), (i, err)
            outcomes[lines[0]] = outcomes.get(lines[0], 0) + 1
    # Programs are freed after an RCU grace period, not at close().
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = {i: n for i, n in our_prog_names().items() if i not in before}
        if not left:
            break
        time.sleep(0.2)
    assert not left, f"programs left loaded: {left}"
    assert outcomes.get("exit 0", 0) > 0, outcomes
    print(f"    outcomes: {outcomes}", flush=True)


@test
def output_file_takes_the_reports_and_leaves_the_command_its_stdout():
    """-o FILE: the JSON report in FILE, the command's own output on stdout
    and stderr, byte for byte."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        data = os.path.join(tmp, "data")
        script = (f"echo out-line; echo err-line >&2; "
                  f"dd if=/dev/zero of={data} bs=4096 count=10 conv=fsync status=none")
        p = run(TOOL, "-T", "syscall", "--json", "-o", out, "--", "sh", "-c", script,
                timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout == "out-line\n", f"stdout: {p.stdout!r}"
        assert "err-line\n" in p.stderr, p.stderr
        with open(out) as f:
            lines = f.read().splitlines()
        assert len(lines) == 1, lines
        report = json.loads(lines[0])
        # dd's 10 writes and its fsync: the command's own, no more (the
        # echoes go to pipes, which the syscall layer leaves out by default)
        assert count(report, "syscall", "write") == 10, report["cells"]
        assert count(report, "syscall", "fsync") == 1, report["cells"]
