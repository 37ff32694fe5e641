# compile.mk - `make bench` runs the leap-compile benchmark (bench/compile.sh; results in bench/README.md).
.PHONY: bench-compile
bench: bench-compile
bench-compile: all
	bash bench/compile.sh
