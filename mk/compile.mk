# compile.mk - `make bench` runs the leap-compile benchmark (bench/compile.sh; results in bench/README.md)
# on COMPILE_CANDIDATES of its 20 candidates, COMPILE_REPS times (median over the candidates; the 10-minute budget of
# `make bench`; the README's figures use all 20, 3 times).
COMPILE_CANDIDATES ?= 8
COMPILE_REPS ?= 1

.PHONY: bench-compile
bench: bench-compile
bench-compile: all
	CANDIDATES=$(COMPILE_CANDIDATES) REPS=$(COMPILE_REPS) bash bench/compile.sh
