"""A layer that needs fentry or kprobes (no tracepoint marks its events),
on a kernel that allows neither: its --plan --check line and its -T
error, one line each, with the reasons the vfs layer gives."""

import re

from harness import TOOL, Skip, run


def refused_in_one_line(layer, attached, skipped=""):
    """attached: the regex of the plan line's source and functions where the
    layer can be traced (then Skip); skipped: what the line says before
    the reasons where it cannot."""
    p = run(TOOL, "--plan", "--check", timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith(layer + " ")]
    assert len(rows) == 1, f"want one {layer} line:\n{p.stdout}"
    if re.match(rf"{layer}\s+all\s+(fentry|kprobe)\s+{attached}", rows[0]):
        raise Skip(f"this kernel can trace {layer}: the VM suite (make vm-{layer}) covers it")
    m = re.match(rf"{layer}\s+all\s+-\s+skipped: {skipped}(fentry: .+; kprobe: .+)$", rows[0])
    assert m, rows[0]
    # The same reason as vfs's: both need fentry or kprobes.
    vfs = [l for l in p.stdout.splitlines() if re.match(r"vfs\s+read\s", l)]
    assert vfs and vfs[0].endswith(m.group(1)), (vfs, rows[0])

    p = run(TOOL, "-T", layer)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert len(lines) == 1, f"want one line, got: {p.stderr!r}"
    assert lines[0].startswith(f"iostackbreak: cannot trace {layer} on this kernel: fentry: "), lines
    assert "kprobe: " in lines[0] and "CONFIG_KPROBES=y" in lines[0], lines
    assert "libbpf" not in p.stderr and p.stdout == "", p
