#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The sample outputs in README.md and docs/*.md, made by the tool.

Each sample sits in the markdown between two markers:

    <!-- sample NAME -->
    ```text
    ...what the tool printed, trimmed...
    ```
    <!-- /sample -->

and NAME is one of SAMPLES below: a command run here for real (root and
BPF, as the integration tests need), and the lines of its output the page
shows. Output of a ```text block outside the markers is refused: every
sample is the tool's.

    tests/docs/samples.py --write   run every sample, rewrite the blocks
                                    (and docs/heatmap-example.svg)
    tests/docs/samples.py           run every sample, fail if one drifted
    tests/docs/samples.py --print   run every sample, print them

How a drift is told: latencies, counts and PIDs change from run to run, so
the check compares the structure of a sample, not its figures. Both the
committed sample and a fresh run are reduced to a skeleton, line by line:
every number (digits with their separators and decimal point, and a lone
"-" standing for one) becomes "#", runs of spaces become one, histogram
bucket rows ("a -> b : n |***|") and the lines of the kinds of lock a
call waited for ("lock: other 100%") and the rows of the lock and blocked
and runqueue parts (printed only when they took time), the headers of
histograms (printed only for long-tailed cells) and the "<" of a share too
small to print are dropped, and so is the count of
events dropped at the end of a report's last line (which buckets hold
calls, whether a call met a contended lock, whether the kernel ran the
programs for every completion, vary), and a verdict line keeps only its first word (which ops have a
long tail varies). The skeletons, sorted, must be equal: the same lines, so
the same headers, columns, rows (layer, op, part, key) and notes, in any
order (keys of equal counts come in either order).
A change of the report's format fails the check until the samples are
written again with --write. The heat map of docs/events.md is compared by
the titles of its panels (the cells it shows), reduced the same way.
"""
import difflib
import glob
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.environ.get("IOSB_TOOL", os.path.join(ROOT, "build", "iostackbreak"))
# Static: no loader opening libraries, so a command's calls are its own.
WORK = os.path.join(ROOT, "build", "iowork-static")
URING = os.path.join(ROOT, "build", "uringwork")
HEATMAP = os.path.join(ROOT, "docs", "heatmap-example.svg")
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
BEGIN = re.compile(r"^<!-- sample ([a-z0-9-]+) -->$")
END = "<!-- /sample -->"


def between(lines, start, stop=None, count=None):
    """The lines from the first that matches start (a regex) to the first
    after it that matches stop (included), or count lines."""
    for i, line in enumerate(lines):
        if re.search(start, line):
            if count is not None:
                return lines[i:i + count]
            for j in range(i + 1, len(lines)):
                if re.search(stop, lines[j]):
                    return lines[i:j + 1]
            return lines[i:]
    raise AssertionError(f"no line matches {start!r}")


def pieces(*parts):
    """Pieces of an output, joined with "..." where lines were left out."""
    out = []
    for p in parts:
        if out:
            out.append("...")
        out.extend(p)
    return out


class Scratch:
    """An ext4 of the samples' own, on a loop device over a file under
    /var/tmp: the workloads' block requests are then theirs alone (no other
    process's deletions, discards or metadata reads share its journal), so
    the cells a sample shows are the same from run to run."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="iosb-samples.", dir="/var/tmp")
        self.image = os.path.join(self.dir, "disk.img")
        self.mnt = os.path.join(self.dir, "mnt")
        self.dev = None
        self.mounted = False
        try:
            with open(self.image, "wb") as f:
                f.truncate(256 << 20)
            self.dev = subprocess.run(["losetup", "-f", "--show", self.image], check=True,
                                      capture_output=True, text=True).stdout.strip()
            subprocess.run(["mkfs.ext4", "-q", "-F", self.dev], check=True)
            os.mkdir(self.mnt)
            subprocess.run(["mount", self.dev, self.mnt], check=True)
            self.mounted = True
        except BaseException:
            self.close()
            raise

    def path(self, name):
        return os.path.join(self.mnt, name)

    def close(self):
        if self.mounted:
            subprocess.run(["umount", self.mnt], check=True)
            self.mounted = False
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev], check=True)
            self.dev = None
        subprocess.run(["rm", "-rf", self.dir], check=True)


def run(argv, env=None):
    """What argv printed on stdout, as lines; it must succeed."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    if p.returncode:
        raise AssertionError(f"{shlex.join(argv)} exited {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout.splitlines()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(data):
    """Part of a scrape of the exporter after a workload of cached reads."""
    port = free_port()
    tool = subprocess.Popen([TOOL, f"--prometheus=127.0.0.1:{port}", "-T", "syscall"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=5).read()
                break
            except OSError:
                if tool.poll() is not None:
                    raise AssertionError(f"the exporter exited: {tool.stderr.read()}")
                time.sleep(0.1)
        run([WORK, "-c", "pread", "2000", data])
        text = urllib.request.urlopen(url, timeout=5).read().decode().splitlines()
    finally:
        tool.terminate()
        tool.wait(timeout=30)
    cell = 'layer="syscall",op="read"'
    buckets = [l for l in text if l.startswith("iostackbreak_latency_seconds_bucket{" + cell)]
    return pieces(between(text, r"^# HELP iostackbreak_latency_seconds ", count=2) + buckets[:3],
                  buckets[-1:] + [l for l in text
                                  if re.match(r"iostackbreak_latency_seconds_(sum|count)\{" + cell, l)])


def samples(scratch):
    """NAME -> the lines its page shows."""
    data = scratch.path("data")
    demo = run([os.path.join(ROOT, "scripts", "demo.sh")], env={"TMPDIR": scratch.mnt})
    out = {}
    out["demo"] = pieces(
        between(demo, r"^verdict", count=1),
        between(demo, r"^LAYER", r"^$")[:-1],
        between(demo, r"^Where the time goes", r"^OP "),
        between(demo, r"^fsync ", r"writeback:"),
        between(demo, r"^\(syscall left out", r"^\(times in"))
    out["parts"] = pieces(between(demo, r"^Where the time goes", r"^\(times in"))
    out["left-out"] = between(demo, r"^\(syscall left out", r"^\(times in")
    # Slow calls: O_DIRECT reads of a file, each an event with its request.
    sub = [WORK, "-c", "pread", "1", data]
    run(sub)
    slow = run([TOOL, "-u", "-T", "syscall,blk", "--slower=1us", "--", WORK, "-D", "pread",
                "20", data])
    out["slower"] = between(slow, r"^TIME ", count=1) + [l for l in slow if " read " in l][:3]
    js = run([TOOL, "--json", "--no-verdict", "-T", "syscall,blk", "--slower=1us", "--", WORK,
              "-D", "pread", "1", data])
    out["event-json"] = [l for l in js if l.startswith('{"event":"io"') and '"op":"read"' in l][:1]
    # Per process: two processes, cached and direct reads.
    per = run([TOOL, "-u", "-T", "syscall", "-P", "--no-parts", "--", "sh",
               "-c", f"{WORK} -c pread 3000 {data} >/dev/null; {WORK} -D pread 300 {data} >/dev/null"])
    out["per-process"] = between(per, r"^LAYER +OP +PID", r"^\(times in")
    # Request flags of fsyncs with data.
    fl = run([TOOL, "-u", "-T", "blk", "-F", "--", WORK, "-W", "fsync", "50",
              data])
    # (a REQUESTS column: submitted, or written back for the command's pages)
    out["flags"] = between(fl, r"^LAYER +OP +(REQUESTS +)?FLAGS", r"^\(times in")
    # io_uring requests of known counts.
    ur = run([TOOL, "-u", "-T", "io_uring", "--", URING, "-o", "10", "-w",
              "200", "-s", "10", "-r", "200", "-q", "8", scratch.path("uring")])
    out["uring"] = between(ur, r"^LAYER", r"^\(times in")
    # The aio layer's line of the plan (fentry or kprobes, or why not).
    out["aio-plan"] = [l for l in run([TOOL, "--plan", "--check"])
                       if l.startswith("aio ")]
    st = run([TOOL, "-u", "-T", "syscall", "--stats", "--no-parts", "--", WORK,
              "-c", "pread", "100000", data])
    out["stats"] = between(st, r"^LAYER +PROGS", r"^\(tracer cost")
    out["prometheus"] = scrape(data)
    return out


def heatmap(scratch):
    """The heat map docs/events.md shows: 4 KiB writes, cached then O_DSYNC,
    traced with --heatmap and a 1 s interval (about 5 s)."""
    data, svg = scratch.path("step"), scratch.path("heatmap.svg")
    work = (f"{WORK} -P 200 pwrite 8000 {data} >/dev/null; "
            f"{WORK} -S dsync -P 1000 pwrite 600 {data} >/dev/null")
    # The file is made and its blocks allocated by a run before: the traced
    # one then reads nothing from the disk, and its cells (the heat map's
    # panels) are always the same.
    run([WORK, "pwrite", "8000", data])
    run([TOOL, "-T", "syscall,blk", "--heatmap=" + svg, "1", "--", "sh", "-c", work])
    with open(svg) as f:
        return f.read()


def panels(svg):
    """A heat map's skeleton: the titles of its panels, one per cell."""
    return skeleton(re.findall(r'class="title">([^<]*)<', svg))


def unwrap_closing(lines):
    """The closing "(times in ...)" line whole: the report wraps it at 100
    columns when it names dropped events."""
    out, joining = [], False
    for line in lines:
        if joining:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
        if line.startswith("(times in ") or joining:
            joining = not line.rstrip().endswith(")")
    return out


def skeleton(lines):
    out = []
    for line in unwrap_closing(lines):
        if re.match(r"^\s*[\d.]+ -> [\d.]+\s+:", line):
            continue
        if line.startswith("verdict"):
            out.append("verdict")
            continue
        if line.strip().startswith("lock: "):
            continue
        # A part row of the time split is printed only when the part took
        # time; whether a call met a contended lock, or slept on something
        # other than I/O, varies from run to run.
        if re.match(r"^\s*(\S+\s+[\d,]+\s+[\d.,<]+\s+)?(lock|blocked|runqueue)\s+<?[\d.]+%",
                    line):
            continue
        # Histograms are printed only for cells with a long tail (p99 at
        # least 10x p50), which varies: their headers and column titles too.
        if re.match(r"^\S+ \S+: [\d,]+ (calls|requests|bios), latency in \S+$", line.strip()) or \
                re.match(r"^\s*\S+\s+: count\s+distribution", line):
            continue
        line = line.replace("<", "")  # "<0.1%": a share too small to print
        # An event names the lock its call waited longest for, if it met one.
        line = re.sub(r" lock [\d.,]+ \S+ on \S+$", "", line)
        line = re.sub(r"; \d+ events DROPPED: .*\)$", ")", line)
        s = re.sub(r"\d[\d,.]*", "#", line)
        s = re.sub(r"(?<=\s)-(?=\s|$)", "#", s)
        out.append(" ".join(s.split()))
    return out


def blocks(text):
    """(name, start, end) of each sample block: lines start..end-1 are its
    fenced text."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            j = lines.index(END, i)
            assert lines[i + 1] == "```text" and lines[j - 1] == "```", \
                f"sample {m.group(1)}: a ```text block must follow its marker"
            found.append((m.group(1), i + 2, j - 1))
            i = j
        elif lines[i] == "```text":
            raise AssertionError(f"line {i + 1}: a ```text block outside sample markers")
        i += 1
    return lines, found


def main():
    write = sys.argv[1:] == ["--write"]
    if sys.argv[1:] == ["--print"]:
        scratch = Scratch()
        try:
            for name, lines in samples(scratch).items():
                print(f"== {name}", *lines, sep="\n")
        finally:
            scratch.close()
        return 0
    if sys.argv[1:] not in ([], ["--write"]):
        print("usage: tests/docs/samples.py [--write | --print]", file=sys.stderr)
        return 2
    started = time.monotonic()
    scratch = Scratch()
    try:
        fresh = samples(scratch)
        svg = heatmap(scratch)
    finally:
        scratch.close()
    bad = 0
    if write:
        with open(HEATMAP, "w") as f:
            f.write(svg)
    else:
        with open(HEATMAP) as f:
            if sorted(panels(f.read())) != sorted(panels(svg)):
                bad += 1
                print(f"{os.path.relpath(HEATMAP, ROOT)} drifted from the tool's: panels "
                      f"{panels(svg)} (tests/docs/samples.py --write makes it again)")
    used = set()
    for page in PAGES:
        with open(page) as f:
            text = f.read()
        rel = os.path.relpath(page, ROOT)
        try:
            lines, found = blocks(text)
        except AssertionError as e:
            print(f"{rel}: {e}")
            bad += 1
            continue
        for name, a, b in reversed(found):
            if name not in fresh:
                print(f"{rel}: no sample named {name}")
                bad += 1
                continue
            used.add(name)
            if write:
                lines[a:b] = fresh[name]
            elif sorted(skeleton(lines[a:b])) != sorted(skeleton(fresh[name])):
                bad += 1
                print(f"{rel}: sample {name} drifted from the tool's output "
                      "(tests/docs/samples.py --write makes it again):")
                sys.stdout.writelines(difflib.unified_diff(
                    [l + "\n" for l in skeleton(lines[a:b])],
                    [l + "\n" for l in skeleton(fresh[name])], "page", "tool"))
        if write:
            with open(page, "w") as f:
                f.write("\n".join(lines))
    for name in sorted(set(fresh) - used):
        print(f"sample {name} is shown on no page")
        bad += 1
    total = len(used) + 1
    print(f"docs: {total - min(bad, total)} passed, {bad} failed "
          f"({time.monotonic() - started:.1f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
