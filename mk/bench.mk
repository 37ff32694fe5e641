# bench.mk - `make bench` (issue 9) beyond the filters, compile and verify benchmarks: the DCP
# economy (bench/dcp-sim.py); the storm of issue 26 at scale (tests/storm/run.sh: a candidate
# drawing a hostile act call by call, through leap-verify and leap-bench; it fails when leap
# did not hold); `make bench-gpu`, the GPU benchmarks (bench/gpu.sh; skips with the reason where
# there is no GPU; `make check-gpu` is the GPU checks). Run `make bench` without -j: the
# benchmarks time themselves. Results and commands: bench/README.md.
DCP_STEPS ?= 20
STORM_VERIFY ?= 3000
STORM_BENCH ?= 1000

.PHONY: bench-agree bench-dcp bench-gpu bench-import bench-storm
bench: bench-dcp bench-storm bench-agree
bench-dcp: all
	python3 bench/dcp-sim.py --steps $(DCP_STEPS)

bench-storm: all
	d=$$(mktemp -d "$${TMPDIR:-/tmp}/leap-storm.XXXXXX") && bash tests/storm/run.sh "$$d" $(STORM_VERIFY) $(STORM_BENCH); \
		rc=$$?; rm -rf "$$d"; exit $$rc

# KernelBench's levels 1 and 2 imported as module tasks against the C tasks of
# tasks/kernelbench-l1 and -l2 (tasks/kernelbench/agree.py): its last line is the counts. Needs
# $$LEAP_TORCH_PYTHON and KernelBench's files at $$KB_DIR; skips saying so without them.
KB_DIR ?= ../shared/kernelbench/KernelBench/KernelBench
bench-agree: all
	@if [ -z "$$LEAP_TORCH_PYTHON" ] || [ ! -d '$(KB_DIR)/level1' ]; then \
		echo "bench-agree: skipped: set LEAP_TORCH_PYTHON and KB_DIR (KernelBench's level folders)"; exit 0; fi; \
	d=$$(mktemp -d "$${TMPDIR:-/tmp}/leap-agree.XXXXXX") && \
	{ bin/leap-task --import "$$d/l1" '$(KB_DIR)/level1' >"$$d/l1.jsonl" 2>/dev/null; \
	  bin/leap-task --import "$$d/l2" '$(KB_DIR)/level2' >"$$d/l2.jsonl" 2>/dev/null; \
	  "$$LEAP_TORCH_PYTHON" tasks/kernelbench/agree.py --modules "$$d/l1" --modules "$$d/l2"; }; \
	rc=$$?; rm -rf "$$d"; exit $$rc

# KernelBench's level 3 imported as module tasks and checked (bench/import.sh, figures in
# bench/import.md): what linting a suite of module tasks costs, module by module and phase by
# phase. Not part of `make bench`: on 2 cores it takes longer than the rest together.
bench-import: all
	@KB_DIR='$(KB_DIR)' bash bench/import.sh

bench-gpu: all
	bash bench/gpu.sh
