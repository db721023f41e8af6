#!/usr/bin/env python3
"""Fails a test suite that leaves anything behind.

    tests/leftovers.py [--host] NAME -- COMMAND [ARGS...]

Runs COMMAND (a suite) with IOSB_LEFTOVERS_TOKEN=<random> in its environment,
then exits non-zero, naming each one, if any of these remains:
  - a process of ours: anything still running with the token in its
    environment (every process the suite started inherits it: the tool,
    iowork, fio, prometheus, qemu-system-*, a traced command...); those are
    stopped (SIGINT, SIGKILL after 5 s) so that they do not outlive the run;
  - a BPF program or link that was not loaded before COMMAND and that no
    process other than ours holds (a program held by another user's tracer
    on a shared machine is theirs, not a leftover: its holder is known from
    /proc/PID/fdinfo);
  - with --host (suites that make devices: they hold the machine's host
    lock, so nothing else makes these meanwhile): a loop device, mount,
    kernel module or ftrace instance that was not there before (a test
    that loads a module, such as btrfs, unloads it), a cgroup named iosb-*
    (the tests' names). (What a suite must not change of processes it did
    not start, tests/untouched.py watches over the whole of make check.)
Otherwise it exits with COMMAND's status. It prints the suite's wall time
(and appends "NAME SECONDS" to $IOSB_STAGE_TIMES when set, for make check).
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

TOKEN_VAR = "IOSB_LEFTOVERS_TOKEN"
BPF_GRACE = 10.0


def bpf_ids(kind):
    try:
        p = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True, text=True,
                           timeout=30)
    except FileNotFoundError:
        return set()
    if p.returncode:
        return set()  # not root: nothing could have been loaded either
    return {x["id"] for x in json.loads(p.stdout or "[]")}


def loop_devices():
    """{device: backing file} of attached loop devices."""
    devs = {}
    for name in os.listdir("/sys/block"):
        try:
            with open(f"/sys/block/{name}/loop/backing_file") as f:
                devs[f"/dev/{name}"] = f.read().strip()
        except OSError:
            pass
    return devs


def mounts():
    """{mount id: mount point} from /proc/self/mountinfo."""
    with open("/proc/self/mountinfo") as f:
        return {line.split()[0]: line.split()[4] for line in f}


def modules():
    """Loaded kernel modules (none where the kernel has no module support:
    no /proc/modules)."""
    try:
        with open("/proc/modules") as f:
            return sorted(line.split()[0] for line in f)
    except FileNotFoundError:
        return []


def trace_instances():
    try:
        return sorted(os.listdir("/sys/kernel/tracing/instances"))
    except OSError:
        return []


def our_cgroups():
    found = []
    with open("/proc/mounts") as f:
        roots = [line.split()[1] for line in f if line.split()[2] in ("cgroup", "cgroup2")]
    for root in roots:
        for d, subdirs, _ in os.walk(root):
            found += [os.path.join(d, s) for s in subdirs if s.startswith("iosb")]
    return found


def processes():
    """[(pid, comm, environment bytes)] of every live process but us."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            if stat.rsplit(")", 1)[1].split()[0] in "ZX":
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        out.append((int(entry), stat[stat.index("(") + 1:stat.rindex(")")], env))
    return out


def bpf_holders():
    """{("prog"|"link", id): {pid,...}} from every process's fdinfo."""
    held = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{entry}/fd/{fd}")
                if target not in ("anon_inode:bpf-prog", "anon_inode:bpf_link",
                                  "anon_inode:bpf-link"):
                    continue
                with open(f"/proc/{entry}/fdinfo/{fd}") as f:
                    info = dict(line.split(":", 1) for line in f if ":" in line)
            except OSError:
                continue
            kind = "link" if "link" in target else "prog"
            key = "link_id" if kind == "link" else "prog_id"
            if key in info:
                held.setdefault((kind, int(info[key])), set()).add(int(entry))
    return held


def tracefs_mounted():
    """The tool mounts tracefs where it is not (libbpf needs it for
    tracepoint ids, as perf and bpftool do; man page, REQUIREMENTS) and
    leaves it mounted for the next run. That is the tool's behaviour, not a
    suite's leftover: on a freshly booted machine the baseline mounts it
    first, so that the first suite to start the tool is not blamed."""
    if not os.path.isdir("/sys/kernel/tracing/events") and os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"],
                       capture_output=True)


def snapshot():
    tracefs_mounted()
    return {"progs": sorted(bpf_ids("prog")), "links": sorted(bpf_ids("link")),
            "loops": loop_devices(), "mounts": mounts(), "cgroups": our_cgroups(),
            "traces": trace_instances(), "modules": modules(),
            "time": time.time()}


def stop(pid):
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                        return
            except OSError:
                return
            time.sleep(0.05)


def bpf_leftovers(before, ours_pids):
    """New programs and links held by no one else. The kernel frees them a
    little after their last descriptor closes (links from a workqueue, then
    an RCU grace period): they get BPF_GRACE seconds to go."""
    deadline = time.monotonic() + BPF_GRACE
    while True:
        live = {pid for pid, _, _ in processes()}
        holders = bpf_holders()
        found = []
        for kind, old in (("prog", before["progs"]), ("link", before["links"])):
            for i in sorted(bpf_ids(kind) - set(old)):
                if not (holders.get((kind, i), set()) - ours_pids) & live:
                    found.append(f"BPF {kind} {i} loaded during the run and still loaded "
                                 f"(bpftool {kind} show id {i})")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def check(before, token, host):
    """The leftovers as lines, after stopping any process of ours."""
    found = []
    procs = processes()
    mark = f"{TOKEN_VAR}={token}".encode()
    ours = [(pid, comm) for pid, comm, env in procs if mark in env.split(b"\0")]
    for pid, comm in ours:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            cmd = comm
        found.append(f"process {pid} ({comm}) still running: {cmd[:200]}; stopped now")
        stop(pid)
    found += bpf_leftovers(before, {pid for pid, _ in ours})
    if host:
        for dev, backing in sorted(loop_devices().items()):
            if dev not in before["loops"]:
                found.append(f"loop device {dev} (backing file {backing}) still attached")
        old = before["mounts"]
        for mid, where in sorted(mounts().items()):
            if mid not in old:
                found.append(f"mount {where} still mounted")
        for cg in our_cgroups():
            if cg not in before["cgroups"]:
                found.append(f"cgroup {cg} still there")
        for mod in modules():
            if mod not in before.get("modules", []):
                found.append(f"kernel module {mod} loaded during the run and still loaded")
        for inst in trace_instances():
            if inst not in before["traces"]:
                found.append(f"ftrace instance {inst} (/sys/kernel/tracing/instances) still there")
    return found


def report(name, found, secs):
    for line in found:
        print(f"leftovers: {name}: {line}", file=sys.stderr)
    verdict = f"{len(found)} leftovers" if found else "nothing left behind"
    print(f"== {name}: {secs:.0f} s, {verdict}", flush=True)
    if os.environ.get("IOSB_STAGE_TIMES") and secs is not None:
        with open(os.environ["IOSB_STAGE_TIMES"], "a") as f:
            f.write(f"{name} {secs:.1f}\n")


def run(host, name, cmd):
    before = snapshot()
    token = uuid.uuid4().hex
    env = dict(os.environ, **{TOKEN_VAR: token})
    t0 = time.monotonic()
    child = subprocess.Popen(cmd, env=env)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    # Ctrl-C reaches the suite too (same process group): wait for it to
    # clean up, then look.
    while True:
        try:
            rc = child.wait()
            break
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    found = check(before, token, host)
    report(name, found, time.monotonic() - t0)
    return rc if rc else (1 if found else 0)


def usage():
    print("usage: tests/leftovers.py [--host] NAME -- COMMAND [ARGS...]", file=sys.stderr)
    return 2


def main(argv):
    host = bool(argv) and argv[0] == "--host"
    argv = argv[1:] if host else argv
    if len(argv) < 3 or argv[1] != "--":
        return usage()
    return run(host, argv[0], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
