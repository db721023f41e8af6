"""Integration tests on this machine's kernel, with real BPF (root).

Every count is checked against an independent truth: the workload's own
count of system calls, /proc/PID/io, /proc/diskstats, or libbpf-tools'
biolatency traced on the same workload."""

import json
import os
import re
import signal
import subprocess
import tempfile
import time

from harness import (IOWORK, KINDS, TOOL, LoopDevice, Skip, Tool, Work, bpf_prog_ids, cell,
                     check_blk_count,
                     count, diskstats, run, strace_calls)
import harness
from harness import held_prog_ids, test
from harness import Process, run_process



# The workload reports with one write(2) after its measured phase: the
# only system call of interest it makes besides the N it was asked for. It
# goes to a pipe (our stdout), so the syscall layer leaves it out and
# counts it as left out (storage files only, issue 19).
REPORT_WRITES = 1

SYSCALL_OPS = {
    # iowork op -> (syscall cell, extra setup flags)
    "pread": "read",
    "read": "read",
    "preadv": "read",
    "pwrite": "write",
    "write": "write",
    "pwritev": "write",
    "open": "open",
    "fsync": "fsync",
    "fdatasync": "fsync",
}


def expected_syscalls(op, n):
    want = {"read": 0, "write": 0, "open": 0, "fsync": 0}
    want[SYSCALL_OPS[op]] += n
    return want


@test
def syscall_counts_equal_the_workload_and_proc_io():
    """With each syscall source: the raw sys_enter/exit pair (the default
    here) and a tracepoint pair per syscall."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        for attach, op, n in [(a, op, n) for a in ("raw", "tracepoint") for op, n in [
                ("pread", 3000), ("read", 2000), ("preadv", 1000), ("pwrite", 2000),
                ("write", 1000), ("pwritev", 1000), ("open", 1500), ("fsync", 40),
                ("fdatasync", 40)]]:
            work = Work("-c", "-x", op, str(n), path)
            before = work.io()
            tool = Tool("-T", "syscall", "-p", str(work.pid), "--json", f"--attach={attach}")
            work.go()
            result = work.finish_held()
            after = work.io()
            work.release()
            reports = tool.stop_json()
            assert len(reports) == 1, reports
            rep = reports[0]
            assert int(result["done"]) == n, result
            for sop, want in expected_syscalls(op, n).items():
                got = count(rep, "syscall", sop)
                assert got == want, \
                    f"{attach}: {op} x{n}: syscall {sop} counted {got}, want {want}"
            assert rep["left_out"] == {"pipe": REPORT_WRITES, "socket": 0, "other": 0}, rep
            # /proc/PID/io counts read-type and write-type system calls,
            # the report's write to a pipe too.
            syscr = after["syscr"] - before["syscr"]
            syscw = after["syscw"] - before["syscw"]
            assert count(rep, "syscall", "read") == syscr, (op, syscr, rep)
            assert count(rep, "syscall", "write") + REPORT_WRITES == syscw, (op, syscw, rep)
            c = cell(rep, "syscall", SYSCALL_OPS[op])
            assert c["min_ns"] > 0 and c["min_ns"] <= c["p50_ns"] <= c["p90_ns"] \
                <= c["p99_ns"] <= c["max_ns"], c
            assert sum(b["count"] for b in c["buckets"]) == c["count"], c
            assert rep["dropped"] == 0, rep


def blk_run(loop, tool_args, n=300, op="pread", extra=()):
    """N O_DIRECT ops on the loop device; returns (report, diskstats delta)."""
    work = Work("-D", *extra, op, str(n), loop.dev)
    tool = Tool("-T", "blk", "--json", *tool_args)
    before = diskstats(loop.name)
    work.go()
    result = work.finish()
    assert int(result["done"]) == n, result
    time.sleep(0.1)
    after = diskstats(loop.name)
    reports = tool.stop_json()
    assert len(reports) == 1, reports
    return reports[0], tuple(a - b for a, b in zip(after, before)), work.pid


@test
def blk_counts_equal_diskstats_on_a_loop_device():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            for args in (["-d", loop.name], ["-d", loop.name, "-Q"]):
                for op, cellop, idx in (("pread", "read", 0), ("pwrite", "write", 1)):
                    rep, delta, _ = blk_run(loop, args, op=op)
                    assert delta[idx] == 300, f"diskstats says {delta} for 300 {op}s"
                    check_blk_count(rep, count(rep, "blk", cellop), delta[idx], f"{args} {op}")
                    other = "write" if cellop == "read" else "read"
                    assert count(rep, "blk", other) == delta[1 - idx], (args, rep, delta)
        finally:
            loop.close()


@test
def blk_pid_filter_counts_only_the_submitter():
    # The noise reads a disk of its own: two processes reading the same
    # blocks of one disk at once can have their bios merged into one
    # request (diskstats once counted 418 requests for 420 reads), and a
    # merged bio belongs to the request's submitter, which no count can
    # split. -p is what is checked: no -d, so the noise is traced but for it.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        other = LoopDevice(tmp, name="noise.img")
        try:
            for queued in ([], ["-Q"]):
                work = Work("-D", "pread", "250", loop.dev)
                noise = Work("-D", "pread", "170", other.dev)
                tool = Tool("-T", "blk", "--json", "-p", str(work.pid), *queued)
                before = diskstats(loop.name), diskstats(other.name)
                work.go()
                noise.go()
                work.finish()
                noise.finish()
                after = diskstats(loop.name), diskstats(other.name)
                rep = tool.stop_json()[0]
                assert after[0][0] - before[0][0] == 250, (before, after)
                assert after[1][0] - before[1][0] == 170, (before, after)
                check_blk_count(rep, count(rep, "blk", "read"), 250, f"{queued} -p reads")
        finally:
            other.close()
            loop.close()


@test
def queued_latency_is_at_least_issue_latency():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            work = Work("-D", "pread", "300", loop.dev)
            issue = Tool("-T", "blk", "--json", "-d", loop.name)
            queued = Tool("-T", "blk", "--json", "-d", loop.name, "-Q")
            work.go()
            work.finish()
            a = cell(issue.stop_json()[0], "blk", "read")
            b = cell(queued.stop_json()[0], "blk", "read")
            assert a["count"] == b["count"] == 300, (a, b)
            assert b["sum_ns"] >= a["sum_ns"], (a["sum_ns"], b["sum_ns"])
        finally:
            loop.close()


def biolatency_total(text):
    total = 0
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s*->\s*\d+\s*:\s*(\d+)", line)
        if m:
            total += int(m.group(1))
    return total


@test
def blk_agrees_with_biolatency():
    if not os.path.exists("/usr/sbin/biolatency"):
        raise Skip("libbpf-tools' biolatency is not installed (scripts/install-test-deps.sh)")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            for ours, theirs in ((["-d", loop.name], ["-d", loop.name]),
                                 (["-d", loop.name, "-Q"], ["-d", loop.name, "-Q"])):
                work = Work("-D", "pread", "400", loop.dev)
                bio = Process(["/usr/sbin/biolatency", *theirs],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
                tool = Tool("-T", "blk", "--json", *ours)
                time.sleep(3)  # biolatency prints no "attached" line to wait for
                work.go()
                work.finish()
                time.sleep(0.2)
                bio.send_signal(signal.SIGINT)
                bout, berr = bio.communicate(timeout=30)
                rep = tool.stop_json()[0]
                theirs_n = biolatency_total(bout)
                assert theirs_n == 400, f"biolatency {theirs} counted {theirs_n}: {bout} {berr}"
                assert count(rep, "blk", "read") == theirs_n, (ours, rep)
        finally:
            loop.close()


def plan_rows(text):
    """The table rows and notes of --plan, less its header and the note of
    a plan that loaded nothing."""
    return [line for line in text.splitlines()
            if not line.startswith(("LAYER ", "note: nothing was loaded"))]


@test
def plan_loads_nothing_and_check_loads():
    """--plan makes no bpf(2) call at all (strace -f of the run: the
    independent truth of what was loaded) and mounts nothing; --plan
    --check loads and attaches (BPF_PROG_LOAD and BPF_LINK_CREATE or
    BPF_RAW_TRACEPOINT_OPEN seen). For syscall and blk, whose methods need
    no trial, both plan the same rows. As a user who cannot read tracefs,
    --plan says so in one line and exits 1."""
    args = ["-T", "syscall,blk"]
    calls = {}
    # The sanitized build's leak check cannot run under ptrace: off for
    # this run, which is about the system calls it makes.
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    for mode in ([], ["--check"]):
        with tempfile.NamedTemporaryFile("r", suffix=".strace") as st:
            p = run_process(["strace", "-f", "-qq", "-e", "trace=bpf,mount", "-o", st.name,
                             TOOL, "--plan", *mode, *args], capture_output=True, text=True,
                            timeout=120, env=env)
            assert p.returncode == 0, p.stderr
            text = st.read()
        calls[tuple(mode)] = (re.findall(r"bpf\((BPF_[A-Z_]+)", text),
                              re.findall(r"mount\(", text), p.stdout)
    bpf, mounts, unloaded = calls[()]
    assert bpf == [] and mounts == [], (bpf, mounts)
    assert "WOULD ATTACH TO" in unloaded and "note: nothing was loaded" in unloaded, unloaded
    bpf, _, checked = calls[("--check",)]
    assert "BPF_PROG_LOAD" in bpf, sorted(set(bpf))
    assert {"BPF_LINK_CREATE", "BPF_RAW_TRACEPOINT_OPEN"} & set(bpf), sorted(set(bpf))
    assert "note: nothing was loaded" not in checked, checked
    assert plan_rows(unloaded) == plan_rows(checked), (unloaded, checked)
    nobody = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
    p = run(*nobody, TOOL, "--plan", *args)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    if run(*nobody, "stat", "/sys/kernel/tracing/events").returncode == 0:
        # A tracefs this user may read: the same plan as root's.
        assert p.returncode == 0 and plan_rows(p.stdout) == plan_rows(unloaded), p
    else:
        assert p.returncode == 1 and len(lines) == 1, (p.returncode, p.stderr)
        assert "cannot read /sys/kernel/tracing/events (permission denied)" in lines[0], lines


@test
def vfs_on_this_kernel_fails_with_one_clear_line():
    caps = run(TOOL, "--plan", "--check")
    if "fentry " in caps.stdout and re.search(r"^vfs\s+read\s+(fentry|kprobe)", caps.stdout, re.M):
        raise Skip("this kernel can trace vfs: the VM suite covers it")
    for layer in ("vfs", "xfs", "btrfs"):
        p = run(TOOL, "-T", layer)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert p.returncode == 1, (layer, p.returncode, p.stderr)
        assert len(lines) == 1, f"want one line, got: {p.stderr!r}"
        assert lines[0].startswith(f"iostackbreak: cannot trace {layer} on this kernel"), lines
        assert "libbpf" not in p.stderr, p.stderr
        if layer == "vfs":
            assert "fentry" in lines[0] and "kprobe" in lines[0], lines


@test
def ext4_fsync_uses_tracepoints_and_counts_exactly():
    fstype = run("stat", "-f", "-c", "%T", "/var/tmp").stdout.strip()
    if fstype not in ("ext2/ext3", "ext4"):
        raise Skip(f"/var/tmp is {fstype}, not ext4")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "f")
        work = Work("-c", "-W", "fsync", "60", path)
        tool = Tool("-T", "ext4,syscall", "--json", "-p", str(work.pid))
        skipped = "\n".join(tool.stderr_lines)
        work.go()
        work.finish()
        rep = tool.stop_json()[0]
        assert count(rep, "ext4", "fsync") == 60, rep
        assert count(rep, "syscall", "fsync") == 60, rep
        ext4 = cell(rep, "ext4", "fsync")
        sysc = cell(rep, "syscall", "fsync")
        assert sysc["sum_ns"] >= ext4["sum_ns"] > 0, (sysc, ext4)
        names = {(s["layer"], s["op"]) for s in rep["skipped"]}
        assert names == {("ext4", "read"), ("ext4", "write"), ("ext4", "open")}, names
        assert "skipping ext4 read/write/open: " in skipped, skipped


@test
def default_run_traces_syscall_and_blk_and_lists_the_rest():
    tool = Tool("--json")
    rc, out, err = tool.stop()
    assert rc == 0, err
    rep = json.loads(out.splitlines()[-1])
    layers = {c["layer"] for c in rep["cells"]}
    assert {"syscall", "blk"} <= layers, layers
    skipped = {s["layer"] for s in rep["skipped"]}
    # One stderr line per reason, naming every layer it keeps out but the
    # file systems with nothing mounted (no word about f2fs to an ext4
    # user); JSON lists them all.
    lines = [l for l in err.splitlines() if l.startswith("iostackbreak: skipping ")]
    named = " ".join(l.split(": ", 2)[1] for l in lines)
    with open("/proc/self/mounts") as f:
        mounted = {l.split()[2] for l in f}
    for layer in ["vfs"] + harness.layers("FS"):
        if layer not in layers:
            assert layer in skipped, rep["skipped"]
            shown = bool(re.search(rf"\b{layer}\b", named))
            assert shown == (layer == "vfs" or layer in mounted), (layer, mounted, err)


@test
def ctrl_c_and_sigterm_leave_nothing_attached():
    for sig in (signal.SIGINT, signal.SIGTERM):
        tool = Tool("-T", "syscall,blk")
        ours = held_prog_ids(tool.proc.pid)
        assert len(ours) >= 4, "the tool holds no programs while it runs"
        assert ours <= bpf_prog_ids(), "bpftool does not list the tool's programs"
        rc, out, err = tool.stop(sig)
        assert rc == 0, (sig, rc, err)
        assert "LAYER" in out, out  # the final report
        # Programs are freed after an RCU grace period, not at close().
        deadline = time.monotonic() + 5
        while ours & bpf_prog_ids() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = ours & bpf_prog_ids()
        assert not left, f"programs {left} left loaded after the tool stopped"


@test
def interval_reports_add_up_to_the_whole():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        # 2000 reads 1 ms apart: about 2.5 s, so over several intervals. The
        # workload stays alive (-x) until the three reports are out: a -p
        # run ends when its processes do.
        work = Work("-c", "-x", "-P", "1000", "pread", "2000", path)
        tool = Tool("-T", "syscall", "-p", str(work.pid), "--json", "1", "3")
        work.go()
        result = work.finish_held()
        rc, out, err = tool.wait(timeout=30)
        work.release()
        assert rc == 0, err
        reports = [json.loads(l) for l in out.splitlines()]
        assert len(reports) == 3, out
        total = sum(count(r, "syscall", "read") for r in reports)
        assert total == int(result["done"]) == 2000, [count(r, "syscall", "read") for r in reports]
        assert sum(1 for r in reports if count(r, "syscall", "read")) >= 2, \
            "the workload should span at least two intervals"
        # The reports come from a periodic timerfd (session.c): a tick read
        # late by d makes its interval 1 + d and the next one 1 - d. Measured
        # 1.000 s for each of six intervals in two runs (the JSON has ms); the
        # room is for a loaded machine's (or the sanitized build's) late read.
        print(f"    intervals: {[r['interval_s'] for r in reports]} s", flush=True)
        for r in reports:
            assert 0.9 < r["interval_s"] < 1.5, r["interval_s"]


@test
def command_mode_traces_the_command_and_returns_its_status():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        run(IOWORK, "-c", "pread", "1", path, check=True)
        static = IOWORK + "-static"
        if not os.path.exists(static):
            raise Skip("build/iowork-static missing (make all builds it)")
        cmd = [static, "pread", "777", path]
        # The truth: strace's count of the same deterministic command. Its
        # set-up reads (pre-reading the file) are part of the command too;
        # its result line goes to a pipe (ours), left out.
        want, left = strace_calls(cmd)
        assert want["read"] >= 777 and left["write", "pipe"] == 1, (want, left)
        p = run(TOOL, "--json", "-T", "syscall", "--", *cmd)
        assert p.returncode == 0, p.stderr
        rep = json.loads(p.stdout.splitlines()[-1])
        for op, n in want.items():
            assert count(rep, "syscall", op) == n, (op, n, want, rep)
        assert left_out_by_op(rep) == left, (left, rep["left_out_by_op"])
        p = run(TOOL, "-T", "syscall", "--", "sh", "-c", "exit 3")
        assert p.returncode == 3, (p.returncode, p.stderr)
        p = run(TOOL, "-T", "syscall", "--", "/nonexistent/cmd")
        assert p.returncode == 127 and "cannot run" in p.stderr, (p.returncode, p.stderr)


def one_line_error(args, code, *needles):
    p = run(TOOL, *args)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert p.returncode == code, f"{args}: exit {p.returncode}, want {code}: {p.stderr}"
    assert len(lines) == 1, f"{args}: want one line on stderr, got {p.stderr!r}"
    assert lines[0].startswith("iostackbreak: "), lines
    for n in needles:
        assert n in lines[0], f"{args}: {n!r} not in {lines[0]!r}"
    assert p.stdout == "", p.stdout


@test
def bad_input_gives_one_clear_line():
    one_line_error(["-T", "foo"], 2, "unknown layer 'foo'")
    one_line_error(["-p", "abc"], 2, "invalid PID 'abc'")
    one_line_error(["-p", "0"], 2, "invalid PID")
    one_line_error(["0"], 2, "invalid interval '0'")
    one_line_error(["x"], 2, "invalid interval 'x'")
    one_line_error(["1", "0"], 2, "invalid count")
    one_line_error(["--attach=magic"], 2, "unknown attach method")
    # A PID that exists nowhere: above the kernel's pid_max.
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    one_line_error(["-p", str(pid_max + 1)], 1, f"no process with PID {pid_max + 1}")
    one_line_error(["-T", "blk", "-d", "nosuchdisk0"], 1, "no disk named 'nosuchdisk0'")


@test
def a_partition_is_not_a_disk():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=16, partitioned=True)
        try:
            part = loop.name + "p1"
            if not os.path.exists(f"/sys/class/block/{part}"):
                raise Skip(f"the kernel made no partition device {part}")
            one_line_error(["-T", "blk", "-d", part], 1, "is a partition", f"-d {loop.name}")
        finally:
            loop.close()


@test
def not_root_gives_one_clear_line():
    p = run("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            "--inh-caps=-all", TOOL, "-T", "syscall")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert len(lines) == 1 and "needs root" in lines[0] and "CAP_BPF" in lines[0], p.stderr


@test
def text_output_honours_the_unit():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        # Without -m or -u: microseconds, as biolatency and fsdist print them.
        for flag, unit, scale in (("-u", "us", 1e3), ("-m", "ms", 1e6), (None, "us", 1e3)):
            work = Work("-c", "pread", "500", path)
            args = ["-T", "syscall", "-p", str(work.pid)] + ([flag] if flag else [])
            tool = Tool(*args)
            jtool = Tool("-T", "syscall", "-p", str(work.pid), "--json")
            work.go()
            work.finish()
            rc, out, err = tool.stop()
            rep = jtool.stop_json()[0]
            assert rc == 0, err
            # The unit in the table's headers and in the closing line.
            assert f" AVG({unit}) " in out and f"times in {unit}" in out, out
            row = [l for l in out.splitlines() if re.match(r"syscall\s+read\s", l)][0]
            fields = row.replace(",", "").split()  # 1,234: thousands grouped
            count_, total = int(fields[2]), float(fields[8])
            assert count_ == 500 == count(rep, "syscall", "read"), (row, rep)
            # avg and total are in the same unit: total = avg * count. An
            # avg of "<0.01" (cached reads in ms) is above 0, below 0.005.
            if fields[3] == "<0.01":
                assert 0 < total / count_ < 0.005, row
            else:
                avg = float(fields[3])
                assert abs(avg * count_ - total) <= max(0.01 * total, count_ * 0.01), row
            # Two tracers timed the same 500 calls: same order of magnitude
            # in ns once the text's unit is undone (a wrong unit is 1000x off).
            ratio = total * scale / cell(rep, "syscall", "read")["sum_ns"]
            assert 0.5 < ratio < 2.0, (row, ratio)


def strace_counts(cmd, cwd=None, children=True):
    """Read/write/open/fsync-class system calls of a deterministic command
    on storage files, counted by strace: the truth for commands we did not
    write. (strace_calls() has the calls left out too.)"""
    return strace_calls(cmd, cwd=cwd, children=children)[0]


def left_out_by_op(rep, layer="syscall"):
    """A report's calls left out, by (op, kind)."""
    return {(o["op"], k): o[k] for o in rep["left_out_by_op"] if o["layer"] == layer
            for k in KINDS}


@test
def workloads_we_did_not_write_fio_and_dd():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            # fio: 256 random 4 KiB O_DIRECT reads with pread (psync engine).
            tool = Tool("-T", "blk", "--json", "-d", loop.name, "-Q")
            before = diskstats(loop.name)
            run("fio", "--name=t", f"--filename={loop.dev}",
                "--rw=randread", "--bs=4k",
                "--direct=1", "--ioengine=psync", "--io_size=1M", "--size=64M",
                "--randrepeat=1", "--output=/dev/null", check=True, timeout=120)
            after = diskstats(loop.name)
            rep = tool.stop_json()[0]
            assert after[0] - before[0] == 256, (before, after)
            assert count(rep, "blk", "read") == 256, rep
            # dd: syscalls of a command we did not write, against strace.
            # Its writes go to /dev/null, a character device: left out.
            cmd = ["dd", f"if={loop.dev}", "of=/dev/null", "bs=4096", "count=300",
                   "iflag=direct", "status=none"]
            want, left = strace_calls(cmd)
            assert want["read"] >= 300 and left["write", "other"] == 300, (want, left)
            before = diskstats(loop.name)
            p = run(TOOL, "--json", "-T", "syscall,blk", "--", *cmd)
            after = diskstats(loop.name)
            assert p.returncode == 0, p.stderr
            rep = json.loads(p.stdout.splitlines()[-1])
            for op, n in want.items():
                assert count(rep, "syscall", op) == n, (op, n, rep)
            assert left_out_by_op(rep) == left, (left, rep["left_out_by_op"])
            # dd's 300 direct reads are its own block requests.
            assert count(rep, "blk", "read") == after[0] - before[0] == 300, (before, after)
        finally:
            loop.close()


def bpftool_costs(tool_pid):
    """Per layer (runs, run_time_ns) of the programs tool_pid holds, as
    bpftool reports them: the kernel's numbers, read from outside."""
    ids = held_prog_ids(tool_pid)
    p = run("bpftool", "-j", "prog", "show", check=True)
    layers = {}
    for prog in json.loads(p.stdout):
        if prog["id"] not in ids:
            continue
        name = prog.get("name", "")
        layer = None
        if name.endswith(("_bio_backmerge", "_bio_frontmerge")):
            layer = "blk"  # a bio merged into a request: the blk layer's bytes
        elif name.startswith(("tb_bio_", "rt_bio_")):
            layer = "bio"
        elif name in ("tb_switch", "rt_switch", "tb_wakeup", "rt_wakeup", "tb_fork", "rt_fork",
                    "tb_exit", "rt_exit", "tb_thread_gone") or name.startswith(
                        ("tb_lock_", "rt_lock_", "tb_commit_", "rt_commit_",
                         "tb_waking", "rt_waking", "tp_cache_", "tp_ra_")):
            layer = "other"  # programs of no layer: the tool's own "other" row
        elif name.startswith(("se_", "sx_", "tb_sys_", "rt_sys_")):
            layer = "syscall"
        elif name.startswith(("tb_", "rt_")):
            layer = "blk"
        elif name.startswith("tp_ext4_"):
            layer = "ext4"
        if layer is None:
            continue
        runs, ns = layers.get(layer, (0, 0))
        layers[layer] = (runs + prog.get("run_cnt", 0), ns + prog.get("run_time_ns", 0))
    return layers


def bpf_stats_sysctl():
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        return f.read().strip()


def stats_descriptors(pid):
    """The process's BPF_ENABLE_STATS descriptors: the kernel names each
    anon_inode:bpf-stats. Run-time statistics are on while one is open
    (a count in the kernel, dropped when the file is released), whatever
    the bpf_stats_enabled sysctl says."""
    fds = os.listdir(f"/proc/{pid}/fd")
    return sum(1 for fd in fds
               if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:bpf-stats")


@test
def stats_agree_with_bpftool_and_are_restored():
    """With each syscall source: 32 per-syscall tracepoint programs, or the
    raw sys_enter/sys_exit pair. --stats turns statistics on with one
    BPF_ENABLE_STATS descriptor of its own, which ends with the process, and
    leaves the machine-wide sysctl as it found it."""
    before_setting = bpf_stats_sysctl()
    for attach, nr_progs in (("tracepoint", 32), ("raw", 2)):
        stats_agree_with_bpftool(attach, nr_progs, before_setting)
    assert bpf_stats_sysctl() == before_setting, "bpf_stats_enabled left changed"


def stats_agree_with_bpftool(attach, nr_progs, setting):
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "pread", "20000", path)
        # The first interval report covers the run from its start: read the
        # kernel's numbers before it and right after it, to bracket the
        # tool's own (a final report would not do: with the raw syscall pair
        # the tool is gone within milliseconds of printing it).
        tool = Tool("-T", "syscall,blk", "--stats", "--json", f"--attach={attach}", "2")
        # The descriptor, not the sysctl.
        assert stats_descriptors(tool.proc.pid) == 1, os.listdir(f"/proc/{tool.proc.pid}/fd")
        assert bpf_stats_sysctl() == setting, "--stats wrote bpf_stats_enabled"
        work.go()
        work.finish()
        low = bpftool_costs(tool.proc.pid)
        line = tool.proc.stdout.readline()
        high = bpftool_costs(tool.proc.pid)
        tool.proc.send_signal(signal.SIGINT)
        rc, _, err = tool.wait()
        assert rc == 0, err
        rep = json.loads(line)
        stats = {l["layer"]: l for l in rep["stats"]["layers"]}
        assert set(stats) == {"syscall", "blk"}, stats
        assert stats["syscall"]["programs"] == nr_progs, stats
        for layer, st in stats.items():
            lo, hi = low[layer], high[layer]
            # Statistics were on: each run timed (the blk programs run only
            # when some disk of the machine has a request in the window).
            assert st["run_time_ns"] > 0 or not st["runs"], (layer, st)
            assert lo[0] <= st["runs"] <= hi[0], (layer, lo, st, hi)
            assert lo[1] <= st["run_time_ns"] <= hi[1], (layer, lo, st, hi)
        assert stats["syscall"]["run_time_ns"] > 0, stats
        # Every timed syscall is one entry and one exit run, at least.
        assert stats["syscall"]["runs"] >= 2 * stats["syscall"]["events"] >= 2 * 20000, stats
        assert 0 < rep["stats"]["map_bytes"] < 4 << 20, rep["stats"]


@test
def a_million_syscalls_on_two_threads_lose_nothing():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "-t", "2", "pread", "1000000", path)
        tool = Tool("-T", "syscall", "-p", str(work.pid), "--json")
        work.go()
        result = work.finish(timeout=300)
        rep = tool.stop_json()[0]
        assert int(result["done"]) == 1000000, result
        assert count(rep, "syscall", "read") == 1000000, rep
        assert rep["dropped"] == 0, rep
