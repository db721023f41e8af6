"""Following the process tree: `-- COMMAND` and `-p PID -f` count what every
process of the tree did, checked against strace -f (which follows forks the
same way) and against the workloads' own counts."""

import json
import os
import subprocess
import tempfile
import time

from harness import IOWORK, TOOL, Skip, Tool, check_blk_count, count, run
from harness import test
from harness import Process
from test_host import strace_counts



def static_iowork():
    static = IOWORK + "-static"
    if not os.path.exists(static):
        raise Skip("build/iowork-static missing (make all builds it)")
    return static


def tool_report(*args):
    p = run(TOOL, "--json", "-T", "syscall", *args, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1]), p.stderr


@test
def a_command_and_the_two_workloads_it_forks():
    static = static_iowork()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        run(IOWORK, "-c", "pread", "1", a, check=True)
        run(IOWORK, "-c", "pread", "1", b, check=True)
        cmd = ["sh", "-c", f"{static} pread 300 {a} & {static} pread 200 {b}; wait"]
        want = strace_counts(cmd)
        assert want["read"] >= 500, want
        rep, _ = tool_report("--", *cmd)
        for op, n in want.items():
            assert count(rep, "syscall", op) == n, (op, n, rep)
        # -P: one row per workload process, each with its own count.
        rep, _ = tool_report("-P", "--", *cmd)
        rows = [c for c in rep["cells"] if c["op"] == "read" and c["comm"] == "iowork-static"]
        assert len(rows) == 2, rep["cells"]
        # Each makes its N preads plus the reads one run of it makes
        # whatever N is, counted by strace on a run with N = 1.
        setup = strace_counts([static, "pread", "1", a])["read"] - 1
        per_proc = sorted(r["count"] for r in rows)
        assert per_proc == [200 + setup, 300 + setup], (per_proc, setup)
        assert sum(r["count"] for r in rep["cells"] if r["op"] == "read") == want["read"]
        # --no-children: the shell alone, exactly what strace without -f
        # counts of it (its loader's reads of its libraries).
        own = strace_counts(cmd, children=False)
        rep, _ = tool_report("--no-children", "--", *cmd)
        print(f"    the shell alone, per strace: {own}", flush=True)
        for op, n in own.items():
            assert count(rep, "syscall", op) == n, (op, n, rep)


@test
def a_fork_chain_three_levels_deep():
    static = static_iowork()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        f = os.path.join(tmp, "f")
        run(IOWORK, "-c", "pread", "1", f, check=True)
        # "; true" keeps each shell from exec'ing its last command: a fork
        # at every level.
        inner = f"{static} pread 123 {f}; true"
        cmd = ["sh", "-c", f"sh -c 'sh -c \"{inner}\"; true'; true"]
        want = strace_counts(cmd)
        assert want["read"] >= 123, want
        rep, _ = tool_report("--", *cmd)
        for op, n in want.items():
            assert count(rep, "syscall", op) == n, (op, n, rep)


@test
def five_hundred_short_lived_children():
    static = static_iowork()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        f = os.path.join(tmp, "f")
        run(IOWORK, "-c", "pread", "1", f, check=True)
        cmd = ["sh", "-c", f"i=0; while [ $i -lt 500 ]; do {static} pread 1 {f}; "
               "i=$((i+1)); done"]
        want = strace_counts(cmd)
        assert want["read"] >= 500, want
        rep, _ = tool_report("--", *cmd)
        for op, n in want.items():
            assert count(rep, "syscall", op) == n, (op, n, rep)
        assert rep["dropped_by_reason"]["process_set_full"] == 0, rep


def tool_map_ids(pid):
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as fi:
                ids |= {int(l.split()[1]) for l in fi if l.startswith("map_id:")}
        except OSError:
            continue
    return ids


def followed_set(tool_pid):
    """The entries of the tool's set of followed processes, read by bpftool."""
    for mid in tool_map_ids(tool_pid):
        info = json.loads(run("bpftool", "-j", "map", "show", "id", str(mid)).stdout)
        if info.get("name") == "followed":
            return json.loads(run("bpftool", "-j", "map", "dump", "id", str(mid)).stdout)
    raise AssertionError("the tool has no 'followed' map")


# A parent that forks children when told to: each child makes one pread and
# exits; the parent reads nothing from files itself.
PARENT = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("READY", flush=True)
for line in sys.stdin:
    if line.startswith("fork"):
        pids = []
        for _ in range(int(line.split()[1])):
            pid = os.fork()
            if pid == 0:
                os.pread(fd, 1, 0)
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        print("DONE", ",".join(map(str, pids)), flush=True)
    else:
        break
"""


@test
def p_with_children_follows_forks_after_attach_and_forgets_them():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        f = os.path.join(tmp, "f")
        with open(f, "wb") as out:
            out.write(b"x" * 4096)
        parent = Process(["python3", "-c", PARENT, f], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        assert parent.stdout.readline().startswith("READY")
        tool = Tool("-T", "syscall", "-p", str(parent.pid), "-f", "-P", "--json")
        try:
            parent.stdin.write("fork 500\n")
            parent.stdin.flush()
            done = parent.stdout.readline().split()
            assert done[0] == "DONE", done
            children = {int(p) for p in done[1].split(",")}
            time.sleep(0.2)
            left = followed_set(tool.proc.pid)
            assert left == [], f"{len(left)} processes still in the set: {left[:5]}"
        finally:
            parent.stdin.write("quit\n")
            parent.stdin.close()
            parent.wait(timeout=30)
        rc, out, err = tool.wait(timeout=30)  # the -p process exited: the run ends
        assert rc == 0, err
        rep = json.loads(out.splitlines()[-1])
        reads = {c["pid"]: c["count"] for c in rep["cells"] if c["op"] == "read"}
        assert sum(reads.get(p, 0) for p in children) == 500, reads
        assert all(reads.get(p) == 1 for p in children), \
            [(p, reads.get(p)) for p in children if reads.get(p) != 1][:5]
        assert rep["dropped_by_reason"]["process_set_full"] == 0, rep


@test
def standard_tools_in_a_shell_script_match_strace():
    cmd = ["sh", "-c", "cat /etc/passwd | wc -l >/dev/null; ls /usr/bin >/dev/null; "
           "grep -c root /etc/group >/dev/null; sort /etc/hostname | uniq >/dev/null"]
    want = strace_counts(cmd)
    rep, _ = tool_report("--", *cmd)
    for op, n in want.items():
        assert count(rep, "syscall", op) == n, (op, n, rep)


@test
def block_requests_of_the_whole_tree_are_counted():
    """-T blk with a command: the requests its grandchild submits are its."""
    from harness import LoopDevice, diskstats
    static = static_iowork()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            cmd = ["sh", "-c", f"sh -c '{static} -D pread 150 {loop.dev}; true'; true"]
            before = diskstats(loop.name)
            p = run(TOOL, "--json", "-T", "blk", "-d", loop.name, "--",
                    *cmd, timeout=120)
            after = diskstats(loop.name)
            assert p.returncode == 0, p.stderr
            rep = json.loads(p.stdout.splitlines()[-1])
            reads = after[0] - before[0]
            assert reads >= 150, (before, after)
            check_blk_count(rep, count(rep, "blk", "read"), reads, "the grandchild's reads")
            p = run(TOOL, "--json", "-T", "blk", "-d", loop.name,
                    "--no-children", "--", *cmd, timeout=120)
            rep = json.loads(p.stdout.splitlines()[-1])
            assert count(rep, "blk", "read") == 0, rep
        finally:
            loop.close()


@test
def p_with_children_follows_existing_descendants_threads_and_events():
    """-p SHELL -f where the workload is the shell's grandchild, started
    before the tool and doing its reads on four threads: its reads are all
    counted, split per process (-P), and each is an event (--slower=0)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        f, ready = os.path.join(tmp, "f"), os.path.join(tmp, "ready")
        with open(f, "wb") as out:
            out.write(os.urandom(16 * 4096))
        sh = Process(["sh", "-c", f"sh -c '{IOWORK} -w -t 4 pread 400 {f} > {ready}'; true"])
        deadline = time.monotonic() + 30
        while not (os.path.exists(ready) and open(ready).read().startswith("READY")):
            assert time.monotonic() < deadline, "iowork did not get ready"
            time.sleep(0.05)
        pid = int(open(ready).read().split()[1])
        tool = Tool("-T", "syscall", "-p", str(sh.pid), "-f", "-P", "--slower=0", "--json")
        os.kill(pid, 10)  # SIGUSR1: the measured phase
        assert sh.wait(timeout=60) == 0
        rc, out, err = tool.wait(timeout=60)  # the -p shell exited: the run ends
    assert rc == 0, err
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    rep = [o for o in lines if "cells" in o][-1]
    reads = [c for c in rep["cells"] if c["op"] == "read" and c.get("pid") == pid]
    assert len(reads) == 1 and reads[0]["count"] == 400, reads
    by_proc = [b for b in rep["breakdown_by_process"] if b["pid"] == pid and b["op"] == "read"]
    assert len(by_proc) == 1 and by_proc[0]["count"] == 400, by_proc
    events = [o for o in lines if o.get("event") == "io" and o["pid"] == pid and o["op"] == "read"]
    assert len(events) == 400 and len({e["tid"] for e in events}) == 4, len(events)
    assert rep["lost"] == 0, rep
