# SPDX-License-Identifier: GPL-2.0
# iostackbreak: BPF object -> skeleton header -> user-space binary.

# SANITIZE=1: the user-space code built with AddressSanitizer and
# UndefinedBehaviorSanitizer, apart in build-san/ (make check runs the unit
# and host integration tests on it too: `make sanitized`).
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
OUTPUT ?= build-san
else
OUTPUT ?= build
endif
PREFIX ?= /usr/local
DESTDIR ?=
# systemd reads units from /usr/local/lib/systemd/system as well; the Debian
# package puts its unit in /lib/systemd/system.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR ?= $(PREFIX)/share/doc/iostackbreak
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
CC ?= cc
ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
			-e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

VMLINUX := vmlinux/$(ARCH)/vmlinux.h
WARNINGS := -Wall -Wextra -Werror
# BPF programs take a context they often do not read: that is not a bug.
BPF_WARNINGS := $(WARNINGS) -Wno-unused-parameter
CFLAGS ?= -O2 -g
CFLAGS += $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -MMD -MP
ifeq ($(SANITIZE),1)
# Any report is fatal (-fno-sanitize-recover), so a test that hits one fails.
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
INCLUDES = -I$(OUTPUT) -Ibpf $(addprefix -I,$(SRC_DIRS))
LIBS := $(shell pkg-config --libs libbpf json-c libmicrohttpd libdw 2>/dev/null || \
	echo -lbpf -lelf -lz -ljson-c -lmicrohttpd -ldw) -pthread -lm

# The system headers clang needs for BPF (asm/types.h and friends).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

# The version is written once, in the top entry of debian/changelog (the
# package's version is the program's). The commit: this tree's HEAD, with
# -dirty for uncommitted changes; "release" when built outside git (a
# tarball), or inside some other repository.
# (Braces, not parentheses: make would count the ones in the pattern.)
VERSION := ${shell sed -n '1s/^iostackbreak (\([^)]*\)).*/\1/p' debian/changelog}
ifeq ($(VERSION),)
$(error cannot read the version from the first line of debian/changelog)
endif
GIT_COMMIT := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	git describe --always --abbrev=12 --dirty --exclude='*' 2>/dev/null || echo release)

# The front end by stage, each a folder of src/ (README: Layout): cli/ reads
# the command line, plan/ learns the kernel and plans what to attach,
# targets/ resolves what the user named (disks, cgroups, files, the
# command), kernel/ loads, attaches and reads the BPF object, report/ makes
# a report from what it read, sinks/ prints it (text, JSON, live, heat map,
# trace, Prometheus); session.c and main.c at the top run them in turn.
SRC_DIRS := src src/cli src/plan src/targets src/kernel src/report src/sinks
vpath %.c $(SRC_DIRS)
# Modules a unit test can reach without root or BPF, then the BPF glue.
CORE_SRCS := $(addprefix src/cli/,opts.c opt_values.c opt_checks.c opt_stacks.c quote.c version.c) \
	$(addprefix src/plan/,cells.c layers.c blk_stamps.c planner.c planner_why.c planner_wb.c dev_switches.c) \
	$(addprefix src/targets/,disk.c cgroup.c command.c fileid.c) \
	$(addprefix src/report/,hist.c ksym.c breakdown.c report.c verdict.c uring_parts.c aio_parts.c \
		bio_stack.c cgname.c stack_report.c symbolize.c pattern.c writeback.c \
		recording.c rec_count.c compare.c) \
	$(addprefix src/sinks/,sink.c report_text.c report_json.c prom.c exporter.c event_fmt.c \
		trace.c heatmap.c live.c stacks_out.c flamegraph.c pattern_out.c)
BPF_SRCS := src/plan/probe.c \
	$(addprefix src/kernel/,progtab.c knobs.c attach.c blk_leftovers.c collect.c stats.c \
		events.c stacks_read.c pattern_maps.c) \
	src/report/take.c src/sinks/metrics.c src/session.c src/replay.c src/main.c
CORE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(CORE_SRCS)))
BPF_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(BPF_SRCS)))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(OUTPUT)/unit-tests

.PHONY: all clean check unit completion-check integration sanitized soak-check fuzz fuzz-check vm \
	install format deps test-deps selftest release-check
all: $(OUTPUT)/iostackbreak $(OUTPUT)/iowork $(OUTPUT)/iowork-static $(OUTPUT)/uringwork \
     $(OUTPUT)/liburingwork $(OUTPUT)/aiowork $(OUTPUT)/faultwork $(OUTPUT)/stackwork \
     $(OUTPUT)/stackwork-nofp

$(OUTPUT):
	$(Q)mkdir -p $@

# One compilation unit: iostackbreak.bpf.c includes the per-layer files
# (bpf/*.bpf.c, bpf/*.bpf.h); -MMD lists them all as prerequisites. Built
# twice: iostackbreak_nokfunc.bpf.o (-DIOSB_NO_KFUNCS) calls no kernel
# function, for a kernel without BTF of its own (--btf=FILE): libbpf
# resolves a kfunc in the kernel's own BTF only, and without it refuses to
# load an object that declares one (src/kernel/attach.c picks the object).
BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(BPF_WARNINGS) -MMD -MP \
	-I$(dir $(VMLINUX)) -Ibpf $(CLANG_BPF_SYS_INCLUDES)
BPF_DEPS = bpf/iostackbreak.bpf.c $(wildcard bpf/*.bpf.c bpf/*.bpf.h bpf/*.h) bpf/cells.def \
	$(VMLINUX)
$(OUTPUT)/iostackbreak.bpf.o: $(BPF_DEPS) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/iostackbreak_nokfunc.bpf.o: $(BPF_DEPS) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DIOSB_NO_KFUNCS -c $< -o $@

# The skeleton embeds the object without its DWARF (libbpf reads BTF only):
# 19 MB less in the binary per object.
$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(LLVM_STRIP) -g $< -o $(OUTPUT)/$*.stripped.o
	$(Q)$(BPFTOOL) gen skeleton $(OUTPUT)/$*.stripped.o name $*_bpf > $@.tmp && mv $@.tmp $@

# Every object that includes the skeleton waits for it.
$(BPF_OBJS): $(OUTPUT)/iostackbreak.skel.h $(OUTPUT)/iostackbreak_nokfunc.skel.h

$(OUTPUT)/%.o: %.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

# version.o is rebuilt when the version or the commit changes: the stamp
# file is rewritten only when its content would differ.
$(OUTPUT)/version.stamp: debian/changelog FORCE | $(OUTPUT)
	$(Q)echo '$(VERSION) $(GIT_COMMIT)' | cmp -s - $@ || echo '$(VERSION) $(GIT_COMMIT)' > $@
$(OUTPUT)/version.o: $(OUTPUT)/version.stamp
$(OUTPUT)/version.o: CFLAGS += -DIOSB_VERSION='"$(VERSION)"' -DIOSB_COMMIT='"$(GIT_COMMIT)"'
.PHONY: FORCE
FORCE:

$(OUTPUT)/iostackbreak: $(CORE_OBJS) $(BPF_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/iowork: tools/iowork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -pthread -o $@

# io_uring requests of known counts, with no liburing (raw system calls).
$(OUTPUT)/uringwork: tools/uringwork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# Linux AIO requests of known counts (fsyncs through AIO), raw system calls.
$(OUTPUT)/aiowork: tools/aiowork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# Major page faults of known counts on a mapped file.
$(OUTPUT)/faultwork: tools/faultwork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# The same kind of client on liburing, as services are (static: the VM
# guest has no liburing).
$(OUTPUT)/liburingwork: tools/liburingwork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -Wl,-Bstatic -luring -Wl,-Bdynamic

# Known call paths for -K and -U: frame pointers, no sibling calls (PIE,
# the compiler's default, and libc's pread64 are what the test resolves).
$(OUTPUT)/stackwork: tools/stackwork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer -fno-optimize-sibling-calls $< -o $@

# The same paths without frame pointers, as distributions build programs:
# user stacks need DWARF unwinding (--user-stack=dwarf) to show them.
$(OUTPUT)/stackwork-nofp: tools/stackwork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(filter-out -fno-omit-frame-pointer,$(CFLAGS)) -O2 -fomit-frame-pointer $< -o $@

# Static: traced as a command, it makes no loader or library reads.
$(OUTPUT)/iowork-static: tools/iowork.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -MF $@.d -static $< -pthread -o $@

$(UNIT_BIN): $(UNIT_SRCS) $(CORE_OBJS) $(OUTPUT)/progtab.o tests/unit/unit.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itests/unit $(UNIT_SRCS) $(CORE_OBJS) $(OUTPUT)/progtab.o \
		-lcriterion $(LIBS) -o $@

# The headers the BPF side shares with the unit tests (call_parts.h,
# thread_slots.h): a change rebuilds the tests too.
$(UNIT_BIN): $(wildcard bpf/*.h)

# What the tool needs (step 1), then what its tests need (step 2).
deps:
	$(Q)scripts/install-deps.sh
test-deps:
	$(Q)scripts/install-test-deps.sh

# --- Test suites: each runs under tests/leftovers.py, which prints its wall
# time and fails it if anything it started is left: a process, a BPF program
# or link, and (--host: the suites that make devices) a loop device, mount,
# ftrace instance or iosb-* cgroup.
LEFTOVERS := tests/leftovers.py

unit: $(UNIT_BIN)
	$(LEFTOVERS) unit -- $(UNIT_BIN) --jobs 1

# The bash completion against the man page, bpf/cells.def and /sys/block.
completion-check: $(OUTPUT)/iostackbreak
	tests/completion/test.sh $(OUTPUT)

integration: all
	$(LEFTOVERS) --host integration -- tests/integration/run.sh

# The sample outputs in README.md and docs/ against the tool's own, from
# real runs (root and BPF; a few seconds): tests/docs/samples.py says how
# they are compared; tests/docs/samples.py --write makes them again.
.PHONY: docs-check
docs-check: all
	$(LEFTOVERS) --host docs-check -- tests/docs/samples.py

# The test of the tests: a test made to fail on purpose leaves nothing.
selftest: all $(UNIT_BIN)
	$(LEFTOVERS) --host selftest -- tests/selftest.py

# The VM suite on Debian 12's two kernels: its own 6.1 (vm), and the 6.12 it
# ships beside it (vm-6.12: block_io_start, so fentry with block_io_start).
vm: all $(OUTPUT)/compat32
	$(LEFTOVERS) vm -- tests/vm/run.sh
vm-6.12: all $(OUTPUT)/compat32
	IOSB_VM_KERNEL=6.12 $(LEFTOVERS) vm-6.12 -- tests/vm/run.sh

# The same suite on Debian 12's generic kernel (6.1), which has f2fs where
# the cloud kernels have none: f2fs's cells, added by one line of
# bpf/cells.def, traced and counted like ext4's (not part of make check;
# its result is in docs/kernels.md's table of kernels).
.PHONY: vm-f2fs
vm-f2fs: all $(OUTPUT)/compat32
	IOSB_VM_FLAVOUR=amd64 $(LEFTOVERS) vm-f2fs -- tests/vm/run.sh

# Both x86 VM suites side by side: each guest has one vCPU (tools/vm/run.sh),
# so on a 2-core host each runs on a core of its own, and make check takes
# the longer of the two instead of their sum (each prints its own time);
# the io_uring guests (40 s) and the stacked devices' (vm-bio, 60 s) take
# the first core free.
.PHONY: vms
vms: all $(OUTPUT)/compat32
	$(Q)$(MAKE) --no-print-directory -j2 --output-sync=target vm vm-6.12 vm-uring vm-bio vm-blk vm-aio \
		vm-fault vm-writeback

# The block layer exact on the stock kernels (tests/vm/blk.sh): fio psync
# QD1, io_uring QD32 and 32 jobs on a virtio disk, with the default programs
# and the programs keyed by request: counts equal fio's and diskstats, none
# missed. Where a host's kernel hides completions from BPF, this is where
# the tool is shown to miss none.
.PHONY: vm-blk
vm-blk: all
	$(LEFTOVERS) vm-blk -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/blk.sh || exit 1; done'

# The aio layer on the stock kernels (tests/vm/aio.sh): fio's libaio
# engine, direct and buffered, reads, writes and fdatasyncs, against fio's
# counts and percentiles and /proc/diskstats, on 6.1 then 6.12.
.PHONY: vm-aio
vm-aio: all
	$(LEFTOVERS) vm-aio -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/aio.sh || exit 1; done'

# Buffered writes charged to their dirtiers on the stock kernels
# (tests/vm/writeback.sh): dd's /proc/PID/io against the bytes written back
# for it, on ext4, two writers of one file, below dm-linear and dm-delay,
# with tp_btf and with raw tracepoints, on 6.1 then 6.12. In make check (vms).
.PHONY: vm-fault
vm-fault: all
	$(LEFTOVERS) vm-fault -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/fault.sh || exit 1; done'

.PHONY: vm-writeback
vm-writeback: all
	$(LEFTOVERS) vm-writeback -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/writeback.sh || exit 1; done'

# The bio layer on stacked devices (tests/vm/bio.sh): dm-linear and
# dm-delay over a virtio disk, dm-crypt and dm-flakey over null_blk, md
# RAID1 over two null_blk, counted against each device's diskstats and the
# workload's own counts, on both kernels. In make check (vms): its two
# guests take about a minute each (2026-11-27), while the suites beside
# them take three to four; nothing else checks the bio layer's stacks.
.PHONY: vm-bio
vm-bio: all
	$(LEFTOVERS) vm-bio -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/bio.sh || exit 1; done'

# Why calls waited (lock, journal) and the pages they added, split at the
# ext4 layer with fentry and with kprobes (tests/vm/why.sh, guest_why.sh):
# the checks of tests/integration/test_why.py on Debian 12's 6.1 and 6.12,
# side by side as vms (one vCPU each). In make check: each guest takes
# about 100 s, so the stage adds under 2 minutes to its ~21 and issue 24
# asks for these checks on 6.1 as on the host.
.PHONY: vm-why vm-why-6.1 vm-why-6.12
vm-why-6.1: all
	$(LEFTOVERS) vm-why-6.1 -- tests/vm/why.sh
vm-why-6.12: all
	IOSB_VM_KERNEL=6.12 $(LEFTOVERS) vm-why-6.12 -- tests/vm/why.sh
vm-why: all
	$(Q)$(MAKE) --no-print-directory -j2 --output-sync=target vm-why-6.1 vm-why-6.12

# io_uring where fentry attaches (io-wq-queued; block requests per request
# without block_io_start) and where a device polls (IOPOLL on null_blk's
# poll queues): one short guest on each of the two kernels (tests/vm/uring.sh).
.PHONY: vm-uring
vm-uring: all
	$(LEFTOVERS) vm-uring -- sh -c 'for k in "" 6.12; do IOSB_VM_KERNEL=$$k tests/vm/uring.sh || exit 1; done'

# Start-up on kernels without what the tool needs (no JIT, lockdown, no
# BTF): one short guest each (tests/vm/startup.sh, about a minute each).
.PHONY: vm-startup
vm-startup: all
	$(LEFTOVERS) vm-startup -- tests/vm/startup.sh

# A 32-bit program without a C library for the compat system call checks
# (tools/compat32.c): i386 for an x86-64 kernel, AArch32 for an arm64 one.
# Linked with lld, which links any of clang's targets.
COMPAT32_TARGET_x86 := --target=i386-linux-gnu
COMPAT32_TARGET_arm64 := --target=armv7a-linux-gnueabihf -marm
$(OUTPUT)/compat32: tools/compat32.c | $(OUTPUT)
	$(call msg,BINARY,$@)
	$(Q)$(CLANG) $(COMPAT32_TARGET_$(ARCH)) -O2 $(WARNINGS) -nostdlib -static -ffreestanding \
		-fno-stack-protector -fno-pic -fuse-ld=lld $< -o $@

# The VM suite on Debian's arm64 cloud kernel under qemu-system-aarch64
# (TCG, slow: not part of make check; run it before each release and record
# the result in docs/kernels.md). The tool is cross-built into build-arm64/ with
# Debian's arm64 libraries (scripts/install-test-deps.sh --arm64) and the arm64
# vmlinux.h (vmlinux/arm64, from Debian's 6.12 arm64 kernel's BTF).
ARM64_MAKE := $(MAKE) ARCH=arm64 OUTPUT=build-arm64 CC=aarch64-linux-gnu-gcc \
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig
.PHONY: vm-6.12 vm-arm64 arm64
arm64:
	$(Q)$(ARM64_MAKE) build-arm64/iostackbreak build-arm64/iowork build-arm64/compat32
# 6.12 by default: Debian's arm64 6.1 refuses fentry on kernel functions
# (arm64 BPF trampolines attach through ftrace direct calls, 6.4+).
vm-arm64: arm64
	IOSB_VM_FLAVOUR=cloud-arm64 IOSB_VM_KERNEL=$${IOSB_VM_KERNEL-6.12} \
		IOSB_VM_TIMEOUT=$${IOSB_VM_TIMEOUT:-1800} \
		$(LEFTOVERS) vm-arm64 -- tests/vm/run.sh

# Overhead benchmark (root, ~10 min): bench/README.md; writes bench/results/.
.PHONY: bench
bench:
	$(Q)bench/run.sh

# The unit and host integration tests again on the sanitized build; the
# environment makes every sanitizer report fatal, leaks included.
SAN_ENV := ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:halt_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp
sanitized:
	$(MAKE) SANITIZE=1 build-san/iostackbreak build-san/unit-tests
	$(SAN_ENV) $(LEFTOVERS) sanitized-unit -- build-san/unit-tests --jobs 1
	$(SAN_ENV) IOSB_SANITIZED=1 IOSB_LOAD_SECONDS=10 IOSB_TOOL=$(CURDIR)/build-san/iostackbreak \
		$(LEFTOVERS) --host sanitized-integration -- tests/integration/run.sh

# libFuzzer targets (tests/fuzz/): the core modules built again with clang
# and coverage, ASan and UBSan in build-fuzz/. make fuzz runs each target
# for a minute and keeps what it finds in its corpus; make fuzz-check runs
# each for a few seconds from the committed corpus (new inputs go to a
# temporary directory), as make check does.
FUZZ_OUT := build-fuzz
FUZZ_TARGETS := opts disk cgroup report events recording
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 5
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer $(FUZZ_SAN)
$(FUZZ_OUT)/version.o: $(OUTPUT)/version.stamp
$(FUZZ_OUT)/version.o: FUZZ_CFLAGS += -DIOSB_VERSION='"$(VERSION)"' -DIOSB_COMMIT='"$(GIT_COMMIT)"'
FUZZ_CORE_OBJS := $(patsubst %.c,$(FUZZ_OUT)/%.o,$(notdir $(CORE_SRCS)))
FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_TARGETS))

$(FUZZ_OUT):
	$(Q)mkdir -p $@

$(FUZZ_OUT)/%.o: %.c | $(FUZZ_OUT) $(OUTPUT)/iostackbreak.skel.h
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP $(INCLUDES) -c $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_CORE_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(INCLUDES) -Itests/fuzz $< $(FUZZ_CORE_OBJS) \
		$(LIBS) -o $@

fuzz: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p tests/fuzz/corpus/$$t && \
		$(FUZZ_OUT)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_OUT)/crash-$$t- tests/fuzz/corpus/$$t || exit 1; \
	done

fuzz-check: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		tmp=$$(mktemp -d) && \
		$(FUZZ_OUT)/fuzz_$$t -max_total_time=$(FUZZ_CHECK_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_OUT)/crash-$$t- $$tmp tests/fuzz/corpus/$$t \
			2>$(FUZZ_OUT)/fuzz-$$t.log; rc=$$?; rm -rf $$tmp; \
		grep -h "stat::number_of_executed_units" $(FUZZ_OUT)/fuzz-$$t.log | \
			sed "s/^/fuzz $$t: /"; \
		if [ $$rc != 0 ]; then tail -40 $(FUZZ_OUT)/fuzz-$$t.log; exit 1; fi; \
	done

# bench/soak.py for 60 s (a full soak: bench/soak.py, 10 minutes).
soak-check: all
	$(LEFTOVERS) --host soak -- bench/soak.py --duration 60

# Everything, one stage after the other, each timed and each run even after
# another failed (tests/stages.sh): unit tests, the bash completion, fuzz
# smoke, real BPF on this kernel, the docs' samples, the test of the tests,
# the Debian package,
# the same under the sanitizers, a one-minute soak, then the VM suite on
# Debian 12's 6.1 and 6.12 kernels, side by side (vms), and the lock,
# journal and page checks there (vm-why).
CHECK_STAGES := unit completion-check fuzz-check integration docs-check selftest deb-check sanitized \
	soak-check vms \
	vm-why
# tests/untouched.py watches PID 1 meanwhile: no stage may change the CPUs,
# cgroups, priority or limits of a process it did not start.
check:
	$(Q)tests/untouched.py -- tests/stages.sh $(MAKE) $(CHECK_STAGES)

# Before a release, on top of make check: each fuzzer for a minute from its
# corpus, the ten-minute soak, and the guests make check leaves out (f2fs on
# the generic kernel, arm64, start-up without JIT, under lockdown, without BTF). (The overhead benchmark, make bench, is
# run and committed apart: bench/README.md.)
release-check: check
	$(MAKE) fuzz
	$(LEFTOVERS) --host soak-10min -- bench/soak.py --duration 600
	$(MAKE) vm-f2fs vm-arm64 vm-startup

install: $(OUTPUT)/iostackbreak
	install -D -m 0755 $(OUTPUT)/iostackbreak $(DESTDIR)$(PREFIX)/sbin/iostackbreak
	install -D -m 0644 man/iostackbreak.8 $(DESTDIR)$(PREFIX)/share/man/man8/iostackbreak.8
	install -D -m 0644 contrib/bash-completion/iostackbreak \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/iostackbreak
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|' contrib/iostackbreak.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/iostackbreak.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/iostackbreak.service
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 docs/*.md docs/*.svg $(DESTDIR)$(DOCDIR)/docs

# iostackbreak_VERSION_ARCH.deb here (scripts/deb.sh says how and why).
.PHONY: deb deb-check
deb:
	$(Q)scripts/deb.sh

# The package: lintian, then installed with apt into a fresh Debian root
# (mmdebstrap, cached in /var/cache/iostackbreak-deb), run, purged, nothing
# left (root; ~10 s, ~25 s when it bootstraps the root).
deb-check:
	$(LEFTOVERS) deb-check -- tests/deb/test.sh

format:
	clang-format -i $(wildcard $(addsuffix /*.[ch],$(SRC_DIRS))) bpf/*.c bpf/*.h tools/*.c tests/unit/*.c tests/unit/*.h

clean:
	rm -rf build build-san build-fuzz build-deb build-arm64 iostackbreak_*.deb

-include $(wildcard $(OUTPUT)/*.d) $(wildcard $(FUZZ_OUT)/*.d)
