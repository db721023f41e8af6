#!/usr/bin/env python3
"""Runs the host integration tests: `run.py [NAME-SUBSTRING...]`.

Prints PASS/FAIL/SKIP per test and a closing "N passed, N failed, N skipped"
line. Under CI (CI=true) a skipped test fails the run: on our machines every
test can run, so a skip means the machine was not set up."""

import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Skip  # noqa: E402
import test_bad_input  # noqa: E402
import test_blk_exact  # noqa: E402
import test_breakdown  # noqa: E402
import test_children  # noqa: E402
import test_events  # noqa: E402
import test_faults  # noqa: E402
import test_fds  # noqa: E402
import test_flush  # noqa: E402
import test_host  # noqa: E402
import test_parts  # noqa: E402
import test_session  # noqa: E402
import test_terminal  # noqa: E402
import test_prometheus  # noqa: E402


def main():
    wanted = sys.argv[1:]
    if os.geteuid() != 0:
        print("SKIP all: the integration tests need root (real BPF programs)")
        print("0 passed, 0 failed, 1 skipped")
        return 1 if os.environ.get("CI") else 0
    passed = failed = skipped = 0
    for fn in (test_host.TESTS + test_breakdown.TESTS + test_session.TESTS
               + test_children.TESTS + test_prometheus.TESTS + test_parts.TESTS
               + test_events.TESTS + test_terminal.TESTS + test_faults.TESTS + test_fds.TESTS
               + test_bad_input.TESTS + test_blk_exact.TESTS + test_flush.TESTS):
        if wanted and not any(w in fn.__name__ for w in wanted):
            continue
        t0 = time.monotonic()
        try:
            fn()
        except Skip as e:
            skipped += 1
            print(f"SKIP {fn.__name__}: {e}", flush=True)
            continue
        except Exception:  # a failed assertion or anything unexpected
            failed += 1
            print(f"FAIL {fn.__name__}:", flush=True)
            traceback.print_exc(file=sys.stdout)
            continue
        passed += 1
        print(f"PASS {fn.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed or (skipped and os.environ.get("CI")):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
