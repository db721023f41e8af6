#!/usr/bin/env python3
"""The test of the tests (make selftest, in make check; root, ~15 s).

1. A real integration test made to fail on purpose (IOSTACKBREAK_TEST_FAIL)
   once its cgroup, loop device, workloads and tool are live: the test
   fails, the runner goes on to the next test, and tests/leftovers.py finds
   no process, BPF program or link, loop device, mount or cgroup left.
2. The leftover check is not blind: a suite that leaves a process, a loop
   device, an iosb-* cgroup, a mount and a BPF program behind fails it,
   each one named.
3. tests/untouched.py, which watches PID 1 over make check, is not blind:
   pointed at a process of the selftest's own, it names a change of its
   CPUs and of its nice value made while a command ran.
4. A skip turns the suite red under CI (CI=true, as .ci/run sets it) and
   only there: an integration test skipped on purpose
   (IOSTACKBREAK_TEST_SKIP), and the unit test whose criterion skip needs
   an IPv6 loopback, run in a network namespace of its own where lo is
   down (so ::1 is no address)."""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LEFTOVERS = os.path.join(HERE, "leftovers.py")
FAILING = "cgroup_selects_only_the_process_inside_it"
NEXT = "a_full_breakdown_map_counts_what_it_drops"  # runs after it in run.py's order


def suite(name, *cmd, env=None):
    p = subprocess.run([LEFTOVERS, "--host", name, "--", *cmd], capture_output=True, text=True,
                       timeout=600, env=env)
    out = p.stdout + p.stderr
    print("\n".join("    " + line for line in out.splitlines()), flush=True)
    return p.returncode, out


def failed_test_leaves_nothing():
    env = dict(os.environ, IOSTACKBREAK_TEST_FAIL=FAILING)
    rc, out = suite("failing-test", os.path.join(HERE, "integration", "run.py"), FAILING, NEXT,
                    env=env)
    fail = [line for line in out.splitlines() if "AssertionError: IOSTACKBREAK_TEST_FAIL:" in line]
    assert fail, "the test did not fail on purpose"
    # It failed with all of its kinds of things live (and BPF loaded).
    for live in ("cgroup ", "loop device /dev/loop", "iowork", "iostackbreak"):
        assert live in fail[0], f"not live when the test failed: {live!r}: {fail[0]}"
    assert " 0 BPF programs" not in fail[0], fail[0]
    assert f"FAIL {FAILING}:" in out, "no FAIL line"
    # The runner went on: the next test ran (its own result is its own).
    assert f"PASS {NEXT}" in out or f"FAIL {NEXT}:" in out, "the runner did not go on"
    tally = re.search(r"^(\d+) passed, (\d+) failed, 0 skipped$", out, re.M)
    assert tally and int(tally[1]) + int(tally[2]) == 2, "not two tests run"
    assert "== failing-test:" in out and "nothing left behind" in out, "leftovers found"
    assert rc == 1, f"exit status {rc}, not the failed test's 1"


def a_skip_fails_under_ci():
    plain = {k: v for k, v in os.environ.items() if k != "CI"}
    runs = {}
    for ci in (False, True):
        env = dict(plain, IOSTACKBREAK_TEST_SKIP=FAILING, **({"CI": "true"} if ci else {}))
        rc, out = suite(f"skipping-test{'-ci' if ci else ''}",
                        os.path.join(HERE, "integration", "run.py"), FAILING, env=env)
        assert f"SKIP {FAILING}: skipped on purpose" in out, out
        assert re.search(r"^0 passed, 0 failed, 1 skipped$", out, re.M), "not one test skipped"
        runs[ci] = rc
    assert runs == {False: 0, True: 1}, f"exit status without and with CI: {runs}"
    unit = os.path.join(HERE, "..", "build", "unit-tests")
    for ci in (False, True):
        env = dict(plain, **({"CI": "true"} if ci else {}))
        p = subprocess.run(["unshare", "-n", unit, "--filter", "exporter/ipv6_loopback"],
                           capture_output=True, text=True, timeout=60, env=env)
        out = p.stdout + p.stderr
        print("\n".join("    " + line for line in out.splitlines()[-2:]), flush=True)
        if ci:
            assert p.returncode and "[FAIL] exporter::ipv6_loopback" in out, (p.returncode, out)
        else:
            assert p.returncode == 0 and "Tested: 0 " in out, (p.returncode, out)


def leftovers_are_found():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        img = os.path.join(tmp, "leak.img")
        with open(img, "wb") as f:
            f.truncate(1 << 20)
        cgroup = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") \
            else "/sys/fs/cgroup"
        group = os.path.join(cgroup, f"iosb-selftest-{os.getpid()}")
        # A mount, and a BPF program no process holds: pinned in a bpffs
        # of its own, as a tracer that died without detaching would leave
        # one.
        mnt = os.path.join(tmp, "bpffs")
        os.mkdir(mnt)
        prog = os.path.join(tmp, "leak.bpf.o")
        pin = os.path.join(mnt, "leak")
        with open(os.path.join(tmp, "leak.bpf.c"), "w") as f:
            f.write('__attribute__((section("raw_tracepoint/sys_enter"), used))\n'
                    'int leak(void *ctx) { return 0; }\n'
                    'char LICENSE[] __attribute__((section("license"), used)) = "GPL";\n')
        subprocess.run(["clang", "-O2", "-target", "bpf", "-c", os.path.join(tmp, "leak.bpf.c"),
                        "-o", prog], check=True)
        leak = (f"setsid sleep 300 </dev/null >/dev/null 2>&1 & "
                f"mkdir {group} && losetup -f --show {img} && "
                f"mount -t bpf iosb-selftest {mnt} && bpftool prog load {prog} {pin}")
        rc, out = suite("leaky-suite", "sh", "-c", leak)
        dev = [w for w in out.split() if w.startswith("/dev/loop")]
        try:
            assert rc == 1, f"a leaky suite exited {rc}"
            assert "still running: setsid sleep 300" in out or \
                "still running: sleep 300" in out, "the process not found"
            assert dev and f"loop device {dev[0]} " in out, "the loop device not found"
            assert f"cgroup {group} still there" in out, "the cgroup not found"
            assert f"mount {mnt} still mounted" in out, "the mount not found"
            assert re.search(r"BPF prog \d+ loaded during the run and still loaded", out), \
                "the pinned BPF program not found"
        finally:
            for d in dev[:1]:
                subprocess.run(["losetup", "-d", d])
            if os.path.exists(pin):
                os.unlink(pin)
            subprocess.run(["umount", mnt], capture_output=True)
            if os.path.isdir(group):
                os.rmdir(group)


def untouched_names_a_change():
    """A process of our own stands for PID 1: a command that moves it to
    one CPU and renices it is caught, each change named; a command that
    leaves it alone passes with its own exit status."""
    untouched = os.path.join(HERE, "untouched.py")
    victim = subprocess.Popen(["sleep", "60"])
    try:
        pid = str(victim.pid)
        p = subprocess.run([untouched, "--pid", pid, "--every", "0.1", "--", "sh", "-c",
                            f"sleep 0.3; taskset -p -c 0 {pid} >/dev/null; renice -n 5 -p {pid} "
                            ">/dev/null; sleep 0.3; exit 0"],
                           capture_output=True, text=True, timeout=60)
        print("\n".join("    " + line for line in p.stdout.splitlines()), flush=True)
        assert p.returncode == 1, f"exit status {p.returncode} after a change"
        assert "cpus of its threads" in p.stdout and "nice" in p.stdout, p.stdout
        p = subprocess.run([untouched, "--pid", pid, "--every", "0.1", "--", "sh", "-c",
                            "sleep 0.3; exit 3"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 3 and "unchanged" in p.stdout, (p.returncode, p.stdout)
    finally:
        victim.kill()
        victim.wait()


def main():
    if os.geteuid():
        print("selftest: needs root (loop devices, cgroups, BPF): run it as root", file=sys.stderr)
        return 1
    failed = 0
    tests = (failed_test_leaves_nothing, leftovers_are_found, untouched_names_a_change,
             a_skip_fails_under_ci)
    for fn in tests:
        try:
            fn()
            print(f"PASS {fn.__name__}", flush=True)
        except AssertionError as e:
            failed += 1
            print(f"FAIL {fn.__name__}: {e}", flush=True)
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
