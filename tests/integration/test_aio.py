"""The aio layer (Linux native AIO) on this machine's kernel.

No tracepoint marks an iocb's submission or completion: the layer needs
fentry or kprobes. Where the kernel allows neither (the truth: the same
reasons the vfs layer gives), --plan --check says so in one line, -T aio
is one clear error line and exit 1, and the default run names aio among
what it skips. Its counts are checked in the VM guests (make vm-aio),
against fio and /proc/diskstats."""

import re

from harness import TOOL, Skip, run, test


@test
def aio_without_fentry_or_kprobes_says_so_in_one_line():
    # All layers (-T aio alone that cannot be traced is an error, below).
    p = run(TOOL, "--plan", "--check", timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith("aio ")]
    assert len(rows) == 1, f"want one aio line:\n{p.stdout}"
    if re.match(r"aio\s+all\s+(fentry|kprobe)\s+io_submit_one,aio_complete", rows[0]):
        raise Skip("this kernel can trace aio: the VM suite (make vm-aio) covers it")
    m = re.match(r"aio\s+all\s+-\s+skipped: (fentry: .+; kprobe: .+)$", rows[0])
    assert m, rows[0]
    # The same reason as vfs's: both need fentry or kprobes.
    vfs = [l for l in p.stdout.splitlines() if re.match(r"vfs\s+read\s", l)]
    assert vfs and vfs[0].endswith(m.group(1)), (vfs, rows[0])

    p = run(TOOL, "-T", "aio")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert len(lines) == 1, f"want one line, got: {p.stderr!r}"
    assert lines[0].startswith("iostackbreak: cannot trace aio on this kernel: fentry: "), lines
    assert "kprobe: " in lines[0] and "CONFIG_KPROBES=y" in lines[0], lines
    assert "libbpf" not in p.stderr and p.stdout == "", p

    # The default run traces what it can and names aio where it skips vfs.
    p = run(TOOL, "--json", "--duration=1", timeout=120)
    assert p.returncode == 0, p.stderr
    skipping = [l for l in p.stderr.splitlines() if l.startswith("iostackbreak: skipping ")]
    assert any(re.search(r"\bvfs\b.*\baio\b", l) for l in skipping), skipping
