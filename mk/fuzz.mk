# fuzz.mk - libFuzzer targets (clang) for the parsers; `make fuzz FUZZ_SECONDS=N` runs each.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_FLAGS   := -std=c11 -g -O1 -Ilib -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_TARGETS)

build/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(wildcard lib/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRC) $(LDLIBS)

# Each target runs on a scratch copy of its seed corpus (new inputs do not churn the tree);
# a crash leaves its input under build/fuzz/ and fails the run.
fuzz: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
		name=$${t##*/fuzz_}; work=build/fuzz/corpus-$$name; \
		rm -rf $$work; mkdir -p $$work; cp tests/fuzz/corpus/$$name/* $$work/; \
		echo "fuzz: $$name for $(FUZZ_SECONDS)s"; \
		$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=build/fuzz/crash-$$name- -print_final_stats=1 $$work 2>build/fuzz/$$name.log \
			|| { tail -n 40 build/fuzz/$$name.log; exit 1; }; \
		grep -E 'stat::number_of_executed_units|cov:' build/fuzz/$$name.log | tail -n 2; \
	done
