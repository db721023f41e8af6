"""Stacks of block I/O (-K, -U) against a workload with known call paths:
build/stackwork, built with frame pointers, reads 100 blocks of 4 KiB with
O_DIRECT in read_hundred() and 300 in read_three_hundred(), and counts
what it read. It is traced as a command on a loop device of its own (-d),
and exits before the report: its user frames resolve from the maps read
while it lived.

Requests and bytes are counted at each request's origin, in the
submitter's context, so they are exact on any kernel: a completion the
kernel hides from BPF (harness.host_hides_completions) takes nothing from
them. The time weight is added at completion: there the count of timed
requests plus the completions counted missed equals the truth
(check_blk_count)."""

import collections
import json
import os
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from harness import (ROOT, LoopDevice, Process, Skip, Tool, check_blk_count, count, disk_stats,
                     mount, run, run_process, stop_group, test, unmount)

STACKWORK = os.path.join(ROOT, "build", "stackwork")
# The same program at -O2 without frame pointers, as distributions build theirs.
STACKWORK_NOFP = os.path.join(ROOT, "build", "stackwork-nofp")
HUNDRED, THREE_HUNDRED = 100 * 4096, 300 * 4096


def traced(loop, tmp, *args, prog=STACKWORK):
    """prog (stackwork) under -T blk -d LOOP ARGS --json --folded=FILE
    --flamegraph=TMP/stacks.svg: (the JSON report, the folded lines, the
    workload's own line, diskstats' reads and sectors read by the run)."""
    folded = os.path.join(tmp, "stacks.folded")
    before = disk_stats(loop.name)
    tool = Tool("-T", "blk", "-d", loop.name, "--json", f"--folded={folded}",
                f"--flamegraph={os.path.join(tmp, 'stacks.svg')}", *args,
                "--", prog, loop.dev)
    rc, out, err = tool.wait()
    after = disk_stats(loop.name)
    assert rc == 0, f"tool exited {rc}: {err}"
    lines = out.splitlines()
    work = [line for line in lines if line.startswith("stackwork ")]
    assert len(work) == 1, out
    reports = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(reports) == 1, out
    with open(folded) as f:
        rows = [line.rstrip("\n") for line in f]
    return (reports[0], rows, work[0], after.reads - before.reads,
            after.sectors_read - before.sectors_read)


def user_paths(rows, comm="stackwork"):
    """The folded rows summed by their user frames (those without _[k])."""
    paths = collections.Counter()
    for row in rows:
        stack, weight = row.rsplit(" ", 1)
        frames = stack.split(";")
        user = tuple(f for f in frames[1:] if not f.endswith("_[k]"))
        assert frames[0] == comm, row
        paths[user] += int(weight)
    return paths


def path_of(paths, function):
    """The one user path through function."""
    hits = [p for p in paths if function in p]
    assert len(hits) == 1, f"{function}: {hits} in {dict(paths)}"
    return hits[0]


def check_paths(paths, want_hundred, want_three_hundred, what):
    """Exactly two user paths, main -> read_* -> pread64, with their weights."""
    assert len(paths) == 2, f"{what}: {dict(paths)}"
    for fn, want in (("read_hundred", want_hundred), ("read_three_hundred", want_three_hundred)):
        p = path_of(paths, fn)
        assert paths[p] == want, f"{what}: {fn}: {paths[p]} != {want} ({p})"
        inner = p[p.index(fn):]
        assert len(inner) == 2 and "pread" in inner[1], \
            f"{what}: {fn} does not call pread64 directly: {p}"
        assert "main" in p[:p.index(fn)], f"{what}: {fn} not under main: {p}"
        print(f"    {what}: {';'.join(p[-3:])} {paths[p]}", flush=True)


def check_flamegraph(svg, frame, weight):
    """The SVG has frame with its weight, and in headless Chromium its
    script runs without an error and zooms to it (#zoom=, what a click on
    it does): the frame then spans the graph, and the screenshot is drawn."""
    if not shutil.which("chromium"):
        raise Skip("chromium is not installed: run scripts/install-test-deps.sh")
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    g = [e for e in root.iter(ns + "g") if e.get("data-n") == frame]
    assert len(g) == 1 and int(g[0].get("data-v")) == weight, [e.attrib for e in g]
    title = g[0].find(ns + "title").text
    assert title.startswith(f"{frame} ({weight:,} bytes"), title
    url = f"file://{svg}#zoom={frame}"
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", "--dump-dom", url],
                       capture_output=True, text=True, timeout=120)
    assert "Uncaught" not in p.stderr, p.stderr
    dom = ET.fromstring(p.stdout)
    assert dom.get("data-ready") == "1" and dom.get("data-zoom") == frame, dom.attrib
    z = [e for e in dom.iter(ns + "g") if e.get("data-n") == frame][0]
    width = float(z.find(ns + "rect").get("width"))
    assert abs(width - (int(root.get("width")) - 20)) < 0.01, width
    png = svg[:-4] + ".png"
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--window-size={root.get('width')},{root.get('height')}",
                        f"--screenshot={png}", url], capture_output=True, text=True, timeout=120)
    assert os.path.getsize(png) > 1000, p.stderr
    print(f"    flame graph: {frame} {weight:,} bytes, zoomed to {width:.0f} px in chromium",
          flush=True)


_KALLSYMS = []


def kallsyms_function(addr):
    """The text symbol of /proc/kallsyms at or below addr, as the report
    names it ("name [module]")."""
    if not _KALLSYMS:
        with open("/proc/kallsyms") as f:
            for line in f:
                a, t, name, *mod = line.split()
                if t in "tT" and int(a, 16):
                    _KALLSYMS.append((int(a, 16), f"{name} {mod[0]}" if mod else name))
        _KALLSYMS.sort()
    lo, hi = 0, len(_KALLSYMS)
    while lo < hi:
        mid = (lo + hi) // 2
        if _KALLSYMS[mid][0] <= addr:
            lo = mid + 1
        else:
            hi = mid
    return _KALLSYMS[lo - 1][1] if lo else None


def addr2line(module, addr):
    """The symbol eu-addr2line -S names addr of module by (symbol+offset,
    the table the tool reads; -f would name the DWARF function, which for
    libc's pread64 is another of its aliases)."""
    p = subprocess.run(["eu-addr2line", "-S", "-e", module, addr], capture_output=True,
                       text=True, check=True)
    return p.stdout.splitlines()[0].split("+")[0]


@test
def stacks_of_two_paths_exact_and_resolved():
    """-K -U: the folded stacks hold exactly the workload's two user paths,
    with 409,600 and 1,228,800 bytes (100 and 300 with --weight=requests),
    as the workload itself and /proc/diskstats count; the kernel frames
    name this kernel's submit path; a libc frame and a PIE frame resolve
    as eu-addr2line resolves the same addresses."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=8)
        try:
            rep, rows, work, reads, sectors = traced(loop, tmp, "-K", "-U")
            assert work.split()[-1] == f"bytes={HUNDRED + THREE_HUNDRED}", work
            # diskstats: the loop device saw the run's reads and no others.
            assert (reads, sectors * 512) == (400, HUNDRED + THREE_HUNDRED), (reads, sectors)
            check_paths(user_paths(rows), HUNDRED, THREE_HUNDRED, "bytes")

            st = rep["stacks"]
            assert st["weight"] == "bytes" and st["lost"]["requests"] == 0, st["lost"]
            assert st["lost"]["stacks"] == 0 and st["processes_unread"] == 0, st
            reqs = sum(e["ops"].get("read", {}).get("requests", 0) for e in st["stacks"])
            timed = sum(e["ops"].get("read", {}).get("timed", 0) for e in st["stacks"])
            assert reqs == 400, reqs
            # The time weight: every request timed, or its completion missed.
            check_blk_count(rep, timed, 400, "stacks: requests timed")
            for e in st["stacks"]:
                names = [f["name"] for f in e["kernel_frames"]]
                # This kernel's submit path, from the read through the
                # block device file (submit_bio_wait: a sync direct read).
                assert "blk_mq_submit_bio" in names and "vfs_read" in names, names
                assert any(n.startswith("submit_bio") for n in names), names
                # The tracer's own frames (its program, the tracepoint's
                # dispatch) are left out: the stack starts at the caller.
                assert names[0] == "blk_account_io_start", names
                for f in e["kernel_frames"]:
                    assert kallsyms_function(int(f["addr"], 16)) == f["name"], f
                assert e["ops"]["read"]["time_ns"] > 0, e["ops"]
            print("    kernel: " + ";".join(names[::-1][-6:]), flush=True)
            # Symbols against eu-addr2line, on the addresses looked up.
            libc = pie = None
            for e in st["stacks"]:
                for f in e["user_frames"]:
                    mod = f.get("module", "")
                    if "libc" in os.path.basename(mod) and "pread" in f["name"]:
                        libc = f
                    if mod == os.path.realpath(STACKWORK) and f["name"].startswith("read_"):
                        pie = f
            assert libc and pie, st["stacks"]
            for f in (libc, pie):
                assert f["resolved"], f
                got = addr2line(f["module"], f["elf_addr"])
                assert got == f["name"], f"{f}: eu-addr2line says {got}"
                print(f"    {os.path.basename(f['module'])} {f['elf_addr']}: {got}", flush=True)

            check_flamegraph(os.path.join(tmp, "stacks.svg"), "read_three_hundred",
                             THREE_HUNDRED)

            _, rows, _, reads, _ = traced(loop, tmp, "-U", "--weight=requests")
            assert reads == 400, reads
            check_paths(user_paths(rows), 100, 300, "requests")
        finally:
            loop.close()


@test
def call_stacks_of_two_paths_by_part():
    """-T syscall -U: the user stack of each system call, weighted by its
    time, a leaf per part. The workload's two paths hold exactly its 100
    and 300 preads (each has a syscall part), with their waits for the
    disk as [io_wait] leaves, and the time of every stack of reads adds up
    to the syscall read cell's, exactly: the parts of a call add up to it."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=8)
        try:
            folded = os.path.join(tmp, "calls.folded")
            tool = Tool("-T", "syscall", "-U", "--json", f"--folded={folded}", "--",
                        STACKWORK, loop.dev)
            rc, out, err = tool.wait()
            assert rc == 0, f"tool exited {rc}: {err}"
            rep = [json.loads(line) for line in out.splitlines() if line.startswith("{")][0]
            st = rep["stacks"]
            assert st["of"] == "calls" and st["weight"] == "time", st
            assert st["lost"]["requests"] == 0 and st["processes_unread"] == 0, st
            by_path = collections.defaultdict(dict)
            read_ns = 0
            for e in st["stacks"]:
                read = e["ops"].get("read")
                if not read:
                    continue
                read_ns += read["time_ns"]
                names = tuple(f["name"] for f in reversed(e["user_frames"]))
                by_path[names][e.get("part", "(whole call)")] = read
            cell = [c for c in rep["cells"] if c["layer"] == "syscall" and c["op"] == "read"][0]
            assert read_ns == cell["sum_ns"], (read_ns, cell["sum_ns"])
            for fn, n in (("read_hundred", 100), ("read_three_hundred", 300)):
                paths = [p for p in by_path if fn in p]
                assert len(paths) == 1, f"{fn}: {paths}"
                parts = by_path[paths[0]]
                assert parts["syscall"]["requests"] == n, parts
                assert parts["io_wait"]["time_ns"] > 0, parts
                assert "pread" in paths[0][-1], paths[0]
                print(f"    {';'.join(paths[0][-3:])}: {n} calls, parts "
                      + ", ".join(f"{k} {v['time_ns']} ns" for k, v in parts.items()), flush=True)
            with open(folded) as f:
                leaves = {line.rsplit(" ", 1)[0].rsplit(";", 1)[1] for line in f
                          if "read_hundred" in line}
            assert "[io_wait]" in leaves and "[syscall]" in leaves, leaves
        finally:
            loop.close()


def is_known_path(p, fn):
    """p (outermost first) holds main, fn, read_block and libc's pread64,
    each calling the next, and nothing inside them: the source's path."""
    if "main" not in p:
        return False
    inner = p[p.index("main") + 1:]
    return len(inner) == 3 and inner[:2] == (fn, "read_block") and "pread" in inner[2]


def check_unwinding(st, copies, what):
    """Every copy unwound whole: none lost, cut short or failed."""
    u = st["unwinding"]
    assert u["stacks"] == copies and st["lost"]["stack_copies"] == 0, f"{what}: {u} {st['lost']}"
    assert (u["truncated"], u["no_unwind_info"], u["failed"]) == (0, 0, 0), f"{what}: {u}"
    print(f"    {what}: {u['stacks']} copies, {u['bytes_copied'] // u['stacks']} bytes each, "
          f"unwound in {u['unwind_ns'] // u['stacks'] / 1000:.1f} us each", flush=True)


@test
def dwarf_stacks_of_a_program_without_frame_pointers():
    """stackwork-nofp, the test program at -O2 without frame pointers:
    --user-stack=dwarf gives every one of its 400 block requests the
    source's path, _start ... main;read_X;read_block;pread64, 100 and 300
    of them as the workload and /proc/diskstats count, every copy unwound
    whole; --user-stack=fp on the same binary finds neither path (its
    frame-pointer walk goes astray after pread64). The syscall layer's
    call stacks likewise: 100 and 300 preads on the two known paths."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=8)
        try:
            rep, rows, work, reads, sectors = traced(loop, tmp, "--user-stack=dwarf",
                                                     "--weight=requests", prog=STACKWORK_NOFP)
            assert work.split()[-1] == f"bytes={HUNDRED + THREE_HUNDRED}", work
            assert (reads, sectors * 512) == (400, HUNDRED + THREE_HUNDRED), (reads, sectors)
            paths = user_paths(rows, "stackwork-nofp")
            assert len(paths) == 2, dict(paths)
            for fn, n in (("read_hundred", 100), ("read_three_hundred", 300)):
                p = path_of(paths, fn)
                assert paths[p] == n and is_known_path(p, fn) and p[0] == "_start", (p, paths[p])
                print(f"    dwarf: {';'.join(p)} {paths[p]}", flush=True)
            check_unwinding(rep["stacks"], 400, "blk dwarf")
            # Each request's time, sent by its completion after its copy.
            timed = sum(e["ops"].get("read", {}).get("timed", 0) for e in rep["stacks"]["stacks"])
            check_blk_count(rep, timed, 400, "dwarf: requests timed")

            rep, rows, _, reads, _ = traced(loop, tmp, "--user-stack=fp", "--weight=requests",
                                            prog=STACKWORK_NOFP)
            assert reads == 400, reads
            paths = user_paths(rows, "stackwork-nofp")
            assert sum(paths.values()) == 400, dict(paths)
            for p, n in paths.most_common():
                assert not any(is_known_path(p, fn)
                               for fn in ("read_hundred", "read_three_hundred")), p
                print(f"    fp:    {';'.join(p)} {n}", flush=True)

            # The syscall layer: each pread's stack at its exit.
            folded = os.path.join(tmp, "calls.folded")
            tool = Tool("-T", "syscall", "--user-stack=dwarf", "--json", f"--folded={folded}",
                        "--", STACKWORK_NOFP, loop.dev)
            rc, out, err = tool.wait()
            assert rc == 0, f"tool exited {rc}: {err}"
            rep = [json.loads(line) for line in out.splitlines() if line.startswith("{")][0]
            st = rep["stacks"]
            assert st["of"] == "calls" and st["lost"]["requests"] == 0, st
            calls = collections.Counter()
            for e in st["stacks"]:
                read = e["ops"].get("read")
                names = tuple(f["name"] for f in reversed(e["user_frames"]))
                if not read or "main" not in names:
                    continue  # the loader's reads of libraries, before main
                assert any(is_known_path(names, fn)
                           for fn in ("read_hundred", "read_three_hundred")), names
                if e.get("part") == "syscall":
                    calls[names[names.index("main") + 1]] += read["requests"]
            assert calls == {"read_hundred": 100, "read_three_hundred": 300}, calls
            copies = st["unwinding"]["stacks"]
            assert copies >= 400, st["unwinding"]
            check_unwinding(st, copies, "syscall dwarf")
        finally:
            loop.close()


PG_BIN = "/usr/lib/postgresql/15/bin"


def strace_calls(path, names):
    """The calls of the syscalls names in strace -c's summary at path."""
    calls = 0
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 5 and cols[-1] in names and cols[3].isdigit():
                calls += int(cols[3])
    return calls


def children_of(pid):
    """The processes pid forked that live now."""
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            kids += [int(k) for k in f.read().split()]
    return kids


@test
def postgres_wal_flush_stacks_unwound():
    """Debian's PostgreSQL 15 (built without frame pointers), a cluster on a
    loop device of the test's, under pgbench: with -T syscall -p POSTMASTER
    -f --user-stack=dwarf every fsync and fdatasync call is counted, as
    many as strace -f -c counts on the same processes in the same run, and
    every WAL flush's stack is whole, from _start to libc's fdatasync, and
    names PostgreSQL's own path by its exported functions: XLogFlush under
    the commit (CommitTransactionCommand) of the backend, with nothing but
    PostgreSQL's own frames between the commit and fdatasync."""
    postgres = os.path.join(PG_BIN, "postgres")
    if not os.path.exists(postgres) or not shutil.which("pgbench") or not shutil.which("strace"):
        raise Skip("PostgreSQL 15 or strace is not installed: run scripts/install-test-deps.sh")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        os.chmod(tmp, 0o755)  # the postgres user goes through it
        loop = LoopDevice(tmp, size_mib=256)
        mnt, sock = os.path.join(tmp, "mnt"), os.path.join(tmp, "sock")
        os.mkdir(mnt)
        os.mkdir(sock)
        pg = None
        try:
            run("mkfs.ext4", "-q", "-F", loop.dev, check=True)
            assert mount(loop.dev, where=mnt).returncode == 0
            data = os.path.join(mnt, "pg")
            os.mkdir(data, 0o700)
            for d in (data, sock):
                shutil.chown(d, "postgres", "postgres")
            run_process([os.path.join(PG_BIN, "initdb"), "-D", data, "-A", "trust", "-U",
                         "postgres"], user="postgres", capture_output=True, check=True)
            with open(os.path.join(tmp, "pg.log"), "w") as log:
                # WAL flushed by each committing backend, nothing in the
                # background that the run's ends could cut.
                pg = Process([postgres, "-D", data, "-k", sock, "-p", "54329", "-c",
                              "listen_addresses=", "-c", "autovacuum=off", "-c",
                              "wal_sync_method=fdatasync", "-c", "checkpoint_timeout=1h"],
                             user="postgres", stdout=log, stderr=log)
            conn = ["-h", sock, "-p", "54329", "-U", "postgres"]
            for _ in range(300):
                if run_process(["pg_isready", *conn], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            run_process(["pgbench", "-i", "-q", "-s", "1", *conn, "postgres"],
                        capture_output=True, check=True)
            folded = os.path.join(tmp, "pg.folded")
            tool = Tool("-T", "syscall", "-p", str(pg.pid), "-f", "--user-stack=dwarf",
                        "--json", f"--folded={folded}")
            summary = os.path.join(tmp, "strace.txt")
            pids = [pg.pid] + children_of(pg.pid)
            st = Process(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", summary]
                         + [a for p in pids for a in ("-p", str(p))],
                         stderr=subprocess.PIPE, text=True)
            attached = 0
            while attached < len(pids):
                line = st.stderr.readline()
                assert line, f"strace: {attached} of {len(pids)} attached"
                attached += "attached" in line
            run_process(["pgbench", "-n", "-c", "2", "-t", "200", *conn, "postgres"],
                        capture_output=True, check=True)
            stop_group(st)
            rep = tool.stop_json()[-1]
            truth = strace_calls(summary, ("fsync", "fdatasync"))
            stacks = rep["stacks"]
            calls = count(rep, "syscall", "fsync")
            assert calls == truth and truth >= 200, (calls, truth)
            assert stacks["lost"]["requests"] == 0 and stacks["lost"]["stack_copies"] == 0, \
                stacks["lost"]
            flushes = in_stacks = 0
            for e in stacks["stacks"]:
                if "fsync" not in e["ops"]:
                    continue
                names = [f["name"] for f in reversed(e["user_frames"])]
                if e.get("part") == "syscall":
                    in_stacks += e["ops"]["fsync"]["requests"]
                if "XLogFlush" not in names:
                    continue
                flushes += e["ops"]["fsync"]["requests"]
                # Whole (from _start, no end mark), and from the commit in:
                # CommitTransactionCommand, XLogFlush, then libc's
                # fdatasync; between them only PostgreSQL's own frames (its
                # static functions, XLogWrite and the like, are in no symbol
                # table of Debian's stripped binary: "[unknown] (postgres)").
                assert names[0] == "_start" and names[-1].endswith("fdatasync"), names
                i = names.index("CommitTransactionCommand")
                assert i < names.index("XLogFlush"), names
                assert all(not n.startswith("[") or n == "[unknown] (postgres)"
                           for n in names[i:-1]), names
            assert in_stacks == calls, (in_stacks, calls)
            assert flushes > 0, stacks["stacks"]
            top = max((e for e in stacks["stacks"] if "fsync" in e["ops"]),
                      key=lambda e: e["ops"]["fsync"]["requests"])
            print(f"    {calls} fsync/fdatasync calls, strace -f -c: {truth}; "
                  f"{stacks['unwinding']}", flush=True)
            print("    " + ";".join(f["name"] for f in reversed(top["user_frames"])),
                  flush=True)
        finally:
            # The cluster stops (by its postmaster's PID) before its file
            # system goes, and that before the temp dir is removed.
            if pg:
                stop_group(pg)
            unmount(mnt)
            loop.close()


@test
def redis_aof_fsync_stacks_unwound():
    """Debian's Redis 7 with appendonly yes and appendfsync always, its
    append-only file on a loop device of the test's, under
    redis-benchmark: with -T syscall -p REDIS --user-stack=dwarf its
    fsync/fdatasync calls are as many as strace -f -c counts on the same
    run, and every stack of the main thread's AOF flushes is whole, from
    _start through aeMain, beforeSleep and flushAppendOnlyFile to libc's
    fdatasync."""
    server, bench, cli = (shutil.which(p) for p in ("redis-server", "redis-benchmark", "redis-cli"))
    if not (server and bench and cli and shutil.which("strace")):
        raise Skip("redis-server, redis-benchmark or strace is not installed")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=64)
        mnt, sock = os.path.join(tmp, "mnt"), os.path.join(tmp, "redis.sock")
        os.mkdir(mnt)
        srv = None
        try:
            run("mkfs.ext4", "-q", "-F", loop.dev, check=True)
            assert mount(loop.dev, where=mnt).returncode == 0
            with open(os.path.join(tmp, "redis.log"), "w") as log:
                srv = Process([server, "--port", "0", "--unixsocket", sock, "--dir", mnt,
                               "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                               "--daemonize", "no"], stdout=log, stderr=log)
            for _ in range(300):
                p = run_process([cli, "-s", sock, "ping"], capture_output=True, text=True)
                if p.stdout.strip() == "PONG":
                    break
                time.sleep(0.1)
            tool = Tool("-T", "syscall", "-p", str(srv.pid), "--user-stack=dwarf", "--json")
            summary = os.path.join(tmp, "strace.txt")
            st = Process(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", summary,
                          "-p", str(srv.pid)], stderr=subprocess.PIPE, text=True)
            # One line once every thread is attached ("... attached with N threads").
            line = st.stderr.readline()
            assert "attached" in line, line
            run_process([bench, "-s", sock, "-t", "set", "-n", "300", "-c", "1", "-q"],
                        capture_output=True, check=True)
            stop_group(st)
            rep = tool.stop_json()[-1]
            truth = strace_calls(summary, ("fsync", "fdatasync"))
            calls = count(rep, "syscall", "fsync")
            stacks = rep["stacks"]
            assert calls == truth and truth >= 300, (calls, truth)
            assert stacks["lost"]["requests"] == 0 and stacks["lost"]["stack_copies"] == 0, \
                stacks["lost"]
            flushes = 0
            for e in stacks["stacks"]:
                if "fsync" not in e["ops"]:
                    continue
                names = [f["name"] for f in reversed(e["user_frames"])]
                if "flushAppendOnlyFile" not in names:
                    continue
                if e.get("part") == "syscall":
                    flushes += e["ops"]["fsync"]["requests"]
                assert names[0] == "_start" and names[-1].endswith("fdatasync"), names
                path = [n for n in names if n in ("main", "aeMain", "beforeSleep",
                                                  "flushAppendOnlyFile")]
                assert path == ["main", "aeMain", "beforeSleep", "flushAppendOnlyFile"], names
                last = names
            assert flushes >= 300, (flushes, stacks["stacks"])
            print(f"    {calls} fsync/fdatasync calls, strace -f -c: {truth}; AOF flushes "
                  f"{flushes}: " + ";".join(last), flush=True)
        finally:
            if srv:
                stop_group(srv)
            unmount(mnt)
            loop.close()


@test
def dwarf_stacks_as_perf_unwinds_them():
    """The same frames in the same order as perf record --call-graph=dwarf
    on a separate run of stackwork-nofp: perf's stacks of its pread64
    entries (raw_syscalls:sys_enter filtered to pread64's number) and the
    tool's call stacks of its preads both go main;read_X;read_block, 100
    and 300 times."""
    if not shutil.which("perf"):
        raise Skip("perf is not installed")
    nr = {"x86_64": 17, "aarch64": 67}.get(os.uname().machine)
    if nr is None:
        raise Skip(f"pread64's number on {os.uname().machine} is not known here")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=8)
        try:
            data = os.path.join(tmp, "perf.data")
            p = run_process(["perf", "record", "-q", "-o", data, "-e", "raw_syscalls:sys_enter",
                             "--filter", f"id == {nr}", "--call-graph=dwarf,8192", "--",
                             STACKWORK_NOFP, loop.dev], capture_output=True, text=True,
                            timeout=120)
            if p.returncode:
                raise Skip(f"perf record cannot run here: {p.stderr.strip()[-300:]}")
            p = run_process(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True,
                            text=True, timeout=120, check=True)
            perf = collections.Counter()
            for block in p.stdout.split("\n\n"):
                syms = [line.split(None, 1)[1].split("+")[0] for line in block.splitlines()
                        if len(line.split(None, 1)) == 2]
                own = [s for s in reversed(syms) if s in ("main", "read_hundred",
                                                          "read_three_hundred", "read_block")]
                if own:
                    perf[tuple(own)] += 1

            tool = Tool("-T", "syscall", "--user-stack=dwarf", "--json", "--", STACKWORK_NOFP,
                        loop.dev)
            rc, out, err = tool.wait()
            assert rc == 0, f"tool exited {rc}: {err}"
            rep = [json.loads(line) for line in out.splitlines() if line.startswith("{")][0]
            ours = collections.Counter()
            for e in rep["stacks"]["stacks"]:
                if "read" not in e["ops"] or e.get("part") != "syscall":
                    continue
                names = [f["name"] for f in reversed(e["user_frames"])]
                own = tuple(n for n in names if n in ("main", "read_hundred",
                                                      "read_three_hundred", "read_block"))
                if own:
                    ours[own] += e["ops"]["read"]["requests"]
            want = {("main", "read_hundred", "read_block"): 100,
                    ("main", "read_three_hundred", "read_block"): 300}
            assert perf == want, f"perf: {dict(perf)}"
            assert ours == want, f"iostackbreak: {dict(ours)}"
            for path, n in want.items():
                print(f"    perf and iostackbreak: {';'.join(path)} {n}", flush=True)
        finally:
            loop.close()
