#!/bin/bash
# A guest script for the README: --plan, then an all-layers run (-u) over a
# small ext4 workload, on Debian's stock kernel where every layer can be
# traced.  Run: tools/vm/run.sh --file build/iostackbreak --file build/iowork tests/vm/demo.sh
set -u
iostackbreak --plan
iostackbreak -u >/tmp/report.txt 2>/tmp/err.txt &
tool=$!
until grep -q 'Hit Ctrl-C to end' /tmp/err.txt; do sleep 0.2; done
cat /tmp/err.txt
iowork -c pread 2000 /mnt/ext4/demo.dat pwrite 2000 /mnt/ext4/demo.dat \
	open 500 /mnt/ext4/demo.dat >/dev/null
iowork -W fsync 20 /mnt/ext4/demo.dat >/dev/null
iowork -c pread/D 500 /mnt/ext4/demo.dat >/dev/null
kill -INT "$tool"
wait "$tool"
cat /tmp/report.txt
