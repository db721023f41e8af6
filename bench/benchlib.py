"""What bench/parts.py and bench/sources.py share: paths, a tracer run from
its ready line to SIGINT, the workload's scratch file, the CPU's name, and
where results go."""

import datetime
import os
import select
import signal
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, "build")
TOOL = os.path.join(BUILD, "iostackbreak")
IOWORK = os.path.join(BUILD, "iowork")
READY = "Hit Ctrl-C to end."


class Tracer:
    """A tracer from exec to its ready line (on stdout or stderr) to SIGINT;
    start_s and the stop()'s return value time both ends, out holds its
    stdout once stopped."""

    def __init__(self, argv, ready=READY, timeout=60):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out = ""
        fds, buf = [self.proc.stdout.fileno(), self.proc.stderr.fileno()], b""
        while ready.encode() not in buf:
            if self.proc.poll() is not None or time.monotonic() - t0 > timeout:
                raise SystemExit(f"{argv}: not ready: {buf.decode(errors='replace')}")
            for fd in select.select(fds, [], [], 0.5)[0]:
                buf += os.read(fd, 65536)
        self.start_s = time.monotonic() - t0

    def stop(self):
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=60)
        self.out = out.decode(errors="replace")
        return time.monotonic() - t0


def sysctl(name, value=None):
    """A sysctl's value; with value, set it. Returns the value before."""
    path = "/proc/sys/" + name.replace(".", "/")
    with open(path) as f:
        old = f.read().strip()
    if value is not None:
        with open(path, "w") as f:
            f.write(value)
    return old


def need_root(prog):
    if os.geteuid():
        raise SystemExit(f"{prog}: needs root")


def scratch_file():
    """A cached file for iowork's preads, in a fresh directory."""
    path = os.path.join(tempfile.mkdtemp(dir="/var/tmp"), "data")
    subprocess.run([IOWORK, "-c", "pread", "1", path], check=True, capture_output=True)
    return path


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "?"


def save(name, text):
    """bench/results/NAME-DATE.md"""
    with open(os.path.join(ROOT, "bench", "results", f"{name}-{datetime.date.today()}.md"),
              "w") as f:
        f.write(text)
