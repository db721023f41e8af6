"""For people at a terminal: the verdict line, the heat map, the live view.
Each is checked against the report it comes from, or against a workload
whose behaviour is known."""

import json
import os
import re
import tempfile

from harness import TOOL, LoopDevice, Skip, Tool, Work, cell, layers, make_cgroup, run
from harness import test
from harness import Process
from test_breakdown import cgroup2_root



UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"))


def bar_letters():
    """The live view's bar letters: per layer of threads (bpf/cells.def),
    the first letter of its name, capitalised, that no layer before it
    took."""
    taken = []
    for name in layers("SYSCALL", "VFS", "FS"):
        letter = next((c.upper() for c in name if c.isalpha() and c.upper() not in
                       [t for t, _ in taken]), "?")
        taken.append((letter, name))
    return taken


def short_duration(ns):
    """What the verdict prints for a time (src/report/verdict.c format_duration)."""
    for size, name in UNITS:
        if ns >= size:
            v = ns / size
            return f"{v:.1f} {name}" if v < 10 else f"{v:.0f} {name}"
    return f"{ns} ns"


def direct_reads_report(n, *extra):
    """n direct 4 KiB reads of a loop device under -p, with the tool's
    extra options; returns (the tool's stdout, the loop device's name)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            work = Work("-x", "-D", "pread", str(n), loop.dev)
            tool = Tool("-T", "syscall,blk", "-d", loop.name, "-p", str(work.pid), *extra)
            work.go()
            result = work.finish_held()
            work.release()
            rc, out, err = tool.wait(timeout=60)
        finally:
            loop.close()
    assert rc == 0, err
    assert int(result["done"]) == n, result
    return out, loop.name


@test
def verdict_matches_the_tables_it_sums_up():
    out, disk = direct_reads_report(400, "--json")
    rep = json.loads(out.splitlines()[-1])
    verdict = rep["verdict"]
    read = cell(rep, "syscall", "read")
    b = next(b for b in rep["breakdown"] if b["op"] == "read")
    # Rule 2: read has all the time; the other ops with calls are named
    # only for a long tail.
    head = f"read p99 {short_duration(read['p99_ns'])} ({read['count']:,} calls"
    assert verdict.startswith(head), (verdict, head)
    # Rule 3: the parts, largest first, each share as the breakdown has it.
    tail = verdict.split(": ", 1)[1].split("; ")[0]
    shares = re.findall(r"(\d+)% ([a-z_ ]+?)(?: \(|,|$)", tail)
    assert shares, verdict
    sums = {p["part"]: p["sum_ns"] for p in b["parts"]}
    named = {"waiting for " + disk: "io_wait", "runqueue": "runqueue", "blocked": "blocked",
             "syscall on CPU": "syscall"}
    prev = 101
    for pct, what in shares:
        part = named[what.strip()]
        want = 100 * sums[part] / b["total_ns"]
        assert abs(int(pct) - want) <= 0.5 + 1e-9, (verdict, part, want)
        assert int(pct) <= prev, verdict
        prev = int(pct)
    if "io_wait" in [named[w.strip()] for _, w in shares]:
        per_call = b["blk_requests"] / b["count"]
        shown = f"{per_call:.2g}" if per_call < 1 else f"{per_call:.1f}"
        assert f"waiting for {disk} ({shown} requests/call)" in verdict, verdict


@test
def verdict_heads_every_text_report_and_no_verdict_drops_it():
    """The headline names the op with the most time, a line per op follows;
    none is wider than 100 columns."""
    out, _ = direct_reads_report(100, "-u")
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0].startswith("verdict: read took the most time ("), out[:400]
    assert lines[1].startswith("  read p99 "), out[:400]
    assert "(100 calls" in lines[1], lines[1]
    assert max(len(line) for line in out.splitlines()) <= 100, out
    out, _ = direct_reads_report(100, "-u", "--no-verdict")
    assert "verdict" not in out, out[:400]


# ---- the heat map, as a browser draws it ----

STEP_WORKLOAD = """
import os, sys, time
d, secs = sys.argv[1], float(sys.argv[2])
buf = b"x" * 4096
for name, flags in (("cached", 0), ("synced", os.O_DSYNC)):
    fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | flags, 0o644)
    t, n = time.monotonic(), 0
    while time.monotonic() - t < secs:
        os.pwrite(fd, buf, (n % 256) * 4096)
        n += 1
    os.close(fd)
"""


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG, as
    Chromium writes its screenshots (no interlace)."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, w = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype)
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def log2_mode(cell):
    """The log2 slot with the most calls in a JSON cell."""
    slots = {}
    for b in cell["buckets"]:
        k = max(b["lo_ns"], 1).bit_length() - 1
        slots[k] = slots.get(k, 0) + b["count"]
    return max(slots, key=slots.get) if slots else None


@test
def heatmap_of_a_stepping_workload_shows_the_step_in_a_browser():
    import shutil
    import subprocess
    import xml.etree.ElementTree as ET
    if not shutil.which("chromium"):
        raise Skip("chromium is not installed: run scripts/install-test-deps.sh")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        svg, png = os.path.join(tmp, "io.svg"), os.path.join(tmp, "io.png")
        tool = Tool("-T", "syscall", "--json", f"--heatmap={svg}", "1", "--",
                    "python3", "-c", STEP_WORKLOAD, tmp, "3")
        rc, out, err = tool.wait(timeout=60)
        assert rc == 0, err
        reports = [json.loads(line) for line in out.splitlines() if line.strip()]
        root = ET.parse(svg).getroot()
        width, height = int(root.get("width")), int(root.get("height"))
        plot = next(e for e in root.iter() if e.get("id") == "plot-syscall-write")
        p = run("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                f"--window-size={width},{height}", f"--screenshot={png}", "file://" + svg,
                timeout=120)
        assert os.path.exists(png), p.stderr
        w, h, px = png_pixels(png)
    assert (w, h) == (width, height), (w, h)
    x0, y0 = float(plot.get("x")), float(plot.get("y"))
    pw, lo, hi = float(plot.get("width")), int(plot.get("data-slot-lo")), int(plot.get("data-slot-hi"))
    assert int(plot.get("data-columns")) == len(reports), (plot.attrib, len(reports))
    total = sum(r["interval_s"] for r in reports)
    t, drawn, modes = 0.0, [], []
    for r in reports:
        # The middle of this report's column, and the colour of each slot.
        x = int(x0 + (t + r["interval_s"] / 2) / total * pw)
        t += r["interval_s"]
        darkness = {}
        for k in range(lo, hi + 1):
            rgb = px[int(y0 + (hi - k + 0.5) * 14)][x]
            if max(abs(v - 247) for v in rgb) > 8:  # not the plot's #f7f7f7
                darkness[k] = 3 * 255 - sum(rgb)
        writes = cell(r, "syscall", "write")
        drawn.append(bool(darkness))
        assert bool(darkness) == (writes["count"] > 0), (r["interval_s"], writes["count"])
        if darkness:
            # The slot with the most calls is drawn darkest (or as dark as
            # another of nearly the same count).
            mode = log2_mode(writes)
            assert darkness.get(mode) == max(darkness.values()), (mode, darkness)
            modes.append(mode)
    # ~3 s of cached writes (well under 10 us), then ~3 s of O_DSYNC writes
    # that wait for the disk: the busiest slot climbs by 32x or more.
    assert sum(drawn) >= 5, drawn
    assert modes[-1] - modes[0] >= 5, modes


# ---- histogram rows in whole units ----

EVENT = re.compile(r"^\d\d:\d\d:\d\d\.\d{6} +iowork +\d+ +\d+ +(\w+) +(\d+)\.(\d{3}) ")
ROW = re.compile(r"^ +([\d.]+) -> ([\d.]+|\.\.\.) +: (\d+) +\|")


def text_hist(out, title):
    """The rows (lo, hi, count) of the text report's histogram after title."""
    lines = out.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith(title))
    rows = []
    for l in lines[at + 2:]:
        m = ROW.match(l)
        if not m:
            break
        rows.append((m[1], m[2], int(m[3])))
    return rows


def expected_us_rows(lat_ns):
    """The rows -u must print for these latencies: below 1 us the ns powers
    of two up to 511 and 512 -> 999 ns, in us with decimals; from 1 us,
    whole microseconds by power of two, as biolatency -u prints them."""
    def row(ns):
        if ns < 1000:
            k = max(ns.bit_length() - 1, 0)
            lo, hi = (1 << k if k else 0), min((1 << (k + 1)) - 1, 999)
            fmt = lambda v: f"{v / 1000:.3f}".rstrip("0").rstrip(".")
            return (k, fmt(lo), fmt(hi))
        us = ns // 1000
        k = us.bit_length() - 1
        return (100 + k, str(1 << k), str((1 << (k + 1)) - 1))
    counts = {}
    for ns in lat_ns:
        counts[row(ns)] = counts.get(row(ns), 0) + 1
    keys = sorted(counts)
    return [(lo, hi, counts[(k, lo, hi)]) for (k, lo, hi) in keys]


@test
def histogram_rows_are_whole_microseconds_and_match_every_call():
    """-u: each row from 1 us on is a whole number of microseconds (the
    kernel counts floor(ns / 1000) by power of two), rows below 1 us keep
    their decimals, and every row holds exactly the calls whose latency,
    as --slower=0 prints it for each call, falls in it."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "cached.dat")
        with open(path, "wb") as f:
            f.write(os.urandom(64 * 4096))
        loop = LoopDevice(tmp)
        try:
            # Cached reads (sub-microsecond to microseconds), then direct
            # reads of the disk (tens of microseconds and more).
            work = Work("-x", "pread", "2000", path, "pread/D", "300", loop.dev)
            tool = Tool("-T", "syscall", "-u", "--slower=0", "-p", str(work.pid))
            work.go()
            result = work.finish_held()
            work.release()
            rc, out, err = tool.wait(timeout=120)
        finally:
            loop.close()
    assert rc == 0, err
    assert "0 events lost" in err, err
    lat = []
    for l in out.splitlines():
        m = EVENT.match(l)
        if m and m[1] == "read":
            lat.append(int(m[2]) * 1000 + int(m[3]))
    assert len(lat) == 2300, (len(lat), result)
    rows = text_hist(out, "syscall read: 2,300 calls, latency in us")
    # Trimmed as the report trims: from the first non-empty row to the last.
    shown = [r for r in rows if r[2]]
    assert shown == expected_us_rows(lat), (rows, expected_us_rows(lat))
    whole = [r for r in rows if "." not in r[0]]
    assert whole and all(int(hi) == 2 * int(lo) - 1 or lo == "1" and hi == "1"
                         for lo, hi, _ in whole), rows
    assert sum(r[2] for r in rows) == 2300, rows


# ---- the live view, in a terminal (tmux) ----

READER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
t = time.monotonic()
while time.monotonic() - t < float(sys.argv[2]):
    os.pread(fd, 4096, 0)
"""


def tmux(*args, check=True):
    return run("tmux", *args, check=check).stdout


def pane(session):
    return tmux("capture-pane", "-p", "-t", session)


def sane_tty(stty):
    """stty -a says the terminal reads lines and echoes (not -icanon, -echo)."""
    return all(re.search(rf"(?<![-\w]){flag}(?!\w)", stty) for flag in ("icanon", "echo"))


def terminal_given_back(session, status):
    """The tool in the pane has ended with 0 (its shell wrote status.rc and
    status.stty), the terminal reads lines and echoes again, and the pane
    is off the alternate screen. status.stty appears whole (written to
    status.part, then renamed): the shell creates a file it redirects to
    before stty writes it, and a read in between found it empty once."""
    import time
    deadline = time.monotonic() + 20
    while not os.path.exists(status + ".stty") and time.monotonic() < deadline:
        time.sleep(0.2)
    with open(status + ".rc") as f:
        assert f.read().strip() == "0"
    with open(status + ".stty") as f:
        stty = f.read()
    assert sane_tty(stty), stty
    assert tmux("display", "-p", "-t", session, "#{alternate_on}").strip() == "0"


def calls_of(screen, pid):
    """The CALLS (since the start) of a process's row on the live screen."""
    for row in screen.splitlines():
        cols = row.split()
        if cols and cols[0] == str(pid):
            return int(cols[3])
    return None


@test
def live_view_shows_the_workload_and_gives_the_terminal_back():
    import shutil
    import subprocess
    import time
    if not shutil.which("tmux"):
        raise Skip("tmux is not installed: run scripts/install-test-deps.sh")
    session = f"iosb-live-{os.getpid()}"
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        data, status = os.path.join(tmp, "data"), os.path.join(tmp, "status")
        with open(data, "wb") as f:
            f.write(b"x" * 65536)
        # The pane's shell records how the tool ended and whether the
        # terminal is back in its usual mode (icanon and echo).
        tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40",
             f"{TOOL} --live -T syscall; echo $? > {status}.rc; "
             f"stty -a > {status}.part && mv {status}.part {status}.stty; sleep 60")
        reader = None
        try:
            deadline = time.monotonic() + 30
            while "iostackbreak --live" not in pane(session) and time.monotonic() < deadline:
                time.sleep(0.2)
            reader = Process(["python3", "-c", READER, data, "30"])
            # Within 2 s of starting, the process is on the screen.
            first = second = None
            deadline = time.monotonic() + 4
            while first is None and time.monotonic() < deadline:
                time.sleep(0.3)
                first = calls_of(pane(session), reader.pid)
            assert first, pane(session)
            time.sleep(2.2)
            screen = pane(session)
            second = calls_of(screen, reader.pid)
            assert second and second > first, (first, second, screen)
            assert screen.splitlines()[0].startswith("iostackbreak --live"), screen
            assert "verdict: read p99" in screen, screen
            # The bar's letters, one per layer of threads in bpf/cells.def.
            lines = [l.rstrip() for l in screen.splitlines()]
            legend = "(bar: %s: the layer on CPU;" % ", ".join(
                "%s %s" % (letter, name) for letter, name in bar_letters())
            assert legend in lines, screen
            assert lines[lines.index(legend) + 1] == \
                " w io_wait, b blocked, r runqueue, l lock, j journal, t throttled)", screen
            # Calls on pipes and sockets (tmux's own, python's) are left
            # out of the storage layers, and the view says so.
            assert re.search(r"\(syscall left out: \d+ calls on pipes, \d+ on sockets", screen), screen
            # d: the disks (no blk layer here: it says so); p: back.
            tmux("send-keys", "-t", session, "d")
            time.sleep(0.5)
            assert "no disks: the blk layer is not traced" in pane(session)
            tmux("send-keys", "-t", session, "p")
            # c: the cgroups; the reader's own is named by its path.
            root, _ = cgroup2_root()
            cgroup = make_cgroup(os.path.join(root, f"iosb-live-{os.getpid()}"))
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(reader.pid))
            tmux("send-keys", "-t", session, "c")
            time.sleep(2.5)
            screen = pane(session)
            assert "busiest cgroups, by their calls" in screen, screen
            row = next((l for l in screen.splitlines()
                        if l.rstrip().endswith(f"/iosb-live-{os.getpid()}")), None)
            assert row and int(row.split()[2]) > 0, screen
            # s: the sort cycles (time, calls, p99), the header says which.
            tmux("send-keys", "-t", session, "p", "s")
            time.sleep(0.5)
            assert "s sort (calls)" in pane(session).splitlines()[0], pane(session)
            # space: the screen holds still while counting goes on; again,
            # it moves, and the calls since the start include the pause.
            tmux("send-keys", "-t", session, "Space")
            time.sleep(0.5)
            held = pane(session)
            assert "PAUSED" in held.splitlines()[0], held
            paused_at = calls_of(held, reader.pid)
            time.sleep(2.2)
            assert calls_of(pane(session), reader.pid) == paused_at, pane(session)
            tmux("send-keys", "-t", session, "Space")
            time.sleep(1.5)
            screen = pane(session)
            assert "PAUSED" not in screen.splitlines()[0], screen
            assert calls_of(screen, reader.pid) > paused_at, (paused_at, screen)
            # A resize redraws, the header on the first line, nothing wider.
            tmux("resize-window", "-t", session, "-x", "90", "-y", "30")
            time.sleep(0.8)
            screen = pane(session)
            assert screen.splitlines()[0].startswith("iostackbreak --live"), screen
            assert max(len(l) for l in screen.splitlines()) <= 90, screen
            tmux("send-keys", "-t", session, "q")
            terminal_given_back(session, status)
            # The final report is on the normal screen (its last line).
            assert "(times in us over" in pane(session), pane(session)
        finally:
            if reader:
                reader.kill()
                reader.wait()
            tmux("kill-session", "-t", session, check=False)


def live_view_ended_by(how):
    """--live in a tmux pane, ended by how(session, tool pid) once it has
    drawn a report: it exits 0, prints the final report on the normal
    screen, and the terminal reads lines and echoes again."""
    import shutil
    import time
    if not shutil.which("tmux"):
        raise Skip("tmux is not installed: run scripts/install-test-deps.sh")
    session = f"iosb-live-end-{os.getpid()}"
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        status = os.path.join(tmp, "status")
        tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30",
             f"{TOOL} --live -T syscall; echo $? > {status}.rc; "
             f"stty -a > {status}.part && mv {status}.part {status}.stty; "
             "sleep 60")
        try:
            deadline = time.monotonic() + 30
            while "verdict:" not in pane(session) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert "verdict:" in pane(session), pane(session)
            shell = tmux("display", "-p", "-t", session, "#{pane_pid}").strip()
            tool = run("pgrep", "-P", shell, "iostackbreak").stdout.split()
            assert len(tool) == 1, tool
            how(session, int(tool[0]))
            terminal_given_back(session, status)
            assert "(times in us over" in pane(session), pane(session)
        finally:
            tmux("kill-session", "-t", session, check=False)


@test
def live_view_gives_the_terminal_back_on_sigterm():
    live_view_ended_by(lambda session, pid: os.kill(pid, 15))


@test
def live_view_gives_the_terminal_back_on_ctrl_c():
    live_view_ended_by(lambda session, pid: tmux("send-keys", "-t", session, "C-c"))
