"""The fast thread slots (bpf/thread.bpf.h): a thread's state in an array
slot at its id, in front of task storage. Each thread must keep its state
in one place for its life, free its slot as it exits, and lose nothing
when its slot is another's. Truth: the workload's own count of its preads
(threads_work.py), and the tracer's fast_slots map read from outside with
bpftool between the workload's steps."""

import json
import os
import signal
import subprocess
import sys
import tempfile

from harness import Tool, count, run
from harness import test
from harness import Process
from test_breakdown import check_report
from test_children import tool_map_ids

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threads_work.py")



def fast_slot_owners(tool_pid):
    """The thread ids that hold a fast slot of the tool's map, by index
    (0 for a free slot), read from the kernel with bpftool."""
    ids = tool_map_ids(tool_pid)
    for i in ids:
        info = json.loads(run("bpftool", "-j", "map", "show", "id", str(i), check=True).stdout)
        if info.get("name") != "fast_slots":
            continue
        dump = json.loads(run("bpftool", "-j", "map", "dump", "id", str(i),
                              check=True).stdout)
        # owner: (tid + 1) << 32 | the low bits of its start time; 0 free
        return [((e["formatted"]["value"]["owner"] >> 32) - 1) if e["formatted"]["value"]["owner"]
                else 0 for e in dump]
    raise AssertionError(f"no fast_slots map among the tool's maps {sorted(ids)}")


def traced_threads(slots, churn):
    """Runs threads_work.py under -T syscall -p with IOSB_FAST_SLOTS=slots;
    returns (report, the workload's preads, the owners seen at each step)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        work = Process([sys.executable, WORK, os.path.join(tmp, "data"), str(churn)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tool = None
        try:
            line = work.stdout.readline()
            assert line.startswith("READY "), (line, work.stderr.read())
            env = {"IOSB_FAST_SLOTS": str(slots)} if slots is not None else None
            tool = Tool("-T", "syscall", "-p", line.split()[1], "--json", env=env)
            seen = {}
            for want in ("HELD", "REUSED", "DONE"):
                work.send_signal(signal.SIGUSR1)
                line = work.stdout.readline().split()
                assert line and line[0] == want, (want, line, work.stderr.read())
                seen[want] = ([int(x) for x in line[1:]], fast_slot_owners(tool.proc.pid))
            rep = tool.stop_json()[-1]
            tool = None
        finally:
            if tool:
                tool.stop(signal.SIGKILL)
            work.send_signal(signal.SIGUSR1)
            work.wait(timeout=30)
        return rep, seen["DONE"][0][0], seen


@test
def one_fast_slot_is_held_freed_and_taken_again_losing_nothing():
    """One slot for every thread: A takes it, B keeps its state in task
    storage beside it, A's exit frees it, C takes it; the churn's threads
    take it and free it one after another. Every pread counted, none
    dropped, the parts of every call whole."""
    rep, preads, seen = traced_threads(1, 100)
    (a, b), owners = seen["HELD"]
    assert owners == [a], f"slot 0 held by {owners}, A={a} B={b}"
    (c,), owners = seen["REUSED"]
    assert owners == [c], f"slot 0 held by {owners} after A and B exited, C={c}"
    _, owners = seen["DONE"]
    assert owners == [0], f"slot 0 held by {owners} after every thread exited"
    assert count(rep, "syscall", "read") == preads == 103 * 50, (preads, rep["cells"])
    assert rep["dropped"] == 0, rep["dropped_by_reason"]
    check_report(rep)


@test
def each_thread_frees_its_fast_slot_as_it_exits():
    """The default slots: each thread of the workload holds the slot at its
    id while it lives, and no slot names one of them once it is gone."""
    rep, preads, seen = traced_threads(None, 200)
    (a, b), owners = seen["HELD"]
    mask = len(owners) - 1
    # B's id may point at A's slot (ids 4096 apart): B then lives in task storage.
    held_b = b if b & mask != a & mask else a
    assert (owners[a & mask], owners[b & mask]) == (a, held_b), (a, b, owners[a & mask],
                                                                 owners[b & mask])
    (c,), owners = seen["REUSED"]
    # Only the workload's threads (-p) take slots: C's, and no one's else.
    assert [o for o in owners if o] == [c], (c, [o for o in owners if o])
    _, owners = seen["DONE"]
    assert set(owners) == {0}, f"slots still held: {[o for o in owners if o]}"
    assert count(rep, "syscall", "read") == preads == 203 * 50, (preads, rep["cells"])
    assert rep["dropped"] == 0, rep["dropped_by_reason"]
    check_report(rep)


@test
def no_fast_slots_keeps_every_thread_in_task_storage():
    rep, preads, seen = traced_threads(0, 20)
    assert seen["HELD"][1] == [0], seen["HELD"][1]  # the map shrinks to one unused entry
    assert count(rep, "syscall", "read") == preads == 23 * 50, (preads, rep["cells"])
    assert rep["dropped"] == 0, rep["dropped_by_reason"]
    check_report(rep)
