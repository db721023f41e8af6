"""--btf=FILE: the kernel's types from a file, for kernels without
/sys/kernel/btf/vmlinux. The truth is this kernel's own BTF: a copy of it
given with --btf must give the same plan and the same counts; with the
kernel's BTF hidden (a tmpfs over /sys/kernel/btf in a private mount
namespace: to the tool, a kernel built without CONFIG_DEBUG_INFO_BTF) the
tool must refuse in one line naming --btf, and with the copy it must trace
with raw tracepoints, counting the workload's calls exactly. Bad files
are in test_bad_input.py; here a valid BTF that is not a kernel's."""

import os
import shutil
import struct
import subprocess
import tempfile

from harness import TOOL, Tool, Work, count, make_tempdir
from harness import test
from harness import run_process

SYSFS_BTF = "/sys/kernel/btf/vmlinux"
N = 2000



def btf_copy(tmp):
    path = os.path.join(tmp, "vmlinux.btf")
    shutil.copyfile(SYSFS_BTF, path)
    return path


# A private mount namespace where /sys/kernel/btf is an empty tmpfs, then
# exec of the command: the tool keeps the pid unshare started with.
HIDDEN = ("unshare", "--mount", "--propagation", "private", "sh", "-c",
          'mount -t tmpfs -o ro,size=4k none /sys/kernel/btf && exec "$@"', "hide-btf")


def plan(*args, prefix=()):
    p = run_process([*prefix, TOOL, "--plan", "-T", "syscall,blk", *args],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def plan_rows(out):
    """The --plan table's rows of cells: (layer, op, method)."""
    ops = {"syscall": ("read", "write", "open", "fsync"),
           "blk": ("read", "write", "flush", "discard", "other")}
    rows = []
    for line in out.splitlines():
        f = line.split()
        # Cells only: not the notes after the table ("blk timing: ..."),
        # nor rows of what a layer adds (blk's "dirtier").
        if len(f) >= 3 and f[1] in ops.get(f[0], ()):
            rows.append(tuple(f[:3]))
    return rows


def traced_preads(tmp, *args, prefix=()):
    """N preads of a file under -T syscall -p: the report, and iowork's result."""
    path = os.path.join(tmp, "data")
    work = Work("-c", "-x", "pread", str(N), path)
    tool = Tool("-T", "syscall", "-p", str(work.pid), "--json", *args, prefix=prefix)
    work.go()
    result = work.finish_held()
    work.release()
    reports = tool.stop_json()
    assert len(reports) == 1, reports
    assert int(result["done"]) == N, result
    return reports[0]


@test
def btf_copy_of_this_kernel_gives_the_same_plan_and_counts():
    tmp = make_tempdir(dir="/var/tmp")
    copy = btf_copy(tmp)
    rc0, out0, err0 = plan()
    rc1, out1, err1 = plan(f"--btf={copy}")
    assert rc0 == 0 and rc1 == 0, (err0, err1)
    assert plan_rows(out0) and plan_rows(out1) == plan_rows(out0), (out0, out1)
    rep = traced_preads(tmp, f"--btf={copy}")
    assert count(rep, "syscall", "read") == N, rep["cells"]


@test
def btf_file_serves_a_kernel_whose_btf_is_hidden():
    tmp = make_tempdir(dir="/var/tmp")
    copy = btf_copy(tmp)
    rc, out, err = plan(prefix=HIDDEN)
    lines = err.strip().splitlines()
    assert rc == 1 and len(lines) == 1, (rc, err)
    assert "no BTF" in lines[0] and "--btf=FILE" in lines[0] and "BTFHub" in lines[0], lines
    rc, out, err = plan(f"--btf={copy}", prefix=HIDDEN)
    assert rc == 0, err
    rows = plan_rows(out)
    # tp_btf needs the kernel's own BTF: every tracepoint is a raw one.
    assert rows and all(r[2] == "raw_tp" for r in rows), out
    rep = traced_preads(tmp, f"--btf={copy}", prefix=HIDDEN)
    assert count(rep, "syscall", "read") == N, rep["cells"]


def raw_btf_of_one_int():
    """A valid raw BTF (what a BPF program may carry) with one type, int."""
    strs = b"\0int\0"
    # struct btf_type: name_off, info (kind INT = 1 << 24), size; then the
    # INT's encoding word: 32 bits, signed.
    types = struct.pack("<III", 1, 1 << 24, 4) + struct.pack("<I", (1 << 24) | 32)
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
    return hdr + types + strs


@test
def btf_file_of_no_kernel_is_refused_in_one_line():
    tmp = make_tempdir(dir="/var/tmp")
    path = os.path.join(tmp, "int.btf")
    with open(path, "wb") as f:
        f.write(raw_btf_of_one_int())
    # bpftool reads it as BTF: the tool must refuse it for what it lacks.
    p = run_process(["bpftool", "btf", "dump", "file", path], capture_output=True, text=True)
    assert p.returncode == 0 and "INT 'int'" in p.stdout, (p.stdout, p.stderr)
    rc, out, err = plan(f"--btf={path}")
    lines = err.strip().splitlines()
    assert rc == 1 and not out and len(lines) == 1, (rc, out, err)
    assert "not a kernel's" in lines[0], lines
