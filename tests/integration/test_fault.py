"""The fault layer (major page faults) on this machine's kernel.

No tracepoint marks a fault's end: the layer needs fentry or kprobes on
handle_mm_fault. Where the kernel allows neither (the truth: the same
reasons the vfs layer gives), --plan --check says so in one line and
-T fault is one clear error line and exit 1. Its counts are checked in the
VM guests (make vm-fault), against /proc/PID/stat majflt."""

from fnlayer import refused_in_one_line
from harness import test


@test
def fault_without_fentry_or_kprobes_says_so_in_one_line():
    refused_in_one_line("fault", "handle_mm_fault", "needs fentry or kprobes: ")
