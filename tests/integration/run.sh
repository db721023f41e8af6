#!/bin/sh
# Host integration tests: real BPF on this kernel (needs root).
exec python3 "$(dirname "$0")/run.py" "$@"
