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
import xml.etree.ElementTree as ET

from harness import ROOT, LoopDevice, Skip, Tool, check_blk_count, disk_stats, test

STACKWORK = os.path.join(ROOT, "build", "stackwork")
HUNDRED, THREE_HUNDRED = 100 * 4096, 300 * 4096


def traced(loop, tmp, *args):
    """stackwork under -T blk -d LOOP ARGS --json --folded=FILE
    --flamegraph=TMP/stacks.svg: (the JSON report, the folded lines, the
    workload's own line, diskstats' reads and sectors read by the run)."""
    folded = os.path.join(tmp, "stacks.folded")
    before = disk_stats(loop.name)
    tool = Tool("-T", "blk", "-d", loop.name, "--json", f"--folded={folded}",
                f"--flamegraph={os.path.join(tmp, 'stacks.svg')}", *args,
                "--", STACKWORK, loop.dev)
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


def user_paths(rows):
    """The folded rows summed by their user frames (those without _[k])."""
    paths = collections.Counter()
    for row in rows:
        stack, weight = row.rsplit(" ", 1)
        frames = stack.split(";")
        user = tuple(f for f in frames[1:] if not f.endswith("_[k]"))
        assert frames[0] == "stackwork", row
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
