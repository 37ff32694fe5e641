# referee.mk - `make bench-referee` (part of `make bench`): leap-bench's self-test under load, the
# cpu pipeline's timings and its cost per record (bench/referee.sh; issues 14, 26, 28). Results and
# commands: bench/README.md.
.PHONY: bench-referee
bench: bench-referee
bench-referee: all
	bash bench/referee.sh selftest
	bash bench/referee.sh pipeline
	bash bench/referee.sh cost

# build/bench/blockcost: a block's own cost on cpu, its parts timed apart (bench/blockcost.c,
# bench/README.md section 10); `bash bench/referee.sh blockcost` runs it.
build/bench/blockcost: bench/blockcost.c lib/libleap.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ilib $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)

# bench-torchref: a module task's torch reference per case, as leap-verify calls it, against
# torch's own forward (bench/torchref.sh, build/bench/torchref; bench/torchref.md). Needs
# $$LEAP_TORCH_PYTHON and KernelBench's files at $$KB_DIR; skips saying so without them.
.PHONY: bench-torchref
bench: bench-torchref
bench-torchref: all
	KB_DIR='$(KB_DIR)' bash bench/torchref.sh

build/bench/torchref: bench/torchref.c lib/libleap.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ilib $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)
