"""Breakdowns (-P, -D, -F, -G) and filters (-p list, -t, -c, --cgroup) on the
host kernel, each count checked against the workloads' own counts and
/proc/diskstats, and every JSON report checked against the schema in the
man page."""

import json
import os
import re
import subprocess
import tempfile
import time

from harness import (TOOL, LoopDevice, Skip, Tool, Work, check_blk_count, count, disk_stats,
                     diskstats, diskstats_merged, host_hides_completions, make_cgroup, make_tempdir,
                     mount, run)
from harness import test
from harness import Process

# ---- the JSON schema of man/iostackbreak.8, checked field by field ----

CELL_FIELDS = {"layer": str, "op": str, "count": int, "sum_ns": int, "min_ns": int,
               "max_ns": int, "p50_ns": int, "p90_ns": int, "p99_ns": int, "buckets": list}
LAYER_OPS = {
    "syscall": {"read", "write", "open", "fsync"}, "vfs": {"read", "write", "open", "fsync"},
    "ext4": {"read", "write", "open", "fsync"}, "xfs": {"read", "write", "open", "fsync"},
    "btrfs": {"read", "write", "open", "fsync"},
    "blk": {"read", "write", "flush", "discard", "other"},
}
FLAG_NAMES = {"sync", "meta", "fua", "preflush"}


def check_cell(c, split=()):
    for k, t in CELL_FIELDS.items():
        assert isinstance(c.get(k), t), f"cell field {k}: {c}"
    assert c["op"] in LAYER_OPS[c["layer"]], c
    n = sum(b["count"] for b in c["buckets"])
    assert n == c["count"], f"buckets add to {n}, count {c['count']}"
    if c["count"]:
        assert 0 < c["min_ns"] <= c["p50_ns"] <= c["p90_ns"] <= c["p99_ns"] <= c["max_ns"], c
        assert c["min_ns"] * c["count"] <= c["sum_ns"] <= c["max_ns"] * c["count"], c
    for i, b in enumerate(c["buckets"]):
        assert set(b) == {"lo_ns", "hi_ns", "count"} and b["count"] > 0, b
        assert b["hi_ns"] is None or b["lo_ns"] < b["hi_ns"], b
        if i:
            assert c["buckets"][i - 1]["hi_ns"] <= b["lo_ns"], c["buckets"]
    extra = set(c) - set(CELL_FIELDS)
    allowed = set()
    if c["layer"] == "blk":  # failed requests, counted apart; the requests' bytes
        allowed |= {"errors", "error_sum_ns", "bytes"}
        assert isinstance(c["errors"], int) and isinstance(c["error_sum_ns"], int), c
        assert c["errors"] or not c["error_sum_ns"], c
        assert isinstance(c["bytes"], int) and c["bytes"] >= 0, c
        # Written back for its key (test_writeback.py checks the figures).
        if "writeback" in c:
            assert c["writeback"] is True, c
            allowed |= {"writeback"}
    if "pid" in split:
        allowed |= {"pid", "comm"}
    if "disk" in split and c["layer"] == "blk":
        allowed |= {"disk", "dev"}
    if "flags" in split and c["layer"] == "blk":
        allowed |= {"flags"}
    if "cgroup" in split:
        allowed |= {"cgroup", "cgroup_id", "container_id", "pod_uid"}
    assert extra == allowed, f"cell keys {extra}, want {allowed}: {c}"
    if "pid" in extra and c.get("writeback") and c["pid"] is None:
        assert c["comm"] == "(unknown)", c  # written back, dirtier not known
    elif "pid" in extra:
        assert isinstance(c["pid"], int) and c["pid"] > 0 and isinstance(c["comm"], str)
    if "disk" in extra:
        assert isinstance(c["disk"], str) and ":" in c["dev"], c
    if "flags" in extra:
        assert set(c["flags"]) <= FLAG_NAMES, c
    if "cgroup" in extra:
        assert c["cgroup"] is None or c["cgroup"].startswith("/"), c
        # A cgroup's id is its directory's inode number (the root's is 1).
        assert isinstance(c["cgroup_id"], int) and c["cgroup_id"] > 0, c
        where = c["cgroup"] and cgroup2_root()[0] + c["cgroup"]
        if where and os.path.isdir(where):  # a cgroup gone since has no inode to compare
            assert c["cgroup_id"] == os.stat(where).st_ino, c
        assert all(c[k] is None or isinstance(c[k], str) for k in ("container_id", "pod_uid")), c


# What calls waited for and did to the page cache, in each breakdown entry
# (the op's, and with -P each process's).
WHY_KEYS = ("lock_ns_by_kind", "journal_blk", "cache_miss_pages", "readahead_pages",
            "writeback_pages", "throttle_pauses", "cache_miss_pages_per_call")


def check_pages_per_call(b):
    """Every call of the entry in its histogram of pages per call."""
    h = b["cache_miss_pages_per_call"]
    if h is not None:
        assert h["calls"] == b["count"], b
        assert sum(x["count"] for x in h["buckets"]) == b["count"], b


def check_calls(rep):
    """"breakdown" as the man page has it: per op of the root layer, parts
    that add up to total_ns, count and total_ns those of the root cell."""
    cells = {(c["layer"], c["op"]): c for c in rep.get("totals", rep["cells"])
             if "pid" not in c}
    for b in rep["breakdown"]:
        assert set(b) == {"op", "root", "count", "total_ns", "blk_requests", "blk_bytes",
                          "parts", *WHY_KEYS}, b
        check_pages_per_call(b)
        root = cells[(b["root"], b["op"])]
        assert (b["count"], b["total_ns"]) == (root["count"], root["sum_ns"]), (b, root)
        assert sum(p["sum_ns"] for p in b["parts"]) == b["total_ns"], b
        for p in b["parts"]:
            assert set(p) == {"part", "sum_ns", "p50_ns", "p99_ns"}, p
            assert p["p50_ns"] <= p["p99_ns"], p
        names = [p["part"] for p in b["parts"]]
        # The waits come last, all three, or none (--no-offcpu); then lock,
        # journal and throttled where this kernel has their tracepoints.
        waits = [n for n in names
                 if n in ("io_wait", "blocked", "runqueue", "lock", "journal", "throttled")]
        assert names[0] == b["root"], names
        assert waits[:3] in ([], ["io_wait", "blocked", "runqueue"]), names
        assert all(w in ("lock", "journal", "throttled") for w in waits[3:]), names
        assert waits[3:] == sorted(waits[3:], key=("lock", "journal", "throttled").index), names
        assert not waits or names[-len(waits):] == waits, names
        if b["lock_ns_by_kind"] is not None:
            lock = sum(p["sum_ns"] for p in b["parts"] if p["part"] == "lock")
            assert sum(b["lock_ns_by_kind"].values()) == lock, b
    # -P: per process the same, adding up, and matching its keyed cell.
    if "breakdown_by_process" not in rep:
        return
    # With -G a process's keys may be split by cgroup: summed.
    keyed_cells = {}
    for c in rep["cells"]:
        if "pid" in c:
            k = keyed_cells.setdefault((c["layer"], c["op"], c["pid"]),
                                       {"count": 0, "sum_ns": 0})
            k["count"] += c["count"]
            k["sum_ns"] += c["sum_ns"]
    # A full breakdown map drops keys, parts' among them: counted, not summed.
    whole = rep["dropped_by_reason"]["breakdown_parts_map_full"] == 0
    per_op = {}
    for b in rep["breakdown_by_process"]:
        assert set(b) == {"op", "root", "count", "total_ns", "parts", "pid", "comm",
                          *WHY_KEYS}, b
        check_pages_per_call(b)
        assert not whole or sum(p["sum_ns"] for p in b["parts"]) == b["total_ns"], b
        c = keyed_cells[(b["root"], b["op"], b["pid"])]
        assert (b["count"], b["total_ns"]) == (c["count"], c["sum_ns"]), (b, c)
        per_op[b["op"]] = per_op.get(b["op"], 0) + b["count"]
    for b in rep["breakdown"]:
        assert per_op.get(b["op"], 0) + rep["dropped_by_reason"]["breakdown_parts_map_full"] \
            >= b["count"], (per_op, b)


def check_report(rep, split=(), parts_whole=True):
    want = {"time", "interval_s", "verdict", "cells", "skipped", "dropped",
            "dropped_by_reason", "left_out", "left_out_by_op"}
    assert isinstance(rep.get("verdict"), str) and rep["verdict"], rep.get("verdict")
    if split:
        want.add("totals")
    # Calls are split into parts whenever a layer of threads is traced.
    if any(c["layer"] != "blk" for c in rep.get("totals", rep["cells"])):
        want.add("breakdown")
        if "pid" in split:
            want.add("breakdown_by_process")
        if parts_whole:
            check_calls(rep)
    # Written back for the dirtiers: blk traced and someone to charge
    # (-P, -G or a task filter; test_writeback.py checks its figures).
    if "writeback" in rep:
        assert any(c["layer"] == "blk" for c in rep.get("totals", rep["cells"])), rep
        assert isinstance(rep["writeback"]["bytes"], int), rep["writeback"]
        want.add("writeback")
    if "disks_gone" in rep:  # only when a disk went away
        want.add("disks_gone")
        assert rep["disks_gone"] and all(set(g) == {"disk", "dev"} for g in rep["disks_gone"])
    assert set(rep) == want, f"report keys {set(rep)}, want {want}"
    assert isinstance(rep["time"], str) and rep["time"].endswith("Z"), rep["time"]
    assert isinstance(rep["interval_s"], (int, float)) and rep["interval_s"] > 0
    assert isinstance(rep["dropped"], int)
    assert sum(rep["dropped_by_reason"].values()) == rep["dropped"], rep
    for c in rep["cells"]:
        check_cell(c, split)
    for c in rep.get("totals", []):
        check_cell(c)
    for s in rep["skipped"]:
        assert set(s) == {"layer", "op", "reason"} and s["reason"], s


def keyed(rep, layer, op, **keys):
    """Sum of the counts of the keyed cells matching keys."""
    return sum(c["count"] for c in rep["cells"]
               if c["layer"] == layer and c["op"] == op
               and all(c.get(k) == v for k, v in keys.items()))


def total(rep, layer, op):
    for c in rep.get("totals", rep["cells"]):
        if c["layer"] == layer and c["op"] == op and "pid" not in c and "disk" not in c:
            return c["count"]
    raise AssertionError(f"no total for {layer} {op}")


# ---- tests ----


@test
def per_disk_counts_equal_diskstats_on_two_loop_devices():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        a = LoopDevice(tmp, name="a.img")
        b = LoopDevice(tmp, name="b.img")
        try:
            wa = Work("-D", "pread", "150", a.dev)
            wb = Work("-D", "pwrite", "230", b.dev)
            tool = Tool("-T", "blk", "-D", "--json")
            text = Tool("-T", "blk", "-D")
            before = (diskstats(a.name), diskstats(b.name))
            wa.go()
            wb.go()
            wa.finish()
            wb.finish()
            after = (diskstats(a.name), diskstats(b.name))
            rep = tool.stop_json()[0]
            check_report(rep, split=("disk",))
            da = [x - y for x, y in zip(after[0], before[0])]
            db = [x - y for x, y in zip(after[1], before[1])]
            assert da[0] == 150 and db[1] == 230, (da, db)
            # Each disk's reads and writes against its diskstats: at most
            # them, and short over both by exactly the completions the
            # kernel ran no program for (check_blk_count; measured once in
            # a suite run: b's writes 228 + 2 missed).
            truth = {("read", a.name): 150, ("write", a.name): da[1],
                     ("read", b.name): db[0], ("write", b.name): 230}
            got = {k: keyed(rep, "blk", k[0], disk=k[1]) for k in truth}
            assert all(got[k] <= truth[k] for k in truth), (got, truth)
            check_blk_count(rep, sum(got.values()), sum(truth.values()), "two loop devices")
            # Every request is in one key: keys add up to the totals.
            for op in ("read", "write"):
                assert keyed(rep, "blk", op) == total(rep, "blk", op), rep
            # The text breakdown shows its counts per disk, and what it
            # missed on its last line ("N request_completion_missed").
            rc, out, err = text.stop()
            assert rc == 0, err
            rows = {}
            for line in out.splitlines():
                f = line.split()
                if len(f) > 3 and f[0] == "blk" and f[2] in (a.name, b.name):
                    rows[(f[1], f[2])] = int(f[3].replace(",", ""))
            m = re.search(r"(\d+) request_completion_missed", out)
            text_missed = int(m.group(1)) if m else 0
            assert all(rows.get(k, 0) <= truth[k] for k in truth), (rows, truth)
            assert sum(rows.get(k, 0) for k in truth) + text_missed == sum(truth.values()), out
            assert rows.get(("read", a.name)) and rows.get(("write", b.name)), out
        finally:
            a.close()
            b.close()


@test
def per_process_counts_each_workload_at_syscall_and_blk():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            wa = Work("-D", "pread", "300", loop.dev)
            wb = Work("-D", "pread", "170", loop.dev)
            tool = Tool("-T", "syscall,blk", "-P", "--json", "-p", f"{wa.pid},{wb.pid}")
            before, merged0 = disk_stats(loop.name), diskstats_merged(loop.name)[0]
            wa.go()
            wb.go()
            wa.finish()
            wb.finish()
            # A direct read returns when its bio ends, a moment before the
            # request's completion reaches diskstats.
            time.sleep(0.2)
            after, merged = disk_stats(loop.name), diskstats_merged(loop.name)[0] - merged0
            rep = tool.stop_json()[0]
            check_report(rep, split=("pid",))
            # The two workloads read the same blocks at once: a read may
            # merge into the other's request waiting in the queue (diskstats'
            # reads merged), so requests + merged = the 470 reads.
            reads = after.reads - before.reads
            assert reads + merged == 470, (reads, merged)
            check_blk_count(rep, total(rep, "blk", "read"), reads, "-P blk reads")
            missed = rep["dropped_by_reason"]["request_completion_missed"]
            short = 0
            for w, n in ((wa, 300), (wb, 170)):
                assert keyed(rep, "syscall", "read", pid=w.pid) == n, rep["cells"]
                blk = keyed(rep, "blk", "read", pid=w.pid)
                assert blk <= n, (blk, n, rep["cells"])
                short += n - blk
                assert keyed(rep, "syscall", "read", pid=w.pid, comm="iowork") == n
            # A request counts for the process that started it: each read
            # merged into another's request, and each completion missed,
            # leaves its own process one short, and nothing else does.
            assert short == merged + missed, (short, merged, missed)
            pids = {c["pid"] for c in rep["cells"]}
            assert pids == {wa.pid, wb.pid}, pids
        finally:
            loop.close()


@test
def pid_list_and_comm_select_exactly_their_processes():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        run("dd", "if=/dev/zero", f"of={path}", "bs=1M", "count=4", "status=none", check=True)
        for mode in ("pids", "comm"):
            wa = Work("pread", "400", path)
            wb = Work("pread", "250", path)
            wc = Work("pread", "99", path)  # in the pid list? no: it must not count
            args = ["-p", f"{wa.pid},{wb.pid}"] if mode == "pids" else ["-c", "iowork"]
            tool = Tool("-T", "syscall", "-P", "--json", *args)
            # Noise from another program, outside both filters.
            noise = Process(["dd", f"if={path}", "of=/dev/null", "bs=4k",
                                      "status=none"])
            for w in (wa, wb, wc):
                w.go()
            for w in (wa, wb, wc):
                w.finish()
            noise.wait()
            rep = tool.stop_json()[0]
            check_report(rep, split=("pid",))
            assert keyed(rep, "syscall", "read", pid=wa.pid) == 400, (mode, rep["cells"])
            assert keyed(rep, "syscall", "read", pid=wb.pid) == 250, (mode, rep["cells"])
            want = {wa.pid, wb.pid} if mode == "pids" else {wa.pid, wb.pid, wc.pid}
            if mode == "comm":
                assert keyed(rep, "syscall", "read", pid=wc.pid) == 99
            assert {c["pid"] for c in rep["cells"]} == want, (mode, rep["cells"])
            assert noise.pid not in {c["pid"] for c in rep["cells"]}


@test
def tid_selects_one_thread():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "-t", "2", "pread", "400", path)
        tids = sorted(int(t) for t in os.listdir(f"/proc/{work.pid}/task"))
        workers = [t for t in tids if t != work.pid]
        assert len(workers) == 2, tids
        tool = Tool("-T", "syscall", "--json", "-t", str(workers[0]))
        work.go()
        work.finish()
        rep = tool.stop_json()[0]
        check_report(rep)
        # iowork splits N evenly: each worker thread makes 200 preads.
        assert count(rep, "syscall", "read") == 200, rep


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt, False
    mnt = make_tempdir(prefix="iosb-cgroup2-")
    p = mount("-t", "cgroup2", "none", where=mnt)
    if p.returncode:
        raise Skip(f"no cgroup v2 hierarchy and cannot mount one: {p.stderr.strip()}")
    return mnt, True


@test
def cgroup_selects_only_the_process_inside_it():
    root, _ = cgroup2_root()
    group = os.path.join(root, f"iosb-test-{os.getpid()}")
    child = make_cgroup(os.path.join(group, "child"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        inside = Work("-D", "pread", "210", loop.dev)
        outside = Work("-D", "pread", "130", loop.dev)
        # A descendant of the group counts as inside it.
        with open(os.path.join(child, "cgroup.procs"), "w") as f:
            f.write(str(inside.pid))
        tool = Tool("-T", "syscall,blk", "-P", "--json", "--cgroup", group)
        merged = diskstats_merged(loop.name)[0]
        inside.go()
        outside.go()
        inside.finish()
        outside.finish()
        merged = diskstats_merged(loop.name)[0] - merged
        rep = tool.stop_json()[0]
        check_report(rep, split=("pid",))
        assert {c["pid"] for c in rep["cells"]} == {inside.pid}, rep["cells"]
        assert keyed(rep, "syscall", "read", pid=inside.pid) == 210
        # Every read of the process inside is a request, counted or, where
        # the kernel hid its completion from BPF, counted missed, or merged
        # into a request of the other process: both read the same blocks
        # in order, and one's read of block k+1 can join the other's of
        # block k waiting in the queue (diskstats' reads merged). Three
        # fresh-clone runs of the suite counted 209 + 0 missed; 6 runs
        # alone, 210. The outside process's requests are filtered out.
        got = keyed(rep, "blk", "read", pid=inside.pid)
        missed = rep["dropped_by_reason"]["request_completion_missed"]
        print(f"    inside: blk reads {got} + missed {missed}; reads merged on the disk "
              f"{merged}", flush=True)
        assert 210 - merged <= got + missed <= 210, (got, missed, merged)
        assert missed == 0 or host_hides_completions(), missed


CONTAINER = "5f0c" * 16
POD = "3c9d2e41-7a55-4b8e-9f10-2b6c4d8e0a17"


@test
def per_cgroup_counts_each_cgroup_exactly():
    """-G: three cgroups the test makes, one nested in another and named as
    Kubernetes and containerd name theirs, each running a workload of known
    size: every cgroup's syscall reads are exactly its workload's own count,
    its blk reads the same and together what /proc/diskstats counted, under
    its path (the nested one under its own, not its parent's), with the
    container and pod ids the path holds and the directory's inode as id.
    The text report shows the same counts by path."""
    root, _ = cgroup2_root()
    top = f"/iosb-G-{os.getpid()}"
    pod = f"{top}/kubepods-besteffort-pod{POD.replace('-', '_')}.slice"
    paths = {  # relative to the cgroup v2 root, as the tool shows them
        "pod": pod,
        "container": f"{pod}/cri-containerd-{CONTAINER}.scope",
        "plain": f"{top}/plain",
    }
    n = {"pod": 90, "container": 150, "plain": 230}
    for p in paths.values():
        make_cgroup(root + p)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            works = {k: Work("-D", "pread", str(n[k]), loop.dev) for k in paths}
            for k, w in works.items():
                with open(root + paths[k] + "/cgroup.procs", "w") as f:
                    f.write(str(w.pid))
            # --cgroup keeps the rest of the machine out of the counts.
            tool = Tool("-T", "syscall,blk", "-G", "--json", "--cgroup", root + top)
            text = Tool("-T", "syscall,blk", "-G", "--cgroup", root + top)
            both = Tool("-T", "syscall,blk", "-P", "-G", "--json", "--cgroup", root + top)
            before, merged0 = diskstats(loop.name), diskstats_merged(loop.name)[0]
            for w in works.values():
                w.go()
            done = {k: int(w.finish()["done"]) for k, w in works.items()}
            # A direct read returns when its bio ends, a moment before the
            # request's completion reaches diskstats (469 of 470 once).
            time.sleep(0.2)
            after, merged = diskstats(loop.name), diskstats_merged(loop.name)[0] - merged0
            rep = tool.stop_json()[0]
            check_report(rep, split=("cgroup",))
            assert done == n, done
            assert {c["cgroup"] for c in rep["cells"]} == set(paths.values()), rep["cells"]
            for k, p in paths.items():
                assert keyed(rep, "syscall", "read", cgroup=p) == done[k], (k, rep["cells"])
                got = keyed(rep, "blk", "read", cgroup=p)
                assert got <= done[k], (k, got, done[k])
                ino = os.stat(root + p).st_ino
                for c in rep["cells"]:
                    if c["cgroup"] == p:
                        assert c["cgroup_id"] == ino, (c, ino)
                        assert c["pod_uid"] == (None if k == "plain" else POD), c
                        assert c["container_id"] == (CONTAINER if k == "container"
                                                     else None), c
            # Every block read is under its cgroup; those short are the
            # completions counted as missed (issue 19), no other: the
            # cgroups' blk reads + missed = diskstats (check_blk_count).
            # Reads of the same blocks at once may merge into one request
            # (diskstats' reads merged): requests + merged = the reads.
            reads = after[0] - before[0]
            assert reads + merged == sum(n.values()), (before, after, merged)
            check_blk_count(rep, keyed(rep, "blk", "read"), reads, "-G blk reads")
            # -P -G: keys by process and cgroup; the calls of a process
            # (breakdown_by_process) stay whole, one per process.
            rep = both.stop_json()[0]
            check_report(rep, split=("pid", "cgroup"))
            for k, p in paths.items():
                pid = works[k].pid
                assert keyed(rep, "syscall", "read", pid=pid, cgroup=p) == done[k], rep["cells"]
                calls = [b for b in rep["breakdown_by_process"] if b["pid"] == pid
                         and b["op"] == "read"]
                assert [b["count"] for b in calls] == [done[k]], calls
            rc, out, err = text.stop()
            assert rc == 0, err
            rows = {}
            for line in out.splitlines():
                f = line.split()
                # LAYER OP REQUESTS CONTAINER POD COUNT ... CGROUP: -G
                # charges written-back requests to their dirtiers, so the
                # REQUESTS column is there ("-" on a syscall row).
                if len(f) > 10 and f[:2] == ["syscall", "read"] and f[-1] in paths.values():
                    assert f[2] == "-", line
                    rows[f[-1]] = int(f[5].replace(",", ""))
            assert rows == {p: done[k] for k, p in paths.items()}, out
        finally:
            loop.close()


def six_workloads_in_three_keys(split, place):
    """Six workloads of 100 reads, in keys of --max-keys 3: at most three
    keys, and what the others did is counted as dropped, so the keys and
    the drops add up to the cell, itself exact. place(works) returns the
    options that select them (and puts them where they must be)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        run("dd", "if=/dev/zero", f"of={path}", "bs=1M", "count=1", "status=none", check=True)
        works = [Work("pread", "100", path) for _ in range(6)]
        opt = {"pid": "-P", "cgroup": "-G"}[split]
        tool = Tool("-T", "syscall", opt, "--max-keys", "3", "--json", *place(works))
        for w in works:
            w.go()
        # The truth: the workloads' own counts. They are all the calls the
        # tool sees (their opens came before it; their result lines go to
        # pipes, left out).
        truth = sum(int(w.finish()["done"]) for w in works)
        rep = tool.stop_json()[0]
        check_report(rep, split=(split,))
        lost = rep["dropped_by_reason"]["breakdown_map_full"]
        assert lost > 0, rep
        assert len(rep["cells"]) <= 3, rep["cells"]
        # The cells themselves lose nothing; the breakdown's losses are counted.
        assert truth == 600, truth
        assert total(rep, "syscall", "read") == truth, rep
        recorded = sum(c["count"] for c in rep["cells"])
        assert recorded + lost == truth, (recorded, lost, truth)


@test
def per_cgroup_keys_are_bounded_by_max_keys():
    """-G with six cgroups, one workload each, as -P below."""
    root, _ = cgroup2_root()
    top = f"{root}/iosb-Gmax-{os.getpid()}"

    def place(works):
        for i, w in enumerate(works):
            with open(make_cgroup(f"{top}/g{i}") + "/cgroup.procs", "w") as f:
                f.write(str(w.pid))
        return ["--cgroup", top]

    six_workloads_in_three_keys("cgroup", place)


@test
def a_full_breakdown_map_counts_what_it_drops():
    six_workloads_in_three_keys("pid", lambda works: ["-p", ",".join(str(w.pid) for w in works)])


@test
def request_flags_split_blk_writes():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            work = Work("-D", "pwrite", "120", loop.dev)
            tool = Tool("-T", "blk", "-F", "-d", loop.name, "--json")
            before = diskstats(loop.name)
            work.go()
            work.finish()
            after = diskstats(loop.name)
            rep = tool.stop_json()[0]
            check_report(rep, split=("flags",))
            assert after[1] - before[1] == 120
            writes = keyed(rep, "blk", "write")
            check_blk_count(rep, writes, 120, "-F writes")
            # O_DIRECT writes are synchronous requests: every one counted.
            sync = sum(c["count"] for c in rep["cells"]
                       if c["op"] == "write" and "sync" in c["flags"])
            assert sync == writes, rep["cells"]
        finally:
            loop.close()


@test
def timestamp_duration_and_interval_json_keep_the_schema():
    # -p this test's own process: other processes' storms of calls on a busy
    # machine could end between the reads of one report (the split calls'
    # invariants are checked exactly); the schema is the same.
    me = ("-p", str(os.getpid()))
    # --duration runs from the attach (the ready line) to the report: the
    # load and attach before it took 0.8-1.0 s in three runs, so the time
    # is taken from the ready line. From there to the exit: 2.10-2.54 s in
    # four runs (the report and the detach of its programs after the 2 s;
    # 2.54 s while other tests ran on the host);
    # 3 s leaves the sanitized build's slower exit room, not a second run.
    tool = Tool("-T", "syscall,blk", *me, "--timestamp", "--duration", "2")
    start = time.monotonic()
    rc, out, err = tool.wait(timeout=30)
    took = time.monotonic() - start
    print(f"    --duration 2: {took:.3f} s from the ready line to the exit", flush=True)
    assert rc == 0, err
    assert 2 <= took < 3, took
    first = [l for l in out.splitlines() if l.strip()][0]
    time.strptime(first, "%Y-%m-%d %H:%M:%S")
    p = run(TOOL, "-T", "syscall,blk", *me, "-P", "-D", "-F", "--json", "1", "2",
            timeout=30)
    assert p.returncode == 0, p.stderr
    reports = [json.loads(l) for l in p.stdout.splitlines()]
    assert len(reports) == 2
    for rep in reports:
        check_report(rep, split=("pid", "disk", "flags"))
    p = run(TOOL, "-T", "syscall,blk", *me, "--json", "--duration", "1", timeout=30)
    check_report(json.loads(p.stdout.splitlines()[-1]))
