#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Overhead benchmark of iostackbreak: ratios measured side by side.

Three workloads (build/iowork), each run untraced, under iostackbreak (one
layer at a time, all layers, -Q), under the floor (empty BPF programs on the
tool's own attach points: bench/floor.bpf.c) and under the peer tools
(libbpf-tools syscount -L, biolatency, biolatency -Q; fsdist when it runs).
Every round runs every configuration once, in a fresh shuffled order; the
tables give medians over the rounds. A last pass with
kernel.bpf_stats_enabled=1 reads the kernel's own run time of every
program (the timing rounds run without it: it adds two clock reads to every
program run, tool and floor alike, which would pull their ratio towards 1).

Nothing here fails on a time: it measures and reports. Needs root.
See bench/README.md.
"""

import argparse
import dataclasses
import datetime
import json
import os
import platform
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, "build")
READY = "Hit Ctrl-C to end."
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"

# Targets (bench/README.md).
TARGET_FLOOR = 1.25
TARGET_PEER = 1.0
TARGET_MAP_BYTES = 4 << 20
TARGET_STARTUP_S = 0.300


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes

ACTIVE = []  # processes to stop if we are interrupted


def read_fdinfo(pid):
    """BPF maps and programs held by a process, from /proc/PID/fd{,info}."""
    maps, progs = {}, {}
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return maps, progs
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target not in ("anon_inode:bpf-map", "anon_inode:bpf-prog"):
            continue
        info = {}
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k.strip()] = v.strip()
        except OSError:
            continue
        if target == "anon_inode:bpf-map" and "map_id" in info:
            maps[int(info["map_id"])] = int(info.get("memlock", 0))
        elif target == "anon_inode:bpf-prog" and "prog_id" in info:
            progs[int(info["prog_id"])] = int(info.get("memlock", 0))
    return maps, progs


def bpftool_progs():
    """id -> (name, run_time_ns, run_cnt) of every loaded program."""
    p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    if p.returncode:
        raise BenchError(f"bpftool -j prog show: {p.stderr.strip()}")
    out = {}
    for d in json.loads(p.stdout or "[]"):
        out[d["id"]] = (d.get("name", "?"), d.get("type", "?"),
                        d.get("run_time_ns", 0), d.get("run_cnt", 0))
    return out


TRACING_TYPES = {"tracepoint", "tracing", "raw_tracepoint", "raw_tracepoint_writable",
                 "kprobe", "perf_event"}


def foreign_tracers(ours=()):
    """Ids of tracing programs loaded by someone else (other tests, tools)."""
    try:
        progs = bpftool_progs()
    except (BenchError, OSError, ValueError):
        return []
    return [i for i, v in progs.items() if v[1] in TRACING_TYPES and i not in ours]


class Quiet:
    """Waits, within a budget, until no one else's tracing programs are loaded:
    another tracer on the workload's tracepoints would be measured with us."""

    def __init__(self, budget_s):
        self.budget_s = budget_s
        self.waited_s = 0.0
        self.waits = 0

    def wait(self, limit_s=60):
        t0 = time.monotonic()
        deadline = t0 + min(limit_s, self.budget_s - self.waited_s)
        if foreign_tracers() and time.monotonic() < deadline:
            self.waits += 1
            while foreign_tracers() and time.monotonic() < deadline:
                time.sleep(0.5)
        self.waited_s += time.monotonic() - t0


class Tracer:
    """A tracer in the background, from exec to its ready line to SIGINT."""

    def __init__(self, argv, ready, timeout=60):
        self.argv = argv
        self.ready = ready
        self.timeout = timeout
        self.proc = None
        self.startup_s = None
        self.early = []

    def start(self):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        ACTIVE.append(self.proc)
        fds = {self.proc.stdout.fileno(): b"", self.proc.stderr.fileno(): b""}
        deadline = t0 + self.timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select(list(fds), [], [], 0.5)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    fds.pop(fd)
                    continue
                pend = fds[fd] + chunk
                *lines, pend = pend.split(b"\n")
                fds[fd] = pend
                for line in lines:
                    s = line.decode(errors="replace")
                    self.early.append(s)
                    if self.ready in s:
                        self.startup_s = time.monotonic() - t0
                        return self
            if not fds or self.proc.poll() is not None:
                break
        rc, _, err = self.stop()
        lines = [l for l in self.early + err.splitlines() if l.strip()]
        why = "; ".join(lines[-3:]) if lines else f"exit status {rc}"
        raise BenchError(f"{' '.join(self.argv)}: not ready ({why})")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self, timeout=60):
        """SIGINT; returns (exit status, stdout, stderr)."""
        p = self.proc
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        if p in ACTIVE:
            ACTIVE.remove(p)
        return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


# ---------------------------------------------------------------- set-up


class Setup:
    def __init__(self, args):
        self.args = args
        self.workdir = None
        self.loopdev = None
        self.stats_old = None

    def __enter__(self):
        self.workdir = tempfile.mkdtemp(prefix="iostackbreak-bench.", dir="/var/tmp")
        # Snapshots: others may rebuild build/ while we run.
        self.bin = os.path.join(self.workdir, "bin")
        os.mkdir(self.bin)
        for name in ("iostackbreak", "iowork"):
            shutil.copy2(os.path.join(BUILD, name), self.bin)
        self.tool = os.path.join(self.bin, "iostackbreak")
        self.iowork = os.path.join(self.bin, "iowork")
        self.floor = os.path.join(BUILD, "bench", "floor")
        self.pread_file = os.path.join(self.workdir, "pread.dat")
        self.fsync_file = os.path.join(self.workdir, "fsync.dat")
        img = os.path.join(self.workdir, "loop.img")
        with open(img, "wb") as f:
            chunk = b"\xa5" * (1 << 20)
            for _ in range(self.args.loop_mib):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        p = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True)
        if p.returncode:
            raise BenchError(f"losetup -f --show {img}: {p.stderr.strip()}")
        self.loopdev = p.stdout.strip()
        return self

    def stats_on(self):
        with open(STATS_SYSCTL) as f:
            self.stats_old = f.read().strip()
        with open(STATS_SYSCTL, "w") as f:
            f.write("1")

    def stats_restore(self):
        if self.stats_old is not None:
            with open(STATS_SYSCTL, "w") as f:
                f.write(self.stats_old)
            self.stats_old = None

    def __exit__(self, *exc):
        for p in list(ACTIVE):
            try:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
            except OSError:
                pass
        ACTIVE.clear()
        try:
            self.stats_restore()
        except OSError as e:
            log(f"bench: cannot restore {STATS_SYSCTL}: {e}")
        if self.loopdev:
            subprocess.run(["losetup", "-d", self.loopdev])
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return False


# ---------------------------------------------------------------- configurations


def blk_origin():
    """The -Q origin tracepoint iostackbreak uses on this kernel."""
    if os.path.exists("/sys/kernel/btf/vmlinux"):
        p = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                           capture_output=True, text=True)
        if "btf_trace_block_io_start" in p.stdout:
            return "blk_start"
    return "blk_insert"


def fsdist_probe(timeout):
    """Whether libbpf-tools' fsdist -t ext4 runs here; else the reason."""
    if not shutil.which("fsdist"):
        return False, "fsdist is not installed"
    t = Tracer(["stdbuf", "-oL", "fsdist", "-t", "ext4"], READY, timeout=timeout)
    try:
        t.start()
    except BenchError as e:
        return False, str(e)
    t.stop()
    return True, ""


def make_configs(s, origin, fsdist_ok, fsdist_why):
    fl = lambda *objs: [s.floor] + [os.path.join(BUILD, "bench", f"floor-{o}.bpf.o")
                                     for o in objs]
    tool = lambda *a: [s.tool, "--json", *a]
    peer = lambda *a: ["stdbuf", "-oL", *a]
    no_fsdist = f"fsdist -t ext4 does not run here: {fsdist_why}"
    C = {
        "untraced": dict(kind="none", label="untraced"),
        "syscall": dict(kind="tool", label="iostackbreak -T syscall", argv=tool("-T", "syscall"),
                        layer="syscall", floor="f_syscall", peer="syscount"),
        "blk": dict(kind="tool", label="iostackbreak -T blk", argv=tool("-T", "blk"),
                    layer="blk", floor="f_blk", peer="biolatency"),
        "ext4": dict(kind="tool", label="iostackbreak -T ext4 (fsync tracepoints)",
                     argv=tool("-T", "ext4"), layer="ext4", floor="f_ext4",
                     peer="fsdist" if fsdist_ok else None, no_peer=None if fsdist_ok else no_fsdist),
        "all": dict(kind="tool", label="iostackbreak (all layers)", argv=tool(),
                    layer="all", floor="f_all", peer=None),
        "blkq": dict(kind="tool", label="iostackbreak -T blk -Q", argv=tool("-T", "blk", "-Q"),
                     layer="blkq", floor="f_blkq", peer="biolatency_q"),
        "f_syscall": dict(kind="floor", label="floor: syscall (32 empty tracepoint progs)",
                          argv=fl("syscall")),
        "f_blk": dict(kind="floor", label="floor: blk (tp_btf issue+complete)", argv=fl("blk")),
        "f_ext4": dict(kind="floor", label="floor: ext4 (2 fsync tracepoints)", argv=fl("ext4")),
        "f_all": dict(kind="floor", label="floor: all (syscall+blk+ext4)",
                      argv=fl("syscall", "blk", "ext4")),
        # -Q from block_io_start runs no issue program; from insert it does.
        "f_blkq": (dict(kind="floor", label="floor: blk -Q (block_io_start+complete)",
                        argv=fl("blk_done", origin)) if origin == "blk_start" else
                   dict(kind="floor", label="floor: blk -Q (+block_rq_insert)",
                        argv=fl("blk", origin))),
        "syscount": dict(kind="peer", label="syscount -L (raw_syscalls, every syscall)",
                         argv=peer("syscount", "-L"), ready="Ctrl+C to quit"),
        "biolatency": dict(kind="peer", label="biolatency", argv=peer("biolatency")),
        "biolatency_q": dict(kind="peer", label="biolatency -Q", argv=peer("biolatency", "-Q")),
    }
    if fsdist_ok:
        C["fsdist"] = dict(kind="peer", label="fsdist -t ext4", argv=peer("fsdist", "-t", "ext4"))
    for k, c in C.items():
        c["key"] = k
        c.setdefault("ready", READY)
    return C


class Workload:
    """iowork with P equal phases of n ops; a run's figure is its best phase."""

    def __init__(self, key, title, opts, op, path, n, phases, layers, note):
        self.key, self.title, self.layers, self.note = key, title, layers, note
        self.phases = phases
        self.n_phase = max(1, n // phases)
        self.n = self.n_phase * phases  # ops per run, all phases
        self.title = f"{title}, N={self.n} in {phases} phases of {self.n_phase}"
        self.argv = [opts[0], "-w", *opts[1:]]
        for _ in range(phases):
            self.argv += [op, str(self.n_phase), path]


def make_workloads(s, a):
    W = []
    W.append(Workload(
        "pread", "(a) cached 4 KiB pread",
        [s.iowork, "-c"], "pread", s.pread_file, a.n_pread, a.phases or 5,
        {"syscall"},
        "one pread64 per op, from the page cache: the worst case for a tracer "
        "(two syscall tracepoints per op, no block I/O)"))
    W.append(Workload(
        "direct", "(b) 4 KiB O_DIRECT pread on a loop device",
        [s.iowork, "-D"], "pread", s.loopdev, a.n_direct, a.phases or 10,
        {"syscall", "blk", "blkq"},
        f"one pread64 and one block request per op ({s.loopdev} over a cached "
        f"{a.loop_mib} MiB file in /var/tmp)"))
    W.append(Workload(
        "fsync", "(c) 4 KiB pwrite + fsync on ext4",
        [s.iowork, "-c", "-W"], "fsync", s.fsync_file, a.n_fsync, a.phases or 8,
        {"syscall", "blk", "blkq", "ext4"},
        "one op = pwrite64 + fsync on /var/tmp (ext4): syscall, ext4 fsync "
        "tracepoints and the data, journal and flush requests of the disk"))
    return W


def workload_configs(wl, C):
    keys = ["untraced", "syscall", "blk", "ext4", "all",
            "f_syscall", "f_blk", "f_ext4", "f_all", "syscount"]
    if wl.key != "pread":
        keys += ["blkq", "f_blkq", "biolatency", "biolatency_q"]
    if "fsdist" in C and wl.key == "fsync":
        keys.append("fsdist")
    return [k for k in keys if k in C]


def pick_workloads(W, only):
    """The workloads --only names (a comma list), all of them without it."""
    if not only:
        return W
    want = set(only.split(","))
    bad = want - {wl.key for wl in W}
    if bad:
        raise BenchError(f"--only: unknown workload {', '.join(sorted(bad))}")
    return [wl for wl in W if wl.key in want]


# ---------------------------------------------------------------- one run

RESULT_RE = re.compile(r"iowork op=\S+ n=(\d+) done=(\d+) errors=(\d+) .* ns=(\d+)")


def tool_counts(out):
    """Events per layer from iostackbreak --json's last report."""
    counts = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        counts = {}
        for c in d.get("cells", []):
            counts[c["layer"]] = counts.get(c["layer"], 0) + c.get("count", 0)
    return counts


def run_one(s, wl, cfg, stats):
    """Runs the workload once under cfg; returns a dict of measurements."""
    rec = {"wl": wl.key, "cfg": cfg["key"]}
    work = subprocess.Popen(wl.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ACTIVE.append(work)
    tracer = None
    try:
        line = work.stdout.readline()
        if not line.startswith("READY"):
            work.kill()
            _, err = work.communicate()
            raise BenchError(f"{' '.join(wl.argv)}: no READY: {line.strip()} {err.strip()}")
        if cfg["kind"] != "none":
            tracer = Tracer(cfg["argv"], cfg["ready"]).start()
            rec["startup_s"] = tracer.startup_s
            maps, progs = read_fdinfo(tracer.pid)
            rec["maps"], rec["map_bytes"] = len(maps), sum(maps.values())
            rec["progs"], rec["prog_ids"] = len(progs), sorted(progs)
            rec["prog_bytes"] = sum(progs.values())
        ours = set(rec.get("prog_ids", ()))
        rec["foreign"] = len(foreign_tracers(ours))
        before = bpftool_progs() if stats and tracer else None
        work.send_signal(signal.SIGUSR1)
        out, err = work.communicate(timeout=600)
        after = bpftool_progs() if stats and tracer else None
        rec["foreign"] += len(foreign_tracers(ours))
        ms = RESULT_RE.findall(out)
        if work.returncode or len(ms) != wl.phases:
            raise BenchError(f"{' '.join(wl.argv)}: exit {work.returncode}: {out.strip()} {err.strip()}")
        phase_ns = []
        for m in ms:
            n, done, errors, ns = map(int, m)
            if done != n or errors:
                raise BenchError(f"iowork: {done} of {n} done, {errors} errors")
            phase_ns.append(ns / n)
        # The best phase: interference from the rest of the machine only adds.
        rec["ns_per_op"] = min(phase_ns)
        rec["phase_ns"] = phase_ns
        if stats and tracer:
            per = {}
            for pid_ in rec["prog_ids"]:
                if pid_ in before and pid_ in after:
                    name, _, t0, c0 = before[pid_]
                    _, _, t1, c1 = after[pid_]
                    t, c = per.get(name, (0, 0))
                    per[name] = (t + t1 - t0, c + c1 - c0)
            rec["prog_stats"] = per
    finally:
        if work in ACTIVE:
            if work.poll() is None:
                work.kill()
                work.wait()
            ACTIVE.remove(work)
        if tracer:
            rc, tout, terr = tracer.stop()
            if rc and "ns_per_op" in rec:
                raise BenchError(f"{' '.join(cfg['argv'])} exited {rc}: {terr.strip()[-300:]}")
            if cfg["kind"] == "tool":
                rec["counts"] = tool_counts(tout)
    return rec


# ---------------------------------------------------------------- figures


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ns(x, digits=0):
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


class Figures:
    """Medians over the rounds, added times and their noise."""

    def __init__(self, runs, W, C):
        self.W, self.C = W, C
        self.ns = {}  # (wl, cfg) -> [ns/op of each run]
        self.diff = {}  # (wl, cfg) -> [ns/op minus its neighbouring untraced runs]
        self.counts = {}
        self.bpf = {}  # (wl, cfg) -> {program: (run_time_ns, run_cnt)}, stats pass
        for r in runs:
            k = (r["wl"], r["cfg"])
            if r.get("stats"):
                if "prog_stats" in r:
                    self.bpf[k] = r["prog_stats"]
                continue
            if "ns_per_op" in r:
                self.ns.setdefault(k, []).append(r["ns_per_op"])
            if "base" in r:
                self.diff.setdefault(k, []).append(r["ns_per_op"] - r["base"])
            if "counts" in r:
                self.counts.setdefault(k, []).append(r["counts"])

    def median(self, wl, cfg):
        return med(self.ns.get((wl, cfg), []))

    def added(self, wl, cfg):
        """Median over the rounds of (run - mean of the untraced runs around it)."""
        return med(self.diff.get((wl, cfg), []))

    def se(self, wl):
        """Standard error of an added figure (the median of paired differences).

        The spread is pooled over every configuration of the workload: the
        deviations of each round's difference from its configuration's
        median, through the median absolute deviation (robust to a stray
        round)."""
        dev, sizes = [], []
        for (w, _), xs in self.diff.items():
            if w != wl or len(xs) < 2:
                continue
            m = med(xs)
            d = sorted(abs(x - m) for x in xs)
            # An odd count has its median among the values: drop that zero.
            dev += d[1:] if len(xs) % 2 else d
            sizes.append(len(xs))
        if not dev:
            return None
        n = statistics.median(sizes)
        sigma = 1.4826 * statistics.median(dev)
        return 1.2533 * sigma / n ** 0.5

    def significant(self, wl, cfg):
        """Is cfg's added time clearly above zero (more than 2 standard errors)?"""
        a, e = self.added(wl, cfg), self.se(wl)
        return a is not None and e is not None and a > 2 * e

    def ratio(self, wl, num, den):
        a, b = self.added(wl, num), self.added(wl, den)
        if a is None or b is None or b <= 0:
            return None
        return a / b

    def events_per_op(self, wl, cfg, n):
        cs = self.counts.get((wl, cfg), [])
        if not cs:
            return None
        return med([sum(c.values()) for c in cs]) / n

    def bpf_per_op(self, wl, cfg, n):
        """(program runs per op, ns per run, BPF ns per op) from the stats pass."""
        st = self.bpf.get((wl, cfg))
        if st is None:
            return None
        t = sum(v[0] for v in st.values())
        c = sum(v[1] for v in st.values())
        return c / n, (t / c if c else 0.0), t / n


# ---------------------------------------------------------------- report


def machine_info():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    osname = "?"
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f"{kb / (1 << 20):.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("systemd-detect-virt") else "?"
    return dict(cpu=model, cores=os.cpu_count(), kernel=platform.release(), os=osname,
                mem=mem, virt=virt or "none")


def git_info():
    def g(*a):
        p = subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else ""
    head = g("rev-parse", "--short", "HEAD") or "?"
    dirty = g("status", "--porcelain", "--", "src", "bpf", "tools")
    return head + (" + uncommitted changes in src/ bpf/ tools/" if dirty else "")


@dataclasses.dataclass
class ReportContext:
    """Everything the report shows: the run's settings, runs and circumstances,
    and what is computed from them once (figures, start-ups, map memory)."""

    a: argparse.Namespace
    M: dict  # machine_info()
    W: list  # the workloads run
    C: dict  # the configurations, by key
    runs: list
    started: datetime.datetime
    wall_s: float
    notes: dict
    plan_lines: list
    origin: str  # blk_origin()
    fsdist_why: str
    seed: int
    F: Figures = dataclasses.field(init=False)
    starts: dict = dataclasses.field(init=False)  # cfg -> [start-up s], every start
    mem: dict = dataclasses.field(init=False)  # cfg -> [(maps, map bytes, progs, prog bytes)]

    def __post_init__(self):
        self.F = Figures(self.runs, self.W, self.C)
        self.starts, self.mem = {}, {}
        for r in self.runs:
            if "startup_s" in r:
                self.starts.setdefault(r["cfg"], []).append(r["startup_s"])
            if "map_bytes" in r:
                self.mem.setdefault(r["cfg"], []).append((r["maps"], r["map_bytes"], r["progs"],
                                                          r["prog_bytes"]))

    @property
    def tracers(self):
        """Every configuration but untraced, in the order of C."""
        return [k for k in self.C if k != "untraced"]

    def ratio_cell(self, wl, k, den, what):
        """A ratio for the table: the value, or why there is none."""
        r = self.F.ratio(wl.key, k, den)
        if r is None:
            return f"n/a ({what} adds <= 0)"
        return f"{r:.2f}" if self.F.significant(wl.key, den) else f"({r:.2f}) n.s."

    def bpf_note(self, wl, k, other):
        """The kernel's run time of k's programs against other's, for an inconclusive target."""
        F = self.F
        b, o = F.bpf_per_op(wl.key, k, wl.n), F.bpf_per_op(wl.key, other, wl.n)
        if b is None or o is None:
            return ""
        return (f"; kernel run time of the programs: {b[2]:,.0f} vs {o[2]:,.0f} ns/op "
                f"({b[2] - o[2]:+,.0f})")


LAYERS1 = ("syscall", "blk", "ext4")


def verdict(ok, r, num, den):
    return f"{'met' if ok else 'NOT met'}: {r:.2f} ({num:,.0f} vs {den:,.0f} ns/op added)"


def section_header(ctx):
    M, W, notes = ctx.M, ctx.W, ctx.notes
    L = []
    p = L.append
    p(f"# iostackbreak overhead benchmark, {ctx.started:%Y-%m-%d}")
    p("")
    p(f"- date: {ctx.started:%Y-%m-%d %H:%M %Z}".rstrip())
    p(f"- machine: {M['cpu']}, {M['cores']} cores, {M['mem']} RAM (virtualization: {M['virt']})")
    p(f"- kernel: {M['kernel']} ({M['os']})")
    p(f"- iostackbreak: {notes['git']}")
    p(f"- rounds: {ctx.a.rounds}; each round runs every configuration once, in a fresh random "
      f"order (seed {ctx.seed}), with an untraced run between every two")
    p("- N per run: " + "; ".join(f"{wl.key} {wl.n} ops in {wl.phases} phases of {wl.n_phase}"
                                   for wl in W) + " (one iowork process per run)")
    p(f"- per-program run times: one more pass with kernel.bpf_stats_enabled=1 (found "
      f"{notes['stats_was']}, restored); the timing rounds run without it")
    qw, qs = notes["quiet"]
    p(f"- other users' tracing BPF programs: {notes['foreign_start']} loaded at start, "
      f"{notes['foreign_end']} at end; the bench waited for them to go {qw} times "
      f"({qs:.0f} s in all); runs with some loaded all the same (kept after 3 tries): "
      f"{notes['contaminated']}; load average at start {notes['load']}")
    p(f"- wall time of the bench: {ctx.wall_s / 60:.1f} min")
    p("")
    return L


def section_how_to_read(ctx):
    return [
        "How to read: a run's ns/op is its best phase (iowork's ns of the measured phase / ops; "
        "noise from the rest of the machine only adds time). An untraced run precedes and follows "
        "every traced run; *added* is the median over the rounds of (traced run - mean of those two "
        "untraced runs), +/- its standard error (pooled from the round-to-round spread of all "
        "configurations of the workload); ns/op and min-max are over the rounds. *vs floor* "
        "= added / added by empty programs on the same attach points (target <= 1.25); *vs peer* = "
        "added / added by the peer tool (target < 1). A ratio in parentheses marked n.s. has a "
        "denominator within 2 standard errors of zero: noise, not a measurement. Ratios are given "
        "only where the workload has events of the layer. *events/op*: what iostackbreak counted "
        "(all its layers, system-wide) per op.",
        "",
    ]


def section_workload(ctx, wl):
    """A workload's table: every configuration's ns/op, added time and ratios."""
    F, C = ctx.F, ctx.C
    L = []
    p = L.append
    cfgs = workload_configs(wl, C)
    u = F.median(wl.key, "untraced")
    e = F.se(wl.key)
    p(f"## {wl.title}")
    p("")
    p(wl.note + f". Standard error of an added figure: {fmt_ns(e)} ns/op.")
    p("")
    p("| configuration | ns/op | min-max | added ns/op | added | vs floor | vs peer | events/op |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|")
    for k in cfgs:
        c = C[k]
        xs = F.ns.get((wl.key, k), [])
        if c.get("failed") and not xs:
            p(f"| {c['label']} | failed: {c['failed']} | | | | | | |")
            continue
        add = F.added(wl.key, k) if k != "untraced" else None
        pct = f"{100 * add / u:+.1f}%" if add is not None and u else "-"
        vf = vp = "-"
        if c["kind"] == "tool":
            if c["layer"] != "all" and c["layer"] not in wl.layers:
                vf = vp = f"n/a (no {c['layer']} events)"
            else:
                vf = ctx.ratio_cell(wl, k, c["floor"], "floor")
                if c.get("peer") and c["peer"] in cfgs:
                    vp = ctx.ratio_cell(wl, k, c["peer"], "peer")
                elif c.get("no_peer"):
                    vp = "no peer runs here"
        ev = F.events_per_op(wl.key, k, wl.n) if c["kind"] == "tool" else None
        rng = f"{fmt_ns(min(xs))}-{fmt_ns(max(xs))}" if xs else "-"
        adds = f"{add:,.0f} +/- {e:,.0f}" if add is not None and e is not None else "-"
        p(f"| {c['label']} | {fmt_ns(F.median(wl.key, k))} | {rng} | {adds} | {pct} | {vf} "
          f"| {vp} | {'-' if ev is None else f'{ev:.2f}'} |")
    a_all = F.added(wl.key, "all")
    parts = [(l, F.added(wl.key, l)) for l in LAYERS1]
    if a_all is not None and all(x is not None for _, x in parts):
        p("")
        p(f"All layers: {a_all:,.0f} ns/op added; the single layers, summed: "
          f"{sum(x for _, x in parts):,.0f} ns/op ("
          + " + ".join(f"{l} {x:,.0f}" for l, x in parts) + ").")
    p("")
    return L


def section_memory(ctx):
    """BPF maps and programs held by each tracer, over every start of the run."""
    L = []
    p = L.append
    p("## Memory: BPF maps held by the tracer (memlock in /proc/PID/fdinfo)")
    p("")
    p("| tracer | maps | map bytes | MiB | programs | program bytes |")
    p("|---|---:|---:|---:|---:|---:|")
    for k in ctx.tracers:
        if k in ctx.mem:
            mp, mb, pr, pb = (med([x[i] for x in ctx.mem[k]]) for i in range(4))
            p(f"| {ctx.C[k]['label']} | {mp:.0f} | {mb:,.0f} | {mb / (1 << 20):.2f} | {pr:.0f} "
              f"| {pb:,.0f} |")
    p("")
    return L


def section_startup(ctx):
    """Exec to the ready line of each tracer, over every start of the run."""
    L = []
    p = L.append
    p("## Start-up: exec to the ready line (every start in the run)")
    p("")
    p("| tracer | median ms | min-max ms | starts |")
    p("|---|---:|---:|---:|")
    for k in ctx.tracers:
        xs = ctx.starts.get(k)
        if xs:
            p(f"| {ctx.C[k]['label']} | {1000 * med(xs):.0f} | {1000 * min(xs):.0f}-"
              f"{1000 * max(xs):.0f} | {len(xs)} |")
    p("")
    return L


def section_kernel_time(ctx):
    """The stats pass: the kernel's run time of every tracer's programs, per workload."""
    L = []
    p = L.append
    p("## Kernel run time of the programs (kernel.bpf_stats_enabled=1 pass)")
    p("")
    p("runs/op: program runs per workload op (all programs of the tracer, system-wide); "
      "ns/run: run_time_ns / run_cnt (bpftool -j prog show) over them; BPF ns/op: run time "
      "per workload op; *over floor*: BPF ns/op minus the floor's on the same attach points, "
      "the tool's own work in the kernel. The kernel counts the program only, not the "
      "tracepoint's dispatch to it, which the floor's wall time includes.")
    p("")
    for wl in ctx.W:
        L += kernel_time_workload(ctx, wl)
    return L


def kernel_time_workload(ctx, wl):
    """One workload of the stats pass: per tracer, then per program of all layers."""
    F, C = ctx.F, ctx.C
    L = []
    p = L.append
    p(f"### {wl.title}")
    p("")
    p("| tracer | runs/op | ns/run | BPF ns/op | over floor |")
    p("|---|---:|---:|---:|---:|")
    for k in workload_configs(wl, C):
        b = F.bpf_per_op(wl.key, k, wl.n)
        if b is None:
            continue
        over = "-"
        fk = C[k].get("floor")
        if fk:
            fb = F.bpf_per_op(wl.key, fk, wl.n)
            if fb is not None:
                over = f"{b[2] - fb[2]:+,.0f}"
        p(f"| {C[k]['label']} | {b[0]:.2f} | {b[1]:.0f} | {b[2]:,.0f} | {over} |")
    p("")
    ra, rf = F.bpf.get((wl.key, "all")), F.bpf.get((wl.key, "f_all"))
    if ra and rf:
        rows = [(nm, v) for nm, v in sorted(ra.items()) if v[1] >= 0.05 * wl.n]
        if rows:
            p("Programs of the all-layers run that ran at least 0.05 times per op, against "
              "the floor's empty program on the same attach point:")
            p("")
            p("| program | runs/op | ns/run | floor ns/run | difference |")
            p("|---|---:|---:|---:|---:|")
            for nm, (t, c) in rows:
                ft, fc = rf.get(nm, (0, 0))
                tn = t / c if c else 0
                fn = ft / fc if fc else None
                p(f"| {nm} | {c / wl.n:.2f} | {tn:.0f} | {'-' if fn is None else f'{fn:.0f}'} "
                  f"| {'-' if fn is None else f'{tn - fn:+.0f}'} |")
            p("")
    return L


def section_targets(ctx):
    """Every target of bench/README.md, met, not met or inconclusive."""
    return (["## Targets", ""] + targets_floor(ctx) + targets_peer(ctx) + targets_sum(ctx)
            + targets_memory(ctx) + targets_startup(ctx) + [""])


def targets_floor(ctx):
    F, C = ctx.F, ctx.C
    L = []
    p = L.append
    for wl in ctx.W:
        for k in ("syscall", "blk", "blkq", "ext4", "all"):
            c = C.get(k)
            if not c or (k != "all" and k not in wl.layers):
                continue
            what = f"{c['label']} on {wl.key}, vs floor <= {TARGET_FLOOR}"
            r = F.ratio(wl.key, k, c["floor"])
            add, fadd = F.added(wl.key, k), F.added(wl.key, c["floor"])
            if r is None or not F.significant(wl.key, c["floor"]):
                p(f"- {what}: inconclusive: the floor adds {fmt_ns(fadd)} +/- "
                  f"{fmt_ns(F.se(wl.key))} ns/op, within the noise (the tool {fmt_ns(add)})"
                  + ctx.bpf_note(wl, k, c["floor"]))
            else:
                p(f"- {what}: {verdict(r <= TARGET_FLOOR, r, add, fadd)}")
    return L


def targets_peer(ctx):
    F, C = ctx.F, ctx.C
    L = []
    p = L.append
    for wl in ctx.W:
        for k in ("syscall", "blk", "blkq", "ext4"):
            c = C.get(k)
            if not c or k not in wl.layers:
                continue
            if not c.get("peer"):
                p(f"- {c['label']} on {wl.key}, vs peer < {TARGET_PEER}: not measurable: "
                  f"{c.get('no_peer')}")
                continue
            pk = c["peer"]
            what = f"{c['label']} on {wl.key}, vs {C[pk]['label']} < {TARGET_PEER}"
            r = F.ratio(wl.key, k, pk)
            add, padd = F.added(wl.key, k), F.added(wl.key, pk)
            if r is None or not F.significant(wl.key, pk):
                p(f"- {what}: inconclusive: the peer adds {fmt_ns(padd)} +/- "
                  f"{fmt_ns(F.se(wl.key))} ns/op, within the noise (the tool {fmt_ns(add)})"
                  + ctx.bpf_note(wl, k, pk))
            else:
                p(f"- {what}: {verdict(r < TARGET_PEER, r, add, padd)}")
    return L


def targets_sum(ctx):
    F = ctx.F
    L = []
    p = L.append
    for wl in ctx.W:
        a_all = F.added(wl.key, "all")
        parts = [F.added(wl.key, l) for l in LAYERS1]
        if a_all is None or any(x is None for x in parts):
            continue
        tot, e = sum(parts), F.se(wl.key)
        within = e is not None and abs(a_all - tot) < 2 * 2 * e  # 4 figures: SE doubles
        p(f"- all layers <= sum of single layers on {wl.key}: "
          f"{'met' if a_all <= tot else 'NOT met'}: {a_all:,.0f} vs {tot:,.0f} ns/op"
          + (f" (difference within the noise, +/- {2 * e:,.0f})" if within else ""))
    return L


def targets_memory(ctx):
    L = []
    p = L.append
    for k in ("syscall", "blk", "ext4", "all", "blkq"):
        if k in ctx.mem:
            mb = med([x[1] for x in ctx.mem[k]])
            p(f"- map memory of {ctx.C[k]['label']} < 4 MiB: "
              f"{'met' if mb < TARGET_MAP_BYTES else 'NOT met'}: {mb / (1 << 20):.2f} MiB "
              f"({mb:,.0f} bytes)")
    return L


def targets_startup(ctx):
    L = []
    p = L.append
    for k in ("syscall", "blk", "ext4", "all", "blkq"):
        if k in ctx.starts:
            sv = med(ctx.starts[k])
            p(f"- start-up of {ctx.C[k]['label']} < 300 ms: "
              f"{'met' if sv < TARGET_STARTUP_S else 'NOT met'}: {1000 * sv:.0f} ms (median of "
              f"{len(ctx.starts[k])} starts)")
    return L


def section_notes(ctx):
    """The peers, the -Q origin, what failed and the attach plan."""
    C = ctx.C
    L = []
    p = L.append
    p("## Notes")
    p("")
    if "fsdist" in C:
        p("- ext4 peer: fsdist -t ext4.")
    else:
        p(f"- ext4 peer: fsdist -t ext4 does not run on this kernel: {ctx.fsdist_why}. It attaches "
          "kprobes or fentry to ext4_file_read_iter and friends, and this kernel has neither "
          "(see the plan below); iostackbreak -T ext4 falls back to the fsync tracepoints.")
    p("- syscount -L attaches raw_syscalls:sys_enter/sys_exit, so it runs for every system "
      "call of every process; iostackbreak and its floor attach the 32 syscalls:sys_*_X "
      "tracepoints of the calls they time (the kernel dispatches those from raw_syscalls too).")
    p(f"- -Q origin on this kernel: "
      f"{'block_io_start' if ctx.origin == 'blk_start' else 'block_rq_insert'} for iostackbreak and "
      "its floor; biolatency -Q uses block_rq_insert.")
    for k, c in C.items():
        if c.get("failed"):
            p(f"- {c['label']} failed during the run and was dropped: {c['failed']}")
    p("- Attach plan of iostackbreak on this kernel (`iostackbreak --plan`, skipped cells left out):")
    p("")
    p("```")
    L.extend(ctx.plan_lines)
    p("```")
    return L


def report(ctx):
    """The markdown report: its sections, in order."""
    sections = [section_header(ctx), section_how_to_read(ctx)]
    sections += [section_workload(ctx, wl) for wl in ctx.W]
    sections += [section_memory(ctx), section_startup(ctx), section_kernel_time(ctx),
                 section_targets(ctx), section_notes(ctx)]
    return "\n".join(line for lines in sections for line in lines) + "\n"


# ---------------------------------------------------------------- main


def render(path):
    """The report again, from the .json a run wrote beside it (no root, no run)."""
    with open(path) as f:
        d = json.load(f)
    if "report" not in d:
        raise BenchError(f"{path}: no \"report\" key (written before the bench saved it): "
                         "cannot render")
    m = d["report"]
    a = argparse.Namespace(**d["args"])
    # Stands in for Setup: only the loop device's name reaches the report.
    s = argparse.Namespace(tool="iostackbreak", iowork="iowork", floor="floor",
                           pread_file="pread.dat", fsync_file="fsync.dat", loopdev=m["loopdev"])
    C = make_configs(s, m["origin"], m["fsdist_ok"], m["fsdist_why"])
    for k, why in m["failed"].items():
        C[k]["failed"] = why
    W = pick_workloads(make_workloads(s, a), a.only)
    t = datetime.datetime.fromisoformat(m["started"])
    started = t.replace(tzinfo=datetime.timezone(t.utcoffset(), m["tz"]))
    return report(ReportContext(a, d["machine"], W, C, d["runs"], started, m["wall_s"],
                                m["notes"], m["plan_lines"], m["origin"], m["fsdist_why"],
                                d["seed"]))


def interrupted(sig, frame):
    """SIGINT, SIGTERM and SIGHUP: clean up and leave."""
    raise KeyboardInterrupt()


def main():
    ap = argparse.ArgumentParser(description="iostackbreak overhead benchmark (root).")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n-pread", type=int, default=500000)
    ap.add_argument("--n-direct", type=int, default=20000)
    ap.add_argument("--n-fsync", type=int, default=2000)
    ap.add_argument("--phases", type=int, default=None,
                    help="phases per run, N split evenly (default 5, 10 and 8 for the three "
                    "workloads); a run's ns/op is its best phase")
    ap.add_argument("--quiet-budget", type=float, default=120,
                    help="seconds, in all, to wait for other users' tracers to go")
    ap.add_argument("--loop-mib", type=int, default=64)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-stats", action="store_true", help="skip the bpf_stats pass")
    ap.add_argument("--out", default=None, help="result file (default bench/results/DATE.md)")
    ap.add_argument("--only", default=None,
                    help="comma list of workloads to run: pread, direct, fsync (default all)")
    ap.add_argument("--render", metavar="JSON", default=None,
                    help="print the report of an earlier run from its .json (run nothing)")
    a = ap.parse_args()

    if a.render:
        sys.stdout.write(render(a.render))
        return 0
    if os.geteuid() != 0:
        raise BenchError("needs root: it loads BPF programs and sets up a loop device")
    for path in (os.path.join(BUILD, "iostackbreak"), os.path.join(BUILD, "iowork"),
                 os.path.join(BUILD, "bench", "floor")):
        if not os.access(path, os.X_OK):
            raise BenchError(f"{path} is missing: run make bench (or make -f bench/bench.mk bench-build)")
    for cmd in ("bpftool", "losetup", "stdbuf", "syscount", "biolatency"):
        if not shutil.which(cmd):
            raise BenchError(f"{cmd} not found: run scripts/install-deps.sh")

    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    started = datetime.datetime.now().astimezone()
    t_start = time.monotonic()
    M = machine_info()
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    with open(STATS_SYSCTL) as f:
        stats_was = f.read().strip()
    notes = dict(git=git_info(), stats_was=stats_was, load=load,
                 foreign_start=len(foreign_tracers()))
    notes["contaminated"] = 0
    quiet = Quiet(a.quiet_budget)
    runs = []
    # Even when started with SIGINT ignored (a background job of a script).
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    with Setup(a) as s:
        plan = subprocess.run([s.tool, "--plan"], capture_output=True, text=True)
        plan_lines = [l for l in plan.stdout.splitlines()
                      if not re.search(r"\bskipped:", l)] or [plan.stderr.strip()]
        origin = blk_origin()
        log("bench: probing fsdist -t ext4 ...")
        fsdist_ok, fsdist_why = fsdist_probe(timeout=60)
        C = make_configs(s, origin, fsdist_ok, fsdist_why)
        W = pick_workloads(make_workloads(s, a), a.only)
        total = sum(len(workload_configs(wl, C)) for wl in W)
        log(f"bench: {a.rounds} rounds x {2 * total - len(W)} runs (+1 stats pass), seed {seed}; "
            f"loop device {s.loopdev}, files in {s.workdir}")

        # Warm-up: files created and cached, loop image cached, code paged in.
        for wl in W:
            run_one(s, wl, C["untraced"], False)

        def do(wl, k, rnd, stats):
            c = C[k]
            if c.get("failed"):
                return None
            for attempt in range(3):
                quiet.wait()
                try:
                    r = run_one(s, wl, c, stats)
                except BenchError as e:
                    c["failed"] = str(e)[:200]
                    log(f"bench: {c['label']} failed, dropped from the run: {e}")
                    return None
                if not r["foreign"]:
                    break
                log(f"bench: someone else's tracing programs were loaded during the run: "
                    f"{'again' if attempt < 2 else 'kept, flagged'}")
            if r["foreign"]:
                notes["contaminated"] += 1
            r["round"], r["stats"] = rnd, stats
            runs.append(r)
            extra = f" start {1000 * r['startup_s']:.0f} ms" if "startup_s" in r else ""
            log(f"  {'stats' if stats else f'round {rnd}'} {wl.key:6} {c['label'][:44]:44} "
                f"{r['ns_per_op']:12,.0f} ns/op{extra}")
            return r

        for rnd in range(1, a.rounds + 1):
            for wl in W:
                # Untraced between every two configurations: each one is
                # compared with the untraced runs just before and after it.
                keys = [k for k in workload_configs(wl, C) if k != "untraced"]
                rng.shuffle(keys)
                prev = do(wl, "untraced", rnd, False)
                for k in keys:
                    r = do(wl, k, rnd, False)
                    nxt = do(wl, "untraced", rnd, False)
                    if r and prev and nxt:
                        r["base"] = (prev["ns_per_op"] + nxt["ns_per_op"]) / 2
                    prev = nxt
        if not a.no_stats:
            s.stats_on()
            try:
                for wl in W:
                    keys = [k for k in workload_configs(wl, C) if k != "untraced"]
                    rng.shuffle(keys)
                    for k in keys:
                        do(wl, k, 0, True)
            finally:
                s.stats_restore()
        notes["foreign_end"] = len(foreign_tracers())
        notes["quiet"] = (quiet.waits, quiet.waited_s)
        # What the report needs besides args, machine and runs, saved in the
        # .json so that --render can write the report again.
        meta = dict(started=started.isoformat(), tz=started.strftime("%Z"),
                    wall_s=time.monotonic() - t_start, notes=notes, plan_lines=plan_lines,
                    origin=origin, fsdist_ok=fsdist_ok, fsdist_why=fsdist_why,
                    loopdev=s.loopdev,
                    failed={k: c["failed"] for k, c in C.items() if c.get("failed")})

    text = report(ReportContext(a, M, W, C, runs, started, meta["wall_s"], notes,
                                plan_lines, origin, fsdist_why, seed))
    out = a.out or os.path.join(ROOT, "bench", "results", f"{started:%Y-%m-%d}.md")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    # Every run's raw figures beside the report, for a second look.
    raw = os.path.splitext(out)[0] + ".json"
    with open(raw, "w") as f:
        json.dump({"seed": seed, "args": vars(a), "machine": M, "runs": runs, "report": meta},
                  f, indent=1)
    sys.stdout.write(text)
    log(f"bench: written to {os.path.relpath(out, os.getcwd())}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        log(f"bench: {e}")
        sys.exit(1)
    except KeyboardInterrupt:
        log("bench: interrupted; tracers stopped, loop device detached, "
            "bpf_stats_enabled restored")
        sys.exit(130)
