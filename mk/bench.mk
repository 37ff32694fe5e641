# bench.mk - `make bench` (issue 9) beyond the filters, compile and verify benchmarks: the DCP
# economy (bench/dcp-sim.py); the storm of issue 26 at scale (tests/storm/run.sh: a candidate
# drawing a hostile act call by call, through leap-verify and leap-bench; it fails when leap
# did not hold); `make bench-gpu`, the GPU benchmarks (bench/gpu.sh; skips with the reason where
# there is no GPU; `make check-gpu` is the GPU checks). Run `make bench` without -j: the
# benchmarks time themselves. Results and commands: bench/README.md.
DCP_STEPS ?= 20
STORM_VERIFY ?= 3000
STORM_BENCH ?= 1000

.PHONY: bench-dcp bench-gpu bench-storm
bench: bench-dcp bench-storm
bench-dcp: all
	python3 bench/dcp-sim.py --steps $(DCP_STEPS)

bench-storm: all
	d=$$(mktemp -d "$${TMPDIR:-/tmp}/leap-storm.XXXXXX") && bash tests/storm/run.sh "$$d" $(STORM_VERIFY) $(STORM_BENCH); \
		rc=$$?; rm -rf "$$d"; exit $$rc

bench-gpu: all
	bash bench/gpu.sh
