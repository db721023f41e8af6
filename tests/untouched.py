#!/usr/bin/env python3
"""untouched.py [--pid PID] [--every SECONDS] -- COMMAND [ARGS...]

Runs COMMAND while it samples, every half second by default, the state of a
process the suite did not start (PID 1 by default): the CPUs each of its
threads may run on, its cgroups, its nice value and scheduling policy, and
its limits. It only reads /proc. If any sample differs from the first, it
names what changed and when, and exits 1 (whatever COMMAND's status);
otherwise it exits with COMMAND's status. make check runs under it: no
test, bench or script of the project changes a process it did not start."""

import os
import subprocess
import sys
import threading
import time


def thread_cpus(pid):
    """The distinct Cpus_allowed_list values of the process's threads."""
    found = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        found.add(line.split(":", 1)[1].strip())
        except OSError:
            continue  # a thread that ended meanwhile
    return tuple(sorted(found))


def state(pid):
    """What a test must not change of pid, as comparable text."""
    with open(f"/proc/{pid}/cgroup") as f:
        cgroups = f.read().strip()
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the comm: field 19 (nice) and 41 (policy) of proc(5), less 3.
    nice, policy = fields[16], fields[38]
    with open(f"/proc/{pid}/limits") as f:
        limits = f.read()
    return {"cpus of its threads": thread_cpus(pid), "cgroups": cgroups, "nice": nice,
            "scheduling policy": policy, "limits": limits}


def main(argv):
    pid, every = 1, 0.5
    while argv and argv[0] != "--":
        if argv[0] == "--pid" and len(argv) > 1:
            pid, argv = int(argv[1]), argv[2:]
        elif argv[0] == "--every" and len(argv) > 1:
            every, argv = float(argv[1]), argv[2:]
        else:
            print(__doc__.splitlines()[0], file=sys.stderr)
            return 2
    if len(argv) < 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    first = state(pid)
    changes, samples = [], [0]
    done = threading.Event()
    t0 = time.monotonic()

    def sample():
        while not done.wait(every):
            try:
                now = state(pid)
            except OSError as e:
                changes.append(f"{time.monotonic() - t0:.1f} s: cannot read /proc/{pid}: {e}")
                return
            samples[0] += 1
            for k, v in now.items():
                if v != first[k]:
                    changes.append(f"{time.monotonic() - t0:.1f} s: {k} of pid {pid}: "
                                   f"{first[k]!r} -> {v!r}")
                    first[k] = v  # report each change once
    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        rc = subprocess.call(argv[1:])
    finally:
        done.set()
        watcher.join()
    if changes:
        for c in changes[:20]:
            print(f"untouched: CHANGED {c}", flush=True)
        print(f"untouched: pid {pid} was changed while {' '.join(argv[1:])} ran", flush=True)
        return 1
    print(f"untouched: pid {pid} unchanged over {samples[0]} samples, one every {every} s",
          flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
