#!/usr/bin/env python3
"""Runs the host integration tests: `run.py [NAME-SUBSTRING...]`.

Prints PASS/FAIL/SKIP per test and a closing "N passed, N failed, N skipped"
line. Under CI (CI=true) a skipped test fails the run: on our machines every
test can run, so a skip means the machine was not set up.

After each test, however it ended (passed, failed, raised, ran out of its
IOSB_TEST_TIMEOUT seconds, default 300, or the run was interrupted with
Ctrl-C or SIGTERM), the cleanups it registered in harness run: its processes
are stopped (SIGINT, then SIGKILL), its loop devices, cgroups, mounts and
directories removed. IOSTACKBREAK_TEST_FAIL=NAME makes test NAME fail on
purpose once its tool is attached, IOSTACKBREAK_TEST_SKIP=NAME skip before
it starts (make selftest: under CI that skip fails the run)."""

import glob
import importlib
import os
import signal
import sys
import time
import traceback
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Skip  # noqa: E402

# Every test module here, by name: each registers its tests (harness.test).
for _module in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "test_*.py"))):
    importlib.import_module(os.path.basename(_module)[:-3])
TESTS = harness.TESTS


class TestTimeout(Exception):
    pass


class Interrupted(BaseException):
    """SIGTERM, handled as Ctrl-C is: the cleanups run, then the run ends."""


def on_alarm(signum, frame):
    raise TestTimeout(f"the test ran out of its {timeout_s()} s (IOSB_TEST_TIMEOUT)")


def on_term(signum, frame):
    raise Interrupted("SIGTERM")


def timeout_s():
    return int(os.environ.get("IOSB_TEST_TIMEOUT", "300"))


def clean_up(name):
    """The test's cleanups, with Ctrl-C and SIGTERM held off until they
    are done (a second Ctrl-C must not leave half of them): blocked, not
    ignored, so one that comes meanwhile ends the run right after them
    (ignored, a SIGTERM then was lost and the run went on)."""
    signal.alarm(0)
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        return harness.run_cleanups()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def run_one(fn):
    """Runs one test and its cleanups; returns PASS, FAIL or SKIP."""
    name = fn.__name__
    harness.current_test = name
    os.environ[harness.TEST_TOKEN] = f"{name}-{uuid.uuid4().hex}"
    t0 = time.monotonic()
    outcome, detail = "PASS", ""
    signal.alarm(timeout_s())
    try:
        if os.environ.get("IOSTACKBREAK_TEST_SKIP") == name:
            raise Skip("skipped on purpose (IOSTACKBREAK_TEST_SKIP)")
        fn()
        if os.environ.get("IOSTACKBREAK_TEST_FAIL") == name:
            raise AssertionError(f"IOSTACKBREAK_TEST_FAIL: {name} started no tool to fail after")
    except Skip as e:
        outcome, detail = "SKIP", f": {e}"
    except Exception:  # a failed assertion, a timeout or anything unexpected
        outcome, detail = "FAIL", ":\n" + traceback.format_exc().rstrip()
    finally:
        errors = clean_up(name)
        harness.current_test = None
    if errors:
        outcome = "FAIL"
        detail += "\n    cleanup failed: " + "\n    cleanup failed: ".join(errors)
    if outcome == "PASS":
        detail = f" ({time.monotonic() - t0:.1f}s)"
    print(f"{outcome} {name}{detail}", flush=True)
    return outcome


def main():
    wanted = sys.argv[1:]
    if os.geteuid() != 0:
        print("SKIP all: the integration tests need root (real BPF programs)")
        print("0 passed, 0 failed, 1 skipped")
        return 1 if os.environ.get("CI") else 0
    for var in ("IOSTACKBREAK_TEST_FAIL", "IOSTACKBREAK_TEST_SKIP"):
        name = os.environ.get(var)
        if name and name not in (fn.__name__ for fn in TESTS):
            print(f"run.py: {var}={name} names no test; the names are the PASS/FAIL lines' "
                  "(e.g. cgroup_selects_only_the_process_inside_it)", file=sys.stderr)
            return 2
    harness.count_hidden_completions_apart()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    try:
        for fn in TESTS:
            if wanted and not any(w in fn.__name__ for w in wanted):
                continue
            counts[run_one(fn)] += 1
    except (KeyboardInterrupt, Interrupted) as e:
        # run_one's finally has already stopped what the test started.
        print(f"INTERRUPTED ({type(e).__name__} {e}): the running test's cleanups done",
              flush=True)
        return 130
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    if counts["FAIL"] or (counts["SKIP"] and os.environ.get("CI")):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
