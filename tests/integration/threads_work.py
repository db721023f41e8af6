#!/usr/bin/env python3
"""Threads that come and go, for the fast thread slots (test_threads.py):
`threads_work.py FILE CHURN`.

Each step prints one line and waits for SIGUSR1, so that the test can look
at the tracer's fast_slots map between steps:
  READY <pid>            set up; the measured phase begins on SIGUSR1
  HELD <tid A> <tid B>   A made READS preads, then B did; both still live
  REUSED <tid C>         A and B gone; C, started after, made READS preads
                         and still lives
  DONE <preads>          C gone; CHURN threads, one after another, made
                         READS preads each and are gone; <preads>: every
                         pread of the measured phase, the test's truth
Then it waits for SIGUSR1 once more and exits, so that the tracer can stop
first. Nothing else it does in the measured phase is a storage call.
"""

import os
import signal
import sys
import threading
import time

READS = 50


class Reader(threading.Thread):
    """Makes READS preads, says so, then lives until hold is set."""

    def __init__(self, fd, hold=None):
        super().__init__()
        self.fd, self.hold, self.read = fd, hold, threading.Event()
        self.tid = None

    def run(self):
        self.tid = threading.get_native_id()
        for _ in range(READS):
            os.pread(self.fd, 4096, 0)
        self.read.set()
        if self.hold:
            self.hold.wait()


def ended(r):
    """Joins r and waits for its kernel thread to be gone: join() returns
    when Python's thread state is released, before the thread's do_exit(),
    where the tracer frees its fast slot (sched_process_exit). Once seen,
    the next thread started here took the slot before A's exit freed it."""
    r.join()
    while os.path.exists(f"/proc/self/task/{r.tid}"):
        time.sleep(0.001)


def started(fd, hold=None):
    r = Reader(fd, hold)
    r.start()
    r.read.wait()
    return r


def step(line, sigs):
    print(line, flush=True)
    signal.sigwait(sigs)


def main():
    path, churn = sys.argv[1], int(sys.argv[2])
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.pwrite(fd, b"z" * 4096, 0)
    sigs = {signal.SIGUSR1}
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    step(f"READY {os.getpid()}", sigs)

    hold = threading.Event()
    a = started(fd, hold)
    b = started(fd, hold)
    step(f"HELD {a.tid} {b.tid}", sigs)
    hold.set()
    ended(a)
    ended(b)

    hold = threading.Event()
    c = started(fd, hold)
    step(f"REUSED {c.tid}", sigs)
    hold.set()
    ended(c)

    for _ in range(churn):
        ended(started(fd))
    step(f"DONE {(3 + churn) * READS}", sigs)


if __name__ == "__main__":
    main()
