# fuzz.mk - libFuzzer targets (clang) for the parsers; `make fuzz FUZZ_SECONDS=N` runs each (tests/fuzz/run.sh; FUZZ_JOBS=N at once).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
# UBSan findings end the run like crashes (-fno-sanitize-recover), so they fail the target.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS   := -std=c11 -g -O1 -Ilib -D_GNU_SOURCE $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
# The library is compiled once (instrumented, without libFuzzer's main) into an archive, from
# which each target pulls what it calls, as the programs do from libleap.a: objects no parser
# needs (lib/serve/*.o and its libwebsockets) stay out.
FUZZ_OBJ     := $(LIB_SRC:lib/%.c=build/fuzz/obj/%.o)
FUZZ_LIB     := build/fuzz/libleap.a
.SECONDARY: $(FUZZ_OBJ)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_TARGETS)

build/fuzz/obj/%.o: lib/%.c $(wildcard lib/*/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJ)
	@rm -f $@
	$(AR) rcs $@ $(FUZZ_OBJ)

build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LDLIBS)

# Each target replays its seed corpus (tests/fuzz/corpus/NAME: regression inputs included),
# then fuzzes FUZZ_SECONDS on a scratch copy; a crash leaves its input under build/fuzz/ and
# fails the run after every target has run.
fuzz: $(FUZZ_TARGETS)
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
