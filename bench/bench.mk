# SPDX-License-Identifier: GPL-2.0
# Build rules of the overhead benchmark. Included from nowhere: run as
#   make -f bench/bench.mk bench-build
# It includes the main Makefile for its variables, so the floor objects are
# compiled with exactly the tool's clang flags and the loader with its CFLAGS.

include Makefile

BENCH_OUT := $(OUTPUT)/bench
FLOOR_LAYERS := syscall blk blk_done blk_start blk_insert ext4 raw task task_hist
FLOOR_OBJS := $(patsubst %,$(BENCH_OUT)/floor-%.bpf.o,$(FLOOR_LAYERS)) \
	$(BENCH_OUT)/floor-syscall-clock.bpf.o

.PHONY: bench-build
bench-build: all $(BENCH_OUT)/floor $(BENCH_OUT)/sysloop $(FLOOR_OBJS)

$(BENCH_OUT):
	$(Q)mkdir -p $@

# -DFLOOR_SYSCALL, -DFLOOR_BLK_START, ...: one object per layer.
$(BENCH_OUT)/floor-%.bpf.o: bench/floor.bpf.c $(VMLINUX) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(BPF_WARNINGS) \
		-I$(dir $(VMLINUX)) -Ibpf $(CLANG_BPF_SYS_INCLUDES) \
		-DFLOOR_$(shell echo $* | tr a-z A-Z) -c $< -o $@

# The syscall floor plus one clock read per program.
$(BENCH_OUT)/floor-syscall-clock.bpf.o: bench/floor.bpf.c $(VMLINUX) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(BPF_WARNINGS) \
		-I$(dir $(VMLINUX)) -Ibpf $(CLANG_BPF_SYS_INCLUDES) \
		-DFLOOR_SYSCALL -DFLOOR_CLOCK -c $< -o $@

# N getppid() calls, timed: what a syscall source costs calls it does not trace.
$(BENCH_OUT)/sysloop: bench/sysloop.c | $(BENCH_OUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -MF $@.d $< -o $@

$(BENCH_OUT)/floor: bench/floor.c | $(BENCH_OUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -MF $@.d $< $(LIBS) -o $@

-include $(wildcard $(BENCH_OUT)/*.d)
