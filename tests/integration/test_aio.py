"""The aio layer (Linux native AIO) on this machine's kernel.

No tracepoint marks an iocb's submission or completion: the layer needs
fentry or kprobes. Where the kernel allows neither (the truth: the same
reasons the vfs layer gives), --plan --check says so in one line, -T aio
is one clear error line and exit 1, and the default run names aio among
what it skips. Its counts are checked in the VM guests (make vm-aio),
against fio and /proc/diskstats."""

import re

from fnlayer import refused_in_one_line
from harness import TOOL, run, test


@test
def aio_without_fentry_or_kprobes_says_so_in_one_line():
    # All layers (-T aio alone that cannot be traced is an error).
    refused_in_one_line("aio", "io_submit_one,aio_complete")

    # The default run traces what it can and names aio where it skips vfs.
    p = run(TOOL, "--json", "--duration=1", timeout=120)
    assert p.returncode == 0, p.stderr
    skipping = [l for l in p.stderr.splitlines() if l.startswith("iostackbreak: skipping ")]
    assert any(re.search(r"\bvfs\b.*\baio\b", l) for l in skipping), skipping
