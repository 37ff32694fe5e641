# runners.mk - the sandboxed runners of leap-verify and leap-bench (libexec/leap-run-cpu, -cuda),
# their install, and the checks and benchmarks of leap-verify that exercise them.
# The runners are built without sanitizers (ASan cannot live under the address-space limit
# the sandbox sets), with the same warnings as everything else.

RUNNER_CFLAGS = -std=c11 $(WARN) $(CPPFLAGS) -Irunner -O2 -g
RUNNERS := libexec/leap-run-cpu
ifeq ($(HAVE_NVCC),1)
RUNNERS += libexec/leap-run-cuda
NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
endif

all: $(RUNNERS) libexec/leap-torchref.py libexec/leap-torchbase.py libexec/leap-torchbase.c

# The trusted torch side of module tasks (lib/referee/torchref.c runs it with $LEAP_TORCH_PYTHON):
# beside the runners, where leap_libexec_dir finds them, in the build tree and installed.
libexec/leap-torchref.py: runner/torchref.py
	@mkdir -p $(@D)
	cp $< $@

# The torch baseline of module tasks in leap-bench (lib/referee/torchbase.c builds it per task
# from these, with torchref.py): sources, not built here; leap compiles them with the task's data.
libexec/leap-torchbase.py: runner/torchbase.py
	@mkdir -p $(@D)
	cp $< $@

libexec/leap-torchbase.c: runner/torchbase.c
	@mkdir -p $(@D)
	cp $< $@

build/runner/%.o: runner/%.c runner/backend.h runner/fault.h runner/filter.h runner/heap.h lib/core/fdio.h lib/sandbox/runproto.h lib/sandbox/runplan.h lib/compile/abi.h build/flags
	@mkdir -p $(@D)
	$(CC) $(RUNNER_CFLAGS) -c -o $@ $<

# The system-call filter's BPF program, made from runner/policy.h by libseccomp at build time:
# the runners install it without compiling rules (or linking libseccomp) at every start.
build/runner/mkfilter: runner/mkfilter.c runner/policy.h build/flags
	@mkdir -p $(@D)
	$(CC) $(RUNNER_CFLAGS) -o $@ $< -lseccomp

build/runner/filter_bpf.h: build/runner/mkfilter
	$< >$@.tmp && mv $@.tmp $@

build/runner/filter.o: build/runner/filter_bpf.h runner/policy.h
build/runner/filter.o: RUNNER_CFLAGS += -Ibuild/runner

build/runner/runproto.o: lib/sandbox/runproto.c lib/sandbox/runproto.h
	@mkdir -p $(@D)
	$(CC) $(RUNNER_CFLAGS) -c -o $@ $<

# exact reads and writes of the protocol's messages (and of the artifact's copy)
build/runner/fdio.o: lib/core/fdio.c lib/core/fdio.h
	@mkdir -p $(@D)
	$(CC) $(RUNNER_CFLAGS) -c -o $@ $<

# what a runner does with the host regions: the same code the tests ask (tests/cuda.bats)
build/runner/runplan.o: lib/sandbox/runplan.c lib/sandbox/runplan.h lib/sandbox/runproto.h
	@mkdir -p $(@D)
	$(CC) $(RUNNER_CFLAGS) -c -o $@ $<

RUNNER_OBJ = build/runner/run.o build/runner/fault.o build/runner/filter.o build/runner/fdio.o build/runner/runproto.o \
	build/runner/runplan.o

# heap.o replaces the C library's allocator functions (runner/heap.c); the executable exports
# exactly those (runner/heap.list), so that the candidate's calls and the C library's reach them.
libexec/leap-run-cpu: $(RUNNER_OBJ) build/runner/cpu.o build/runner/heap.o runner/heap.list
	@mkdir -p $(@D)
	$(CC) -Wl,--dynamic-list=runner/heap.list -o $@ $(filter %.o,$^) -ldl

build/runner/cuda.o: runner/cuda.cu runner/backend.h lib/sandbox/runproto.h lib/sandbox/runplan.h lib/compile/abi.h
	@mkdir -p $(@D)
	$(NVCC) -O3 $(NVCC_ARCH) -Ilib -Irunner -Xcompiler -Wall -c -o $@ $<

libexec/leap-run-cuda: $(RUNNER_OBJ) build/runner/cuda.o
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_ARCH) -o $@ $^ -ldl

install: install-runners
.PHONY: install-runners
install-runners: $(RUNNERS)
	install -d '$(DESTDIR)$(LIBEXECDIR)'
	install -m 755 $(RUNNERS) '$(DESTDIR)$(LIBEXECDIR)'
	install -m 644 libexec/leap-torchref.py libexec/leap-torchbase.py libexec/leap-torchbase.c '$(DESTDIR)$(LIBEXECDIR)'

# The cuda backend end to end on a GPU, one PASS/FAIL/SKIP line per check and a summary
# (tests/gpu/check-gpu.sh; without a GPU every check is skipped with its reason, exit 0).
# Nothing first: a GPU machine runs a tree built and prepared elsewhere (make gpu-prepare),
# whose file times the copy does not keep, and may lack the headers a rebuild needs; the
# script runs what was prepared or names what is missing.
check-gpu:
	@bash tests/gpu/check-gpu.sh

# leap-verify's cost per candidate beyond the candidate's own run time (issue 9: <= 5 ms).
.PHONY: bench-verify
bench: bench-verify
bench-verify: all
	PEER_RUNS=20 bash bench/verify-overhead.sh 300

# What the drawn cases of issue 14 add to verification per candidate, on real tasks.
.PHONY: bench-verify-drawn
bench: bench-verify-drawn
bench-verify-drawn: all
	ROUNDS=3 bash bench/verify-drawn.sh 50
