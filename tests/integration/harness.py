"""Shared plumbing for the integration tests: run the tool and the workload,
wait for their handshakes, read the kernel's own counters.

The tests compare iostackbreak's counts with independent truths: the
workload's own count, /proc/PID/io and /proc/diskstats.

Nothing a test makes outlives it: every process, loop device, cgroup, mount
and temporary directory registers its cleanup here (on_cleanup), and run.py
runs them all, last made first, after each test however it ended."""

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


class TestPopen(subprocess.Popen):
    """Every process a test starts, directly, through subprocess.run or a
    helper here: in a process group of its own (so that its children can be
    stopped with it), with stop_group() registered as its cleanup."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("start_new_session", True)
        super().__init__(*args, **kwargs)
        on_cleanup(f"process {pid_and_name(self)}", stop_group, self)


# The tests call subprocess.Popen and subprocess.run (which looks Popen up
# in its module): both now start a TestPopen.
subprocess.Popen = TestPopen


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


class Tool:
    """iostackbreak running in the background until stop()."""

    def __init__(self, *args, timeout=60, env=None, prefix=()):
        # prefix: a command that execs it (unshare ... sh -c 'exec "$@"').
        self.args = [*prefix, TOOL, *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **env} if env else None)
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
        # prefix: a command that execs it (taskset -c 1 ...): same pid. By
        # default the CPU pid1_off_the_disk() keeps for the workloads.
        if prefix is None:
            prefix = _workload_prefix
        self.args = [*prefix, IOWORK, "-w", *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
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

    def finish(self, timeout=120):
        """Waits for the measured phase to end; returns the result fields."""
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"{self.args} failed: {out} {err}"
        line = [l for l in out.splitlines() if l.startswith("iowork ")][-1]
        return dict(kv.split("=", 1) for kv in line.split()[1:])


def read_proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def diskstats(name):
    """(reads completed, writes completed, flushes completed) of a disk."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                # Field 16 of the kernel's list (iostats.rst), 19th of the line (after 3 id fields).
                flushes = int(fields[18]) if len(fields) > 18 else 0
                return int(fields[3]), int(fields[7]), flushes
    raise AssertionError(f"{name} not in /proc/diskstats")


def diskstats_merged(name):
    """(reads, writes) merged into a request of another: fields 2 and 6."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                return int(fields[4]), int(fields[8])
    raise AssertionError(f"{name} not in /proc/diskstats")


def diskstats_writes(name):
    """(writes completed, sectors written, flushes completed) of a disk."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                return int(fields[7]), int(fields[9]), int(fields[18]) if len(fields) > 18 else 0
    raise AssertionError(f"{name} not in /proc/diskstats")


def kernel_skips_pid1():
    """Does this kernel run no BPF program while a thread of PID 1 is
    current? The tool finds out from BTF and says so under --plan (the
    note of src/planner.h, BPF_SKIPS_PID1_NOTE)."""
    global _SKIPS_PID1
    if _SKIPS_PID1 is None:
        p = subprocess.run([TOOL, "--plan", "-T", "blk"], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        _SKIPS_PID1 = "bpf_prog_aux.init_owned" in p.stdout
    return _SKIPS_PID1


_SKIPS_PID1 = None


# PID 1 is kept off a CPU by a cpuset of its own (keep_pid1_on); the cgroup
# v1 hierarchy this kind of machine mounts it on.
CPUSET_ROOT = "/sys/fs/cgroup/cpuset"
PID1_CPUSET = os.path.join(CPUSET_ROOT, "iosb-pid1")
# Holders of PID 1's cpuset (keep_pid1_on): the last one to let go ends it.
_pid1_holds = 0


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _cgroup_procs(cgroup):
    with open(os.path.join(cgroup, "cgroup.procs")) as f:
        return [int(p) for p in f.read().split()]


def keep_pid1_on(cpu):
    """Keeps every thread of PID 1 on cpu, the threads it starts meanwhile
    too; returns the function that gives them back the machine's CPUs.

    PID 1 (the sandbox's init, a thread-pool runtime) starts threads as it
    works. Pinned thread by thread (sched_setaffinity), a thread started
    while its creator was being pinned copied the creator's CPUs first and
    appeared after the listing (a direct-read test lost 1 of 400
    completions so), and a thread started
    while pinned kept the pin after the threads listed were restored (a
    later session found all 13 of PID 1's threads, and every command it
    started, on CPU 0). A cpuset moves all of PID 1's threads at once (the
    kernel stops forks meanwhile), a thread started after inherits it,
    and moving PID 1 back gives every thread the root's CPUs."""
    global _pid1_holds
    if not os.path.exists(os.path.join(CPUSET_ROOT, "cpuset.cpus")):
        raise AssertionError(f"no cgroup v1 cpuset at {CPUSET_ROOT}: PID 1 cannot be kept "
                             "off a CPU (the kernel hides completions on top of it)")
    if _pid1_holds == 0:
        os.makedirs(PID1_CPUSET, exist_ok=True)
        with open(os.path.join(CPUSET_ROOT, "cpuset.mems")) as f:
            _write(os.path.join(PID1_CPUSET, "cpuset.mems"), f.read().strip())
        _write(os.path.join(PID1_CPUSET, "cpuset.cpus"), str(cpu))
        _write(os.path.join(PID1_CPUSET, "cgroup.procs"), "1")
        for tid in map(int, os.listdir("/proc/1/task")):
            try:
                assert os.sched_getaffinity(tid) == {cpu}, (tid, os.sched_getaffinity(tid))
            except ProcessLookupError:
                pass  # a thread that ended meanwhile
    _pid1_holds += 1
    released = False

    def release():
        global _pid1_holds
        nonlocal released
        if released:
            return
        released = True
        _pid1_holds -= 1
        if _pid1_holds:
            return
        # PID 1 and whatever it started meanwhile (its children are born
        # in its cpuset) go back to the root, which has every CPU.
        for _ in range(100):
            procs = _cgroup_procs(PID1_CPUSET)
            if not procs:
                os.rmdir(PID1_CPUSET)
                return
            for pid in procs:
                try:
                    _write(os.path.join(CPUSET_ROOT, "cgroup.procs"), str(pid))
                except ProcessLookupError:
                    pass  # ended meanwhile
        raise AssertionError(f"{PID1_CPUSET}: processes keep arriving: {procs}")

    return release


# The prefix Work() runs a workload under by default: set while a test keeps
# PID 1 off its disk (pid1_off_the_disk), so every workload of that test
# submits, and has its requests completed, on a CPU PID 1 does not run on.
_workload_prefix = ()


def _set_workload_prefix(prefix):
    global _workload_prefix
    _workload_prefix = prefix


def workload_prefix():
    """The prefix a workload that is not iowork (fio, dd) runs under to
    stay off PID 1's CPU while the test keeps PID 1 off a disk; else ()."""
    return _workload_prefix


def pid1_state():
    """Where PID 1 may run, for a message that says why a completion was
    missed: its name, cpuset, its threads' CPUs, and whether this is the
    machine's own PID namespace (PID 1 is the kernel's only there)."""
    with open("/proc/1/comm") as f:
        comm = f.read().strip()
    with open("/proc/1/cpuset") as f:
        cpuset = f.read().strip()
    cpus = {}
    for tid in os.listdir("/proc/1/task"):
        try:
            mask = ",".join(map(str, sorted(os.sched_getaffinity(int(tid)))))
        except OSError:
            continue
        cpus[mask] = cpus.get(mask, 0) + 1
    with open("/proc/self/status") as f:
        nspid = next(line.split()[1:] for line in f if line.startswith("NSpid:"))
    return (f"PID 1 {comm}, cpuset {cpuset}, threads by CPUs {cpus}, "
            f"{'own' if len(nspid) == 1 else 'a nested'} PID namespace")


def pid1_off_the_disk(disk):
    """On a kernel that runs no BPF program on top of PID 1 (harness
    .check_blk_count), a test that needs every completion of disk seen
    keeps them off PID 1: PID 1's threads on CPU 0 (restored when the test
    ends), the disk completing each request on the CPU that submitted it;
    returns the prefix that runs a workload on CPU 1, which Work() then
    uses by default until the test ends. Elsewhere: (). Every LoopDevice
    does this: a test that counts a loop device's requests needs them all."""
    if not kernel_skips_pid1() or len(os.sched_getaffinity(0)) < 2:
        return ()
    with open(f"/sys/block/{disk}/queue/rq_affinity", "w") as f:
        f.write("2")
    on_cleanup("PID 1's cpuset", keep_pid1_on(0))
    prefix = ("taskset", "-c", "1")
    on_cleanup("the workloads' CPU", _set_workload_prefix, _workload_prefix)
    _set_workload_prefix(prefix)
    return prefix

def journal_off_pid1(disk):
    """The journal thread of the ext4 on disk (jbd2/DISK-8) submits its
    commits' requests: on the workloads' CPU (pid1_off_the_disk) when a
    test keeps PID 1 off the disk, so those complete away from PID 1 too.
    Call it after mounting; the thread goes with the unmount."""
    if not _workload_prefix:
        return
    cpus = {int(_workload_prefix[-1])}
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip().startswith(f"jbd2/{disk}-"):
                    os.sched_setaffinity(int(pid), cpus)
        except (OSError, ValueError):
            continue  # a process that ended meanwhile


# The block layer's programs keyed by request, even where one program per
# request serves (bpf/blk_stamped.bpf.h): only they see a completion the
# kernel never ran them for, at the struct's next use (check_blk_count), so
# the tests that count those use them; test_blk_stamped.py compares both.
KEYED = {"IOSB_BLK_STAMPS": "0"}
# One program per request even where the keyed programs are the default
# (a kernel that hides completions on top of PID 1).
STAMPED = {"IOSB_BLK_STAMPS": "1"}



def check_blk_count(rep, got, truth, what):
    """The block layer's count against an independent truth (fio, diskstats):
    every request is counted, or counted as missed, exactly:
    got + request_completion_missed == truth.

    A completion is missed only where the kernel runs no BPF program for
    it. On a kernel that runs them everywhere, none may be missed. The
    development machines' kernel (6.18.44-fc, a Firecracker/PVM sandbox
    build) runs none while a thread of PID 1 is current: bpf_trace_run*()
    return early when current->tgid == 1 and the program's
    bpf_prog_aux.init_owned is 0, counting no recursion miss (its
    disassembly, README "Block counts"). A completion that interrupts PID 1
    is seen by no BPF tool: libbpf-tools' biolatency misses the same ones
    (test_faults.thirty_two_fio_jobs_counted_exactly), and with PID 1
    pinned away from the CPU that completes the requests none is missed
    (test_blk_exact.blk_exact_with_pid1_on_another_cpu). There each miss
    is printed, and allowed."""
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    assert got + missed == truth, f"{what}: counted {got} + missed {missed} != {truth}"
    if missed:
        assert kernel_skips_pid1(), \
            f"{what}: {missed} completions missed on a kernel that runs BPF in every context"
        print(f"    PID 1 HIDDEN (this kernel runs no BPF program in PID 1's threads): {what}: "
              f"{missed} of {truth} completions interrupted PID 1 (counted apart)", flush=True)


def cell(report, layer, op):
    for c in report["cells"]:
        if c["layer"] == layer and c["op"] == op:
            return c
    raise AssertionError(f"no cell {layer} {op} in report: {report}")


def count(report, layer, op):
    return cell(report, layer, op)["count"]


def run(*args, timeout=60, check=False):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode:
        raise AssertionError(f"{args} exited {p.returncode}: {p.stderr}")
    return p


class FtraceInstance:
    """The kernel's own events on one disk through an ftrace instance of our
    own (no BPF): an independent count. events: (category, event) pairs,
    each filtered by field == value (filt; None: every event), off until
    start()."""

    def __init__(self, tag, events, filt):
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
            f.write("8192")

    def _on(self, v):
        with open(os.path.join(self.dir, "tracing_on"), "w") as f:
            f.write(v)

    def start(self):
        self._on("1")

    def stop(self):
        """Stops tracing; returns what it recorded."""
        self._on("0")
        with open(os.path.join(self.dir, "trace")) as f:
            text = f.read()
        assert "LOST" not in text, "ftrace lost events: the count would be short"
        return text

    def close(self):
        with contextlib.suppress(OSError):
            self._on("0")
        os.rmdir(self.dir)


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
            p = subprocess.run(["sfdisk", "--quiet", self.path], input="label: dos\n,\n",
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
        pid1_off_the_disk(self.name)
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
        p = subprocess.run(["strace", *(["-ff"] if children else []),
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
