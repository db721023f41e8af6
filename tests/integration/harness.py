"""Shared plumbing for the integration tests: run the tool and the workload,
wait for their handshakes, read the kernel's own counters.

The tests compare iostackbreak's counts with independent truths: the
workload's own count, /proc/PID/io and /proc/diskstats.

Nothing a test makes outlives it: every process, loop device, cgroup, mount
and temporary directory registers its cleanup here (on_cleanup), and run.py
runs them all, last made first, after each test however it ended."""

import collections
import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# IOSB_TOOL: another build of the tool (make sanitized runs build-san's).
TOOL = os.environ.get("IOSB_TOOL") or os.path.join(ROOT, "build", "iostackbreak")
IOWORK = os.path.join(ROOT, "build", "iowork")
READY_LINE = "Hit Ctrl-C to end."


def layers(*kinds):
    """The tool's layers, outermost first, as bpf/cells.def lists them (its
    LAYER lines: the one table the tool is built from); with kinds
    ("SYSCALL", "VFS", "FS", "URING", "BIO", "BLK"), those of these kinds."""
    found = []
    with open(os.path.join(ROOT, "bpf", "cells.def")) as f:
        for line in f:
            m = re.match(r"LAYER\(LAYER_\w+, (\w+), (\w+),", line)
            if m and (not kinds or m.group(2) in kinds):
                found.append(m.group(1))
    assert found, "no LAYER lines of kinds %s in bpf/cells.def" % (kinds,)
    return found


class Skip(Exception):
    """The test cannot run here; the message says why."""


# Cleanups of the running test: (what, function, args), run last first.
_cleanups = []
# Between SIGINT to a process group and SIGKILL: the tool detaches and
# prints its report on SIGINT within about a second, even under ASan.
STOP_GRACE = 5.0
# The test run.py is running (IOSTACKBREAK_TEST_FAIL compares it).
current_test = None


def on_cleanup(what, fn, *args):
    """fn(*args) runs when the test ends; `what` names it in reports."""
    _cleanups.append((what, fn, args))


def pending_cleanups():
    return [what for what, _, _ in _cleanups]


def run_cleanups():
    """Stops every process of the test, then runs every registered cleanup,
    last registered first; returns the failures."""
    errors = []
    try:
        stop_tagged()
    except AssertionError as e:
        errors.append(str(e))
    while _cleanups:
        what, fn, args = _cleanups.pop()
        try:
            fn(*args)
        except Exception as e:  # one failed cleanup must not skip the rest
            errors.append(f"{what}: {e!r}")
    return errors


# run.py gives each test a token in the environment: every process the test
# starts inherits it, even one that leaves its process group and session
# (fio's job processes call setsid()).
TEST_TOKEN = "IOSB_TEST_TOKEN"


def tagged_processes():
    """The live processes carrying this test's token."""
    token = os.environ.get(TEST_TOKEN)
    if not token:
        return []
    mark = f"{TEST_TOKEN}={token}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if mark in f.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def stop_tagged():
    """SIGINT to every process of the test, SIGKILL to what is left after
    STOP_GRACE. (A zombie has no environment left: it is not counted.)"""
    for sig, wait in ((signal.SIGINT, STOP_GRACE), (signal.SIGKILL, 5.0)):
        pids = tagged_processes()
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            for pid in pids:
                try:  # our children: reaped here, or they stay zombies
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            pids = tagged_processes()
        if not pids:
            return
    raise AssertionError(f"processes {pids} survive SIGKILL")


def group_alive(pgid):
    """A process of the group that is not a zombie (a zombie is only a
    table entry waiting for its parent)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            return True
    return False


def stop_group(proc, grace=None):
    """SIGINT to the process's group (it and whatever it forked), SIGKILL to
    what is left after the grace period, then reaps the leader."""
    pgid = proc.pid
    for sig, wait in ((signal.SIGINT, STOP_GRACE if grace is None else grace),
                      (signal.SIGKILL, 5.0)):
        proc.poll()
        if not group_alive(pgid):
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            proc.poll()
            if not group_alive(pgid):
                break
            time.sleep(0.02)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"pid {pid_and_name(proc)} survives SIGKILL")
    if group_alive(pgid):
        raise AssertionError(f"process group {pgid} survives SIGKILL")


# Commands that exec the program after their own arguments (same pid): a
# process is named by that program (taskset -c CPUS PROGRAM...).
EXEC_WRAPPERS = {"taskset": 3}


def pid_and_name(proc):
    args = proc.args if isinstance(proc.args, (list, tuple)) else [proc.args]
    name = os.path.basename(str(args[0]))
    at = EXEC_WRAPPERS.get(name)
    if at and len(args) > at:
        name = os.path.basename(str(args[at]))
    return f"{proc.pid} {name}"


class Process(subprocess.Popen):
    """A process a test starts (the tests start every one through this, or
    run_process, or a helper here that does): in a process group of its
    own, so that its children can be stopped with it, with stop_group()
    registered as its cleanup."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("start_new_session", True)
        super().__init__(*args, **kwargs)
        on_cleanup(f"process {pid_and_name(self)}", stop_group, self)


def run_process(args, *, input=None, timeout=None, check=False, capture_output=False,
                **kwargs):
    """subprocess.run's work, with the process a Process: waits for it and
    returns a subprocess.CompletedProcess (killed, and TimeoutExpired
    raised, when timeout runs out)."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with Process(args, **kwargs) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(args, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done


# Every integration test, in the order the modules registered them (run.py
# imports each tests/integration/test_*.py module, by name).
TESTS = []


def test(fn):
    """Registers an integration test: a function of no arguments that
    raises AssertionError (or Skip) when it does not hold."""
    TESTS.append(fn)
    return fn


def make_tempdir(**kwargs):
    """tempfile.mkdtemp, removed when the test ends."""
    path = tempfile.mkdtemp(**kwargs)
    on_cleanup(f"directory {path}", remove_tree, path)
    return path


def remove_tree(path):
    # rmtree descends into mounts: never into one still mounted here.
    if os.path.ismount(path):
        raise AssertionError(f"{path} is still a mount point: not removed")
    shutil.rmtree(path, ignore_errors=True)


def make_cgroup(path):
    """A cgroup directory (and its parents) made for the test; removed
    when the test ends, after the processes the test put in it stopped.
    Name them iosb-*: the leftover check looks for those."""
    made = []
    head = path
    while not os.path.isdir(head):
        made.append(head)
        head = os.path.dirname(head)
    for d in reversed(made):
        os.mkdir(d)
        on_cleanup(f"cgroup {d}", remove_cgroup, d)
    return path


def remove_cgroup(path):
    # An emptied cgroup can refuse rmdir (EBUSY) for a moment after its
    # last task exits.
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    os.rmdir(path)


def mount(*args, where):
    """mount ARGS... WHERE; unmounted when the test ends."""
    p = run("mount", *args, where)
    if p.returncode == 0:
        on_cleanup(f"mount {where}", unmount, where)
    return p


def unmount(where):
    if os.path.ismount(where):
        run("umount", where, check=True)


def load_module(name):
    """modprobe NAME where it is neither built in nor loaded (its /sys/fs
    or /sys/module entry absent); unloaded when the test ends, and checked.
    False when it cannot be loaded."""
    if os.path.exists(f"/sys/fs/{name}") or os.path.exists(f"/sys/module/{name}"):
        return True
    if run("modprobe", name).returncode:
        return False
    on_cleanup(f"module {name}", unload_module, name)
    return True


def unload_module(name):
    run("modprobe", "-r", name, check=True)
    # A module's /sys/module entry has initstate; a built-in one's has none.
    if os.path.exists(f"/sys/module/{name}/initstate"):
        raise AssertionError(f"module {name} still loaded after modprobe -r")


def fail_on_purpose(stage):
    """IOSTACKBREAK_TEST_FAIL=NAME: the named test fails here, right after
    it has started its processes and devices (make selftest checks that
    nothing of it is left)."""
    if current_test and os.environ.get("IOSTACKBREAK_TEST_FAIL") == current_test:
        raise AssertionError(f"IOSTACKBREAK_TEST_FAIL: {current_test} fails on purpose {stage}, "
                             f"{len(bpf_prog_ids())} BPF programs loaded; "
                             f"live: {'; '.join(pending_cleanups())}")


def environment(changes):
    """os.environ with changes: a value of None removes that variable."""
    if not changes:
        return None
    env = {**os.environ, **changes}
    return {k: v for k, v in env.items() if v is not None}


class Tool:
    """iostackbreak running in the background until stop()."""

    def __init__(self, *args, timeout=60, env=None, prefix=()):
        # prefix: a command that execs it (unshare ... sh -c 'exec "$@"').
        self.args = [*prefix, TOOL, *args]
        self.proc = Process(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=environment(env))
        self.stderr_lines = []
        self._wait_ready(timeout)
        fail_on_purpose(f"after {os.path.basename(TOOL)} attached")

    def _wait_ready(self, timeout):
        # Read the raw descriptor: a buffered readline() can swallow the
        # ready line into Python's buffer where select() cannot see it.
        fd = self.proc.stderr.fileno()
        pending = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self.stderr_lines.append(line.decode(errors="replace"))
                if line.decode(errors="replace").endswith(READY_LINE):
                    if pending:
                        self.stderr_lines.append(pending.decode(errors="replace"))
                    return
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"no '{READY_LINE}' from {self.args} in {timeout}s: "
                                 + " | ".join(self.stderr_lines))
        out, err = self.proc.communicate()
        raise AssertionError(f"{self.args} exited {self.proc.returncode} before attaching: "
                             + " | ".join(self.stderr_lines + err.splitlines()))

    def stop(self, sig=signal.SIGINT, timeout=60):
        """Stops the tool; returns (exit code, stdout, all of stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "\n".join(self.stderr_lines) + "\n" + err

    def wait(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "\n".join(self.stderr_lines) + "\n" + err

    def stop_json(self, sig=signal.SIGINT):
        rc, out, err = self.stop(sig)
        assert rc == 0, f"tool exited {rc}: {err}"
        return [json.loads(line) for line in out.splitlines() if line.strip()]


class Work:
    """The iowork workload, set up and held until go()."""

    def __init__(self, *args, prefix=None):
        # prefix: a command that execs it (taskset -c 1 ...): same pid.
        if prefix is None:
            prefix = ()
        self.args = [*prefix, IOWORK, "-w", *args]
        self.proc = Process(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            _, err = self.proc.communicate()
            raise AssertionError(f"{self.args} did not get ready: {line!r} {err}")
        self.pid = int(line.split()[1])

    def io(self):
        return read_proc_io(self.pid)

    def go(self):
        self.proc.send_signal(signal.SIGUSR1)

    def finish_held(self, timeout=120):
        """With -x: the result of the measured phase, the process still alive."""
        # A blocking readline is fine here: the line comes right after the
        # phase, and the process stays alive until release().
        line = self.proc.stdout.readline()
        assert line.startswith("iowork "), f"{self.args}: {line!r}"
        return dict(kv.split("=", 1) for kv in line.split()[1:])

    def release(self, timeout=30):
        """With -x: lets the held process exit."""
        self.proc.send_signal(signal.SIGUSR1)
        self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"{self.args} exited {self.proc.returncode}"

    def stop(self):
        """Ends it, whatever phase it is in (a test's cleanup before it
        unmounts the file system the workload holds open)."""
        stop_group(self.proc)

    def finish(self, timeout=120):
        """Waits for the measured phase to end; returns the result fields."""
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"{self.args} failed: {out} {err}"
        line = [l for l in out.splitlines() if l.startswith("iowork ")][-1]
        return dict(kv.split("=", 1) for kv in line.split()[1:])


def read_proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


# The fields of a /proc/diskstats line after its three ids, in the order of
# the kernel's Documentation/admin-guide/iostats.rst (discards from 4.18,
# flushes from 5.5: 0 where the kernel has none).
DiskStats = collections.namedtuple("DiskStats", (
    "reads", "reads_merged", "sectors_read", "ms_reading", "writes", "writes_merged",
    "sectors_written", "ms_writing", "in_flight", "ms_io", "ms_weighted", "discards",
    "discards_merged", "sectors_discarded", "ms_discarding", "flushes", "ms_flushing"))


def disk_stats(name):
    """A disk's line of /proc/diskstats, the one reader of it here."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                values = [int(v) for v in fields[3:3 + len(DiskStats._fields)]]
                return DiskStats(*values, *[0] * (len(DiskStats._fields) - len(values)))
    raise AssertionError(f"{name} not in /proc/diskstats")


def diskstats(name):
    """(reads completed, writes completed, flushes completed) of a disk."""
    s = disk_stats(name)
    return s.reads, s.writes, s.flushes


def diskstats_merged(name):
    """(reads, writes) merged into a request of another."""
    s = disk_stats(name)
    return s.reads_merged, s.writes_merged


def diskstats_writes(name):
    """(writes completed, sectors written, flushes completed) of a disk."""
    s = disk_stats(name)
    return s.writes, s.sectors_written, s.flushes


def host_hides_completions():
    """Does this host's kernel skip BPF programs for some block completions?

    The project's development machines run a kernel (6.18.44-fc) whose
    bpf_trace_run*() return early, counting no recursion miss, while a
    thread of PID 1 is current, unless PID 1 loaded the program (the patch
    adds the field bpf_prog_aux.init_owned, whose name is then in the
    kernel's BTF strings). A completion that interrupts PID 1 is seen by
    no BPF tool: measured about 1 in 3,000 under fio on a loop device, and
    libbpf-tools' biolatency misses the same ones
    (test_faults.thirty_two_fio_jobs_counted_exactly). Stock kernels have
    no such field; on them no completion may be missed (the VM guests
    prove it, tests/vm/guest_blk.sh). The suite never moves PID 1 to avoid
    it: it counts the loss instead (count_hidden_completions_apart)."""
    global _HIDES
    if _HIDES is None:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            _HIDES = b"\0init_owned\0" in f.read()
    return _HIDES


_HIDES = None


# The block layer's programs keyed by request, even where one program per
# request serves (bpf/blk_stamped.bpf.h): only they see a completion the
# kernel ran no program for, at the struct's next use or the run's end
# (check_blk_count).
KEYED = {"IOSB_BLK_STAMPS": "0"}
# The tool's own choice of block programs: one per request where the kernel
# stamps requests, whatever count_hidden_completions_apart() chose.
DEFAULT_BLK = {"IOSB_BLK_STAMPS": None}


def count_hidden_completions_apart():
    """On a host whose kernel hides completions (host_hides_completions),
    every tool the suite starts times block requests with the programs
    keyed by request, which count each hidden completion as
    request_completion_missed, so every block count holds counted + missed
    = truth (check_blk_count). A test of the default path asks for it with
    env=DEFAULT_BLK and compares it with the keyed programs of the same
    run. Elsewhere: nothing changes. Called once by run.py and the soak."""
    if host_hides_completions():
        os.environ.update(KEYED)


def check_blk_count(rep, got, truth, what):
    """The block layer's count against an independent truth (fio, diskstats):
    every request is counted, or counted as missed, exactly:
    got + request_completion_missed == truth. A completion is missed only
    where the kernel ran no BPF program for it: on a kernel that runs them
    for every completion, none may be (host_hides_completions)."""
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    assert got + missed == truth, f"{what}: counted {got} + missed {missed} != {truth}"
    _missed_only_where_hidden(missed, what, f"{missed} of {truth} completions, counted apart")


def check_blk_ops(rep, got, truth, what):
    """check_blk_count for several ops on a file system's disk: got and
    truth map op -> count. Each op's count is at most its truth, and the
    shortfalls are completions missed: with none missed, every count is
    exact. The tool's missed count covers its whole run, the truth the
    test's diskstats window; on a file system a request can come outside
    that window (the file system's own writes after the workload), and if
    its completion is hidden the missed count is larger than the window's
    shortfall (measured: o_dsync, 251 writes and 120 flushes counted =
    diskstats, missed 1). Hence short <= missed, and missed only where the
    kernel hides completions (host_hides_completions)."""
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    short = {op: n - got.get(op, 0) for op, n in truth.items()}
    extra = {op: n for op, n in got.items() if n and op not in truth}
    assert not extra and min(short.values(), default=0) >= 0 and \
        sum(short.values()) <= missed, f"{what}: counted {got} + missed {missed} != {truth}"
    _missed_only_where_hidden(missed, what, f"{missed} completions counted apart, "
                              f"{sum(short.values())} of them in the window")


def _missed_only_where_hidden(missed, what, detail):
    """A missed completion is allowed, and printed, only on a kernel that
    hides completions from BPF (host_hides_completions)."""
    if missed:
        assert host_hides_completions(), \
            f"{what}: {missed} completions missed on a kernel that runs BPF for every one"
        print(f"    hidden from BPF by this host's kernel: {what}: {detail}", flush=True)


def cell(report, layer, op):
    for c in report["cells"]:
        if c["layer"] == layer and c["op"] == op:
            return c
    raise AssertionError(f"no cell {layer} {op} in report: {report}")


def count(report, layer, op):
    return cell(report, layer, op)["count"]


def run(*args, timeout=60, check=False):
    p = run_process(args, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode:
        raise AssertionError(f"{args} exited {p.returncode}: {p.stderr}")
    return p


class FtraceInstance:
    """The kernel's own events on one disk through an ftrace instance of our
    own (no BPF): an independent count. events: (category, event) pairs,
    each filtered by field == value (filt; None: every event), off until
    start()."""

    def __init__(self, tag, events, filt, buffer_kb=8192):
        tracefs = "/sys/kernel/tracing"
        self.dir = os.path.join(tracefs, "instances", f"iosb-{tag}-{os.getpid()}")
        for cat, _ in events:
            if not os.path.isdir(os.path.join(tracefs, "events", cat)):
                raise Skip(f"no tracefs {cat} events")
        os.mkdir(self.dir)
        # A new instance records from its making (tracing_on reads 1).
        self._on("0")
        for cat, ev in events:
            d = os.path.join(self.dir, "events", cat, ev)
            if filt:
                with open(os.path.join(d, "filter"), "w") as f:
                    f.write(filt)
            with open(os.path.join(d, "enable"), "w") as f:
                f.write("1")
        with open(os.path.join(self.dir, "buffer_size_kb"), "w") as f:
            f.write(str(buffer_kb))

    def _on(self, v):
        with open(os.path.join(self.dir, "tracing_on"), "w") as f:
            f.write(v)

    def set_option(self, name, value):
        """An option of this instance's own (options/NAME: record-tgid)."""
        with open(os.path.join(self.dir, "options", name), "w") as f:
            f.write(value)

    def clear(self):
        """Empties the buffer for the next start()."""
        with open(os.path.join(self.dir, "trace"), "w") as f:
            f.write("")

    def start(self):
        self._on("1")

    def stop(self):
        """Stops tracing; returns what it recorded."""
        self._on("0")
        with open(os.path.join(self.dir, "trace")) as f:
            text = f.read()
        assert "LOST" not in text, "ftrace lost events: the count would be short"
        # A full buffer overwrites its oldest events and says so only in
        # each CPU's stats: an overrun would make the count short.
        for cpu in os.listdir(os.path.join(self.dir, "per_cpu")):
            with open(os.path.join(self.dir, "per_cpu", cpu, "stats")) as f:
                stats = dict(line.split(":", 1) for line in f if ":" in line)
            lost = {k: int(stats[k]) for k in ("overrun", "commit overrun", "dropped events")
                    if k in stats and int(stats[k])}
            assert not lost, f"ftrace lost events on {cpu}: {lost}: the count would be short"
        return text

    def close(self):
        with contextlib.suppress(OSError):
            self._on("0")
        os.rmdir(self.dir)


class HiddenCompletions:
    """Which of a disk's completions the kernel hides from BPF, counted
    without BPF (host_hides_completions): an ftrace instance records each
    block_rq_complete on the disk with the task that was current
    (record-tgid); those on top of PID 1 are the hidden ones. start(),
    then stop() -> (completions, hidden). buffer_kb a CPU: an overrun fails
    (FtraceInstance.stop)."""

    def __init__(self, disk, buffer_kb=8192):
        self.ft = FtraceInstance("hidden", [("block", "block_rq_complete")],
                                 f"dev == {kernel_dev_t(disk)}", buffer_kb=buffer_kb)
        on_cleanup("ftrace instance", self.ft.close)
        self.ft.set_option("record-tgid", "1")

    def start(self):
        self.ft.clear()
        self.ft.start()

    def stop_events(self):
        """Stops; per completion recorded, (hidden, fields): fields are the
        event's own, "7,0 W () 8 + 16 [0]" split."""
        events = []
        for line in self.ft.stop().splitlines():
            if line.startswith("#") or "block_rq_complete:" not in line:
                continue
            events.append((on_pid1(line), line.split("block_rq_complete:")[1].split()))
        return events

    def stop(self):
        events = self.stop_events()
        return len(events), sum(hidden for hidden, _ in events)


def on_pid1(line):
    """Did this ftrace line (record-tgid) run on top of a thread of PID 1?
    "comm-tid (   tgid) [cpu] flags time: event: ..." """
    return line[line.index("(") + 1:line.index(")")].strip() == "1"


def fincore_pages(path):
    """Pages of path in the page cache, by util-linux's fincore (mincore)."""
    p = run("fincore", "--bytes", "--noheadings", "--output", "PAGES", path, check=True)
    return int(p.stdout.split()[0])


def evict_pages(path):
    """Takes one file's pages out of the page cache, and no other file's
    (the vm sysctl that drops caches would empty the whole machine's):
    written back first (fsync), then dropped (POSIX_FADV_DONTNEED), and
    fincore must find none left."""
    if not shutil.which("fincore"):
        raise Skip("fincore (util-linux) missing")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    left = fincore_pages(path)
    assert left == 0, f"{path}: {left} pages cached after POSIX_FADV_DONTNEED"


def kernel_dev_t(name):
    """A disk's dev_t as the kernel encodes it (tracepoint fields)."""
    with open(f"/sys/class/block/{name}/dev") as f:
        major, minor = (int(x) for x in f.read().split(":"))
    return (major << 20) | minor


class LoopDevice:
    """A throwaway loop device over a file in a temp dir."""

    def __init__(self, tmpdir, size_mib=64, name="disk.img", partitioned=False):
        self.path = os.path.join(tmpdir, name)
        with open(self.path, "wb") as f:
            f.truncate(size_mib << 20)
        if partitioned:
            p = run_process(["sfdisk", "--quiet", self.path], input="label: dos\n,\n",
                               capture_output=True, text=True)
            if p.returncode:
                raise AssertionError(f"sfdisk failed: {p.stderr}")
        args = ["losetup", "-f", "--show"] + (["-P"] if partitioned else []) + [self.path]
        p = run(*args)
        if p.returncode:
            raise Skip(f"cannot create a loop device: {p.stderr.strip()}")
        self.dev = p.stdout.strip()
        self.attached = True
        on_cleanup(f"loop device {self.dev}", self.close)
        self.name = os.path.basename(self.dev)
        if partitioned and not os.path.exists(f"/sys/class/block/{self.name}p1"):
            # Without udev the partition scan may not happen: ask for it.
            run("partx", "-a", self.dev)
        # Let anything that probes new devices finish before we count.
        time.sleep(0.2)

    def close(self):
        """Detaches the device (once: its number may be reused after)."""
        if self.attached:
            self.attached = False
            run("losetup", "-d", self.dev, check=True)


def bpf_prog_ids():
    p = run("bpftool", "-j", "prog", "list", check=True)
    return {prog["id"] for prog in json.loads(p.stdout or "[]")}


def held_prog_ids(pid):
    """Ids of the BPF programs a process holds, from its descriptors."""
    ids = set()
    fdinfo = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fdinfo):
        try:
            with open(os.path.join(fdinfo, fd)) as f:
                ids |= {int(l.split()[1]) for l in f if l.startswith("prog_id:")}
        except OSError:
            continue
    return ids


def held_prog_runs(pid):
    """{program name: runs} of the BPF programs a process holds: counted only
    while some process holds BPF stats on (iostackbreak --stats does)."""
    runs = {}
    for prog_id in held_prog_ids(pid):
        p = run("bpftool", "-j", "prog", "show", "id", str(prog_id))
        if p.returncode == 0:
            info = json.loads(p.stdout)
            runs[info.get("name", str(prog_id))] = info.get("run_cnt", 0)
    return runs


def recursion_misses(pid):
    """The runs the kernel skipped of the BPF programs a process holds
    because the same program was already running on that CPU (an interrupt
    in the middle of it: bpf_prog_info.recursion_misses). Each program has
    its own guard, so two tools on one tracepoint can miss different
    events; read while the process lives."""
    total = 0
    for prog_id in held_prog_ids(pid):
        p = run("bpftool", "-j", "prog", "show", "id", str(prog_id))
        if p.returncode == 0:
            total += json.loads(p.stdout).get("recursion_misses", 0)
    return total


# The system calls of each op of the syscall layer (bpf/cells.def).
SYSCALL_NAMES = {
    "read": ("read", "pread64", "readv", "preadv", "preadv2"),
    "write": ("write", "pwrite64", "writev", "pwritev", "pwritev2"),
    "open": ("open", "openat", "openat2", "creat"),
    "fsync": ("fsync", "fdatasync"),
}
KINDS = ("pipe", "socket", "other")


def strace_fd_kind(annotation):
    """The kind of file strace --decode-fds=path,socket,dev names: None for
    storage (a path: a regular file or a directory; a block device), else
    "pipe", "socket" or "other" as the tool counts them."""
    if annotation.startswith("pipe:"):
        return "pipe"
    if re.match(r"^(socket|UNIX|TCP|TCPv6|UDP|UDPv6|NETLINK|UNIX-STREAM)[:\[]", annotation):
        return "socket"
    if annotation.startswith("anon_inode:") or "<char " in annotation:
        return "other"
    assert annotation.startswith("/"), annotation
    return None


def strace_calls(cmd, cwd=None, timeout=120, children=True):
    """The syscall layer's calls of a deterministic command, per strace -f:
    ({op: calls on storage files}, {(op, kind): calls left out}). A call on
    a descriptor that is not open is "other"; an open goes by the file it
    returned, and a failed one counts as storage (as the tool counts them).
    children=False: the command's own process only (--no-children)."""
    op_of = {name: op for op, names in SYSCALL_NAMES.items() for name in names}
    storage = {op: 0 for op in SYSCALL_NAMES}
    left = {(op, k): 0 for op in SYSCALL_NAMES for k in KINDS}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        # -ff: a file per process, so no call is split over two lines.
        p = run_process(["strace", *(["-ff"] if children else []),
                            "--decode-fds=path,socket,dev", "-o",
                            os.path.join(d, "st"), "-e", "trace=" + ",".join(op_of), *cmd],
                           capture_output=True, text=True, timeout=timeout, cwd=cwd)
        assert p.returncode == 0, f"strace {cmd}: {p.stderr}"
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    m = re.match(r"^(\w+)\(", line)
                    if not m or m.group(1) not in op_of:
                        continue  # signals, exits
                    op = op_of[m.group(1)]
                    if op == "open":
                        r = re.search(r"\) += (-?\d+)(?:<(.*)>)?(?: .*)?$", line)
                        assert r, line
                        kind = None if int(r.group(1)) < 0 else strace_fd_kind(r.group(2))
                    else:
                        a = re.match(r"^\w+\(\d+(<.*?>)?(?:, |\))", line)
                        assert a, line
                        kind = "other" if a.group(1) is None else strace_fd_kind(a.group(1)[1:-1])
                    if kind is None:
                        storage[op] += 1
                    else:
                        left[op, kind] += 1
    return storage, left
