# bench.mk - `make bench` (issue 9) beyond the filters, compile and verify benchmarks: the DCP
# economy (bench/dcp-sim.py); `make bench-gpu`, the GPU benchmarks (bench/gpu.sh; skips with the
# reason where there is no GPU; `make check-gpu` is the GPU checks). Run `make bench` without -j:
# the benchmarks time themselves. Results and commands: bench/README.md.
DCP_STEPS ?= 20

.PHONY: bench-dcp bench-gpu
bench: bench-dcp
bench-dcp: all
	python3 bench/dcp-sim.py --steps $(DCP_STEPS)

bench-gpu: all
	bash bench/gpu.sh
