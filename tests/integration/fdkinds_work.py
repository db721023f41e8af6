#!/usr/bin/env python3
"""A workload that makes known numbers of calls on each kind of descriptor
(test_fds.py): `fdkinds_work.py DIR`.

Setup (descriptors, data waiting in the pipe and the socket, the file) is
done before it prints "READY <pid>" and waits for SIGUSR1; the measured
phase then makes exactly the calls of COUNTS and nothing else that the
syscall layer traces, writes "DONE" on stdout (one write(2) to a pipe) and
waits for SIGUSR1 again before it exits, so that the tracer can stop first.
"""

import os
import signal
import socket
import sys

# What the measured phase does, by (op, kind of file): the test's truth.
COUNTS = {
    ("read", "file"): 700,  # pread64 of a regular file
    ("read", "pipe"): 300,
    ("read", "socket"): 200,
    ("read", "eventfd"): 50,  # an anonymous inode: "other"
    ("read", "badfd"): 20,  # EBADF: "other"
    ("write", "file"): 150,  # pwrite64
    ("write", "null"): 80,  # /dev/null, a character device: "other"
    ("open", "file"): 60,
    ("open", "dir"): 30,  # O_DIRECTORY: a directory counts as storage
    ("open", "null"): 40,
    ("open", "fifo"): 25,  # a named pipe, O_NONBLOCK: "pipe"
    ("fsync", "file"): 10,
    ("fsync", "dir"): 5,
    ("fsync", "pipe"): 15,  # fails with EINVAL, left out as a pipe
}
RESULT_WRITES = 1  # "DONE", to stdout: a pipe under the test

BAD_FD = 1000


def main():
    d = sys.argv[1]
    c = COUNTS
    path, fifo = os.path.join(d, "data"), os.path.join(d, "fifo")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.pwrite(fd, b"z" * 4096, 0)
    os.mkfifo(fifo)
    pr, pw = os.pipe()
    os.write(pw, b"x" * c["read", "pipe"])
    sa, sb = socket.socketpair()
    sb.sendall(b"y" * c["read", "socket"])
    efd = os.eventfd(c["read", "eventfd"], os.EFD_SEMAPHORE)
    null = os.open("/dev/null", os.O_WRONLY)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    assert not _is_open(BAD_FD)
    sigs = {signal.SIGUSR1}
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    print("READY", os.getpid(), flush=True)
    signal.sigwait(sigs)

    for _ in range(c["read", "file"]):
        os.pread(fd, 4096, 0)
    for _ in range(c["read", "pipe"]):
        os.read(pr, 1)
    for _ in range(c["read", "socket"]):
        os.read(sa.fileno(), 1)
    for _ in range(c["read", "eventfd"]):
        os.read(efd, 8)
    for _ in range(c["read", "badfd"]):
        try:
            os.read(BAD_FD, 1)
        except OSError:
            pass
    for _ in range(c["write", "file"]):
        os.pwrite(fd, b"w", 0)
    for _ in range(c["write", "null"]):
        os.write(null, b"n")
    for what, p, flags in (("file", path, os.O_RDONLY),
                           ("dir", d, os.O_RDONLY | os.O_DIRECTORY),
                           ("null", "/dev/null", os.O_RDONLY),
                           ("fifo", fifo, os.O_RDONLY | os.O_NONBLOCK)):
        for _ in range(c["open", what]):
            os.close(os.open(p, flags))
    for _ in range(c["fsync", "file"]):
        os.fsync(fd)
    for _ in range(c["fsync", "dir"]):
        os.fsync(dfd)
    for _ in range(c["fsync", "pipe"]):
        try:
            os.fsync(pw)
        except OSError:
            pass
    os.write(1, b"DONE\n")
    signal.sigwait(sigs)


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
