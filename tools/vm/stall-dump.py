#!/usr/bin/env python3
"""stall-dump.py - where every vCPU of a stuck guest is, from qemu's monitor.

    tools/vm/stall-dump.py --socket MONITOR.sock --kallsyms FILE [--label TEXT]

tools/vm/run.sh runs this (IOSB_VM_DIAG=1) when the guest console reports a
soft lockup or an RCU stall, and when the guest times out. It asks the
monitor for `info registers -a`, prints each vCPU's RIP, CPL and halt state
resolved against the guest's own /proc/kallsyms (read at boot, so KASLR and
modules are accounted for; Debian's /boot/System.map is a stub), then reads
each vCPU's kernel stack from RSP up to the end of its 16 KiB-aligned block
and lists the words on it that point into kernel text: a raw backtrace, like
the kernel's "?" entries (stale return addresses included), not an unwound
one. The raw register dump follows.
"""
import argparse
import bisect
import re
import socket
import sys
import time

PROMPT = b"(qemu) "
STACK_BLOCK = 16384  # THREAD_SIZE and IRQ_STACK_SIZE on x86_64
MAX_WORDS = STACK_BLOCK // 8
# Kernel addresses: the upper half, 4- or 5-level paging (-cpu max has la57).
KERNEL_HALF = 0xFF00000000000000
END_MARKERS = {"_etext", "__irqentry_text_end", "__entry_text_end", "_einittext", "__softirqentry_text_end"}


class Monitor:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.connect(path)
        self._until_prompt()  # banner

    def _until_prompt(self):
        buf = b""
        while not buf.endswith(PROMPT):
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("monitor closed the connection")
            buf += chunk
        return buf[: -len(PROMPT)]

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        out = self._until_prompt().decode(errors="replace")
        # The monitor echoes the command line (with terminal escapes).
        out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out).replace("\r", "")
        lines = out.split("\n")
        if lines and line in lines[0]:
            lines = lines[1:]
        return "\n".join(lines)


class Symbols:
    """Text symbols of the guest kernel and its modules."""

    def __init__(self, path):
        rows = []
        try:
            with open(path, errors="replace") as f:
                for ln in f:
                    p = ln.split()
                    if len(p) < 3 or p[1] not in "tTwW":
                        continue
                    addr = int(p[0], 16)
                    if addr == 0:
                        continue
                    name = p[2] + (" " + p[3] if len(p) > 3 else "")
                    rows.append((addr, name))
        except OSError:
            pass
        rows.sort()
        self.addrs = [a for a, _ in rows]
        self.names = [n for _, n in rows]

    def __len__(self):
        return len(self.addrs)

    def resolve(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or addr < KERNEL_HALF:
            return None
        off = addr - self.addrs[i]
        # Past the end of the kernel's text, or far past a module's last
        # function (its data follows): not a code address.
        if self.names[i] in END_MARKERS or off > 0x10000:
            return None
        return "%s+0x%x" % (self.names[i], off)


def parse_cpus(regs):
    cpus = []
    for block in re.split(r"(?m)^CPU#", regs)[1:]:
        num = int(block.split("\n", 1)[0].strip() or -1)
        get = lambda k: re.search(r"\b%s=([0-9a-fA-F]+)" % k, block)
        rip, rsp = get("RIP"), get("RSP")
        cpl, hlt = get("CPL"), get("HLT")
        cpus.append(
            {
                "n": num,
                "rip": int(rip.group(1), 16) if rip else None,
                "rsp": int(rsp.group(1), 16) if rsp else None,
                "cpl": cpl.group(1) if cpl else "?",
                "hlt": hlt.group(1) if hlt else "?",
            }
        )
    return cpus


def stack_words(mon, cpu):
    rsp = cpu["rsp"]
    if rsp is None or rsp < KERNEL_HALF:
        return []
    n = (STACK_BLOCK - (rsp & (STACK_BLOCK - 1))) // 8
    n = max(1, min(n, MAX_WORDS))
    mon.cmd("cpu %d" % cpu["n"])
    out = mon.cmd("x/%dgx 0x%x" % (n, rsp))
    words = []
    for ln in out.split("\n"):
        m = re.match(r"\s*([0-9a-fA-F]+):\s+(.*)", ln)
        if not m:
            continue
        base = int(m.group(1), 16)
        for k, w in enumerate(re.findall(r"0x([0-9a-fA-F]+)", m.group(2))):
            words.append((base + 8 * k, int(w, 16)))
    return words


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--kallsyms", required=True)
    ap.add_argument("--label", default="")
    a = ap.parse_args()

    syms = Symbols(a.kallsyms)
    try:
        mon = Monitor(a.socket)
        regs = mon.cmd("info registers -a")
    except (OSError, EOFError) as e:
        print("stall-dump: monitor %s: %s" % (a.socket, e), file=sys.stderr)
        return 1
    stamp = time.strftime("%H:%M:%S", time.gmtime())
    print("=== stall dump %s UTC%s (%d text symbols)" % (stamp, " - " + a.label if a.label else "", len(syms)))
    cpus = parse_cpus(regs)
    for c in cpus:
        where = "?"
        if c["rip"] is not None:
            where = "user" if c["cpl"] == "3" else (syms.resolve(c["rip"]) or "not in kernel text (BPF, trampoline?)")
        print("CPU%d RIP=%016x %s CPL=%s HLT=%s RSP=%016x" % (c["n"], c["rip"] or 0, where, c["cpl"], c["hlt"], c["rsp"] or 0))
    for c in cpus:
        if c["cpl"] == "3":
            continue
        try:
            words = stack_words(mon, c)
        except (OSError, EOFError) as e:
            print("CPU%d stack: %s" % (c["n"], e))
            continue
        print("--- CPU%d stack words in kernel text (RSP upwards, innermost first):" % c["n"])
        for addr, w in words:
            s = syms.resolve(w)
            if s:
                print("  %016x: %s" % (addr, s))
    print("--- info registers -a")
    print(regs.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
