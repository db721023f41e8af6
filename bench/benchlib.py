"""What bench/parts.py and bench/sources.py share: paths, a tracer run from
its ready line to SIGINT, the workload's scratch file, the CPU's name, and
where results go."""

import contextlib
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


@contextlib.contextmanager
def ext4_loop(tmp, size_mib, name, *mount_opts):
    """An ext4 (no lazy init) on a loop device over tmp/name, mounted at
    tmp/mnt; yields the mount point; unmounted and detached after."""
    img, mnt = os.path.join(tmp, name), os.path.join(tmp, "mnt")
    with open(img, "wb") as f:
        f.truncate(size_mib << 20)
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    mounted = False
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                        dev], check=True)
        os.mkdir(mnt)
        subprocess.run(["mount", *mount_opts, dev, mnt], check=True)
        mounted = True
        yield mnt
    finally:
        if mounted:
            subprocess.run(["umount", mnt], check=True)
        subprocess.run(["losetup", "-d", dev], check=True)


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


class ProgCounters:
    """The kernel's run-time counters (run_time_ns, run_cnt) of BPF programs
    by id, read straight with bpf(2): descriptors opened once, then each
    snapshot is one BPF_OBJ_GET_INFO_BY_FD per program back to back, with no
    other system call in between. (Reading them with one bpftool run per
    program put that bpftool's own system calls inside the measured window
    of every program read before it, more so the more programs a tracer
    has: 2% more sys_enter runs per call with the parts' 8 programs.)"""

    SYS_BPF = {"x86_64": 321, "aarch64": 280}
    PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD = 13, 15
    # struct bpf_prog_info (include/uapi/linux/bpf.h): name, run_time_ns, run_cnt
    NAME_OFF, RUN_TIME_OFF, RUN_CNT_OFF, INFO_LEN = 64, 192, 200, 232

    def __init__(self, ids):
        import ctypes
        self.ct = ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.nr = self.SYS_BPF[os.uname().machine]
        self.fds = {}
        for i in ids:
            attr = ctypes.create_string_buffer(128)
            ctypes.c_uint32.from_buffer(attr, 0).value = i
            fd = self._bpf(self.PROG_GET_FD_BY_ID, attr)
            if fd >= 0:
                self.fds[i] = fd
        self.info = ctypes.create_string_buffer(self.INFO_LEN)
        self.attr = ctypes.create_string_buffer(128)

    def _bpf(self, cmd, attr):
        return self.libc.syscall(self.nr, cmd, self.ct.byref(attr), len(attr))

    def snapshot(self):
        """{id: (name, run_time_ns, run_cnt)}"""
        ct, out = self.ct, {}
        for i, fd in self.fds.items():
            ct.memset(self.info, 0, self.INFO_LEN)
            ct.memset(self.attr, 0, len(self.attr))
            ct.c_uint32.from_buffer(self.attr, 0).value = fd
            ct.c_uint32.from_buffer(self.attr, 4).value = self.INFO_LEN
            ct.c_uint64.from_buffer(self.attr, 8).value = ct.addressof(self.info)
            if self._bpf(self.OBJ_GET_INFO_BY_FD, self.attr):
                raise OSError(ct.get_errno(), f"BPF_OBJ_GET_INFO_BY_FD of program {i}")
            raw = self.info.raw
            out[i] = (raw[self.NAME_OFF:self.NAME_OFF + 16].split(b"\0")[0].decode(),
                      int.from_bytes(raw[self.RUN_TIME_OFF:self.RUN_TIME_OFF + 8], "little"),
                      int.from_bytes(raw[self.RUN_CNT_OFF:self.RUN_CNT_OFF + 8], "little"))
        return out

    def close(self):
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}
