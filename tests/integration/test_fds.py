"""Storage files only (issue 19): the syscall layer counts calls on regular
files, block devices and directories, and counts the rest as left out, by
kind; --all-fds counts every call.

Truths: the workload's own counts (fdkinds_work.py), /proc/PID/io, and
strace -f -y's reads of regular files for a shell pipeline into sqlite3."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from harness import TOOL, Skip, Tool, count, read_proc_io, strace_calls
from harness import test
from harness import Process, run_process

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fdkinds_work  # noqa: E402

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fdkinds_work.py")
C = fdkinds_work.COUNTS
OPS = ("read", "write", "open", "fsync")



# Kinds of the workload's descriptors -> the tool's: storage (None) or a
# left-out kind.
KIND = {"file": None, "dir": None, "pipe": "pipe", "fifo": "pipe", "socket": "socket",
        "eventfd": "other", "badfd": "other", "null": "other"}


def expected(all_fds):
    """(cell counts by op, left_out by (op, kind)) the workload must give."""
    cells = {op: 0 for op in OPS}
    left = {(op, k): 0 for op in OPS for k in ("pipe", "socket", "other")}
    calls = dict(C)
    calls["write", "pipe"] = fdkinds_work.RESULT_WRITES
    for (op, what), n in calls.items():
        if all_fds or KIND[what] is None:
            cells[op] += n
        else:
            left[op, KIND[what]] += n
    return cells, left


def run_workload(tool_args):
    """The workload traced by -p; returns (JSON report, /proc/PID/io delta)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        work = Process([sys.executable, WORK, tmp], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            line = work.stdout.readline()
            assert line.startswith("READY "), (line, work.stderr.read())
            pid = int(line.split()[1])
            tool = Tool("-T", "syscall", "-p", str(pid), "--json", *tool_args)
            before = read_proc_io(pid)
            work.send_signal(signal.SIGUSR1)
            assert work.stdout.readline() == "DONE\n"
            after = read_proc_io(pid)
            reports = tool.stop_json()
            work.send_signal(signal.SIGUSR1)
            assert work.wait(timeout=30) == 0, work.stderr.read()
        finally:
            if work.poll() is None:
                work.kill()
                work.wait()
    assert len(reports) == 1, reports
    return reports[0], {k: after[k] - before[k] for k in after}


def left_out_by_op(rep):
    return {(o["op"], k): o[k] for o in rep["left_out_by_op"] if o["layer"] == "syscall"
            for k in ("pipe", "socket", "other")}


@test
def only_storage_files_are_counted_and_the_rest_left_out_exactly():
    """Both syscall sources: the raw pair (tp_btf here) and the tracepoints."""
    cells, left = expected(all_fds=False)
    for attach in ("raw", "tracepoint"):
        rep, io = run_workload([f"--attach={attach}"])
        for op in OPS:
            assert count(rep, "syscall", op) == cells[op], (attach, op, cells, rep)
        assert left_out_by_op(rep) == left, (attach, rep["left_out_by_op"], left)
        for kind in ("pipe", "socket", "other"):
            want = sum(n for (op, k), n in left.items() if k == kind)
            assert rep["left_out"][kind] == want, (attach, kind, rep["left_out"], want)
        # /proc/PID/io counts every read and write that reached vfs_read or
        # vfs_write: all of them but the bad descriptor's reads.
        assert count(rep, "syscall", "read") + left["read", "pipe"] + \
            left["read", "socket"] + left["read", "other"] - C["read", "badfd"] == \
            io["syscr"], (attach, io, rep)
        assert count(rep, "syscall", "write") + left["write", "pipe"] + \
            left["write", "other"] == io["syscw"], (attach, io, rep)
        assert rep["dropped"] == 0, rep


@test
def all_fds_counts_every_descriptor():
    cells, _ = expected(all_fds=True)
    rep, io = run_workload(["--all-fds"])
    for op in OPS:
        assert count(rep, "syscall", op) == cells[op], (op, cells, rep)
    assert rep["left_out"] == {"pipe": 0, "socket": 0, "other": 0}, rep["left_out"]
    assert rep["left_out_by_op"] == [], rep["left_out_by_op"]
    assert count(rep, "syscall", "read") - C["read", "badfd"] == io["syscr"], (io, rep)


@test
def the_text_report_says_what_was_left_out():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        work = Process([sys.executable, WORK, tmp], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            pid = int(work.stdout.readline().split()[1])
            tool = Tool("-T", "syscall", "-p", str(pid))
            work.send_signal(signal.SIGUSR1)
            assert work.stdout.readline() == "DONE\n"
            rc, out, err = tool.stop()
            work.send_signal(signal.SIGUSR1)
            work.wait(timeout=30)
        finally:
            if work.poll() is None:
                work.kill()
                work.wait()
    assert rc == 0, err
    _, left = expected(all_fds=False)
    want = (f"(syscall left out: {left['read', 'pipe']} reads on pipes, "
            f"{left['read', 'socket']} on sockets, {left['read', 'other']} on other files, "
            f"{left['write', 'pipe']} write on a pipe, {left['write', 'other']} on other "
            f"files, {left['open', 'pipe']} opens on pipes, {left['open', 'other']} on "
            f"other files, {left['fsync', 'pipe']} fsyncs on pipes; --all-fds to count "
            "them)\n")
    # The note is broken into lines of 100 columns, the next ones indented.
    assert want in out.replace("\n ", " "), f"want {want!r} in:\n{out}"


PIPELINE = ('sqlite3 db "create table t(x integer, y text)"; '
            'seq 1 400 | sed "s/.*/insert into t values(&, hex(randomblob(300)));/" '
            '| sqlite3 db; echo "select count(*), sum(x) from t;" | sqlite3 db')


@test
def a_pipeline_into_sqlite3_counts_the_reads_of_files_strace_sees():
    """The issue's check: `-T syscall,blk -- sh -c 'seq ... | sqlite3 db'`
    counts only reads of files, as many as strace -f -y shows."""
    for tool in ("sqlite3", "strace"):
        if not shutil.which(tool):
            raise Skip(f"{tool} is not installed (scripts/install-test-deps.sh)")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        want, left = strace_calls(["sh", "-c", PIPELINE], cwd=tmp)
        os.unlink(os.path.join(tmp, "db"))
        p = run_process([TOOL, "-u", "-T", "syscall,blk", "--json", "--", "sh", "-c",
                            PIPELINE], capture_output=True, text=True, timeout=120, cwd=tmp)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout.splitlines()[-1])
    # sqlite3 reads its SQL from a pipe; the reads of the database are many.
    assert want["read"] > 100 and left["read", "pipe"] > 0, (want, left)
    print(f"    reads: {count(rep, 'syscall', 'read')} counted, strace {want['read']} on "
          f"storage files; left out {rep['left_out']}", flush=True)
    for op in OPS:
        assert count(rep, "syscall", op) == want[op], (op, want, left, rep["cells"])
    assert left_out_by_op(rep) == left, (left, rep["left_out_by_op"])
