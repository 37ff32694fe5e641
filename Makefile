# leap - the environment side of multi-turn RL for GPU-kernel generation.
# `make` builds bin/ and lib/libleap.a; `make check` runs every test; `make demo` runs a rollout.

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/share/leap
MANDIR    ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec/leap
CUDA_HOME ?= /usr/local/cuda
CC        ?= cc
# nvcc: $(NVCC) when given (make NVCC=..., or the environment), else $(CUDA_HOME)/bin/nvcc,
# else the nvcc on PATH by its real path (nvcc finds its own tools beside the name it is run
# by, so a link elsewhere does not run): the order leap-compile and the baselines' builds
# follow (lib/compile/toolchain.c, leap_nvcc_name), so that a runner is built wherever they find nvcc.
ifeq ($(origin NVCC),undefined)
NVCC      := $(or $(wildcard $(CUDA_HOME)/bin/nvcc),$(realpath $(shell command -v nvcc 2>/dev/null)),$(CUDA_HOME)/bin/nvcc)
endif

CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
# No install directory is compiled in: installed programs find the suite and the runners
# relative to their own executable, so `make install PREFIX=...` rebuilds nothing.
CPPFLAGS  += -Ilib -D_GNU_SOURCE -DLEAP_VERSION='"$(VERSION)"'
LDLIBS    += -ljansson -lcrypto -ldw -lelf -lm -ldl
VERSION   := 0.1.0

ifeq ($(SANITIZE),1)
CFLAGS    += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS   += -fsanitize=address,undefined
endif

HAVE_NVCC := $(shell command -v '$(NVCC)' >/dev/null 2>&1 && echo 1)
# The CUDA runtime the runner and the artifacts link statically: lib/backend/gpu.c checks the driver
# against it (a driver older than its major version fails every CUDA call). Its headers are
# the ones of the nvcc found (bin/../include), wherever CUDA_HOME points.
ifeq ($(HAVE_NVCC),1)
CUDA_INCLUDE := $(abspath $(dir $(realpath $(shell command -v '$(NVCC)')))/../include)
CUDART_VERSION := $(shell sed -n 's/^\#define CUDART_VERSION *\([0-9][0-9]*\).*/\1/p' \
	'$(CUDA_INCLUDE)/cuda_runtime_api.h' 2>/dev/null | head -1)
CPPFLAGS  += $(if $(CUDART_VERSION),-DLEAP_CUDART_VERSION=$(CUDART_VERSION))
endif

LIB_SRC   := $(sort $(wildcard lib/*/*.c))
LIB_OBJ   := $(LIB_SRC:lib/%.c=build/lib/%.o)
CMD_SRC   := $(sort $(wildcard cmd/*.c))
PROGS     := $(CMD_SRC:cmd/%.c=bin/%)
MAN_PAGES := $(sort $(wildcard man/*.[1-9]))

ALL_CFLAGS = -std=c11 $(WARN) $(CPPFLAGS) $(CFLAGS)

.PHONY: all check check-gpu demo bench install uninstall clean deps deps-demo lint-tasks
.DEFAULT_GOAL := all

all: $(PROGS) lib/libleap.a

# Rebuild everything when the compiler flags change (e.g. SANITIZE=1 after a plain build).
FLAGS_LINE = $(subst ','\'',$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(LDLIBS))
build/flags: FORCE
	@mkdir -p build
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@
FORCE:

build/lib/%.o: lib/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

build/cmd/%.o: cmd/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

lib/libleap.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(PROGS): bin/%: build/cmd/%.o lib/libleap.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)

-include $(LIB_OBJ:.o=.d) $(CMD_SRC:cmd/%.c=build/cmd/%.d)
-include mk/*.mk

# The dependency step comes first, then the build (a sub-make: with -j, prerequisites would
# be built alongside it): on a fresh machine the build needs what the step installs.
deps:
	@sh tests/deps.sh check
deps-demo:
	@sh tests/deps.sh demo

check:
	@sh tests/deps.sh check
	@$(MAKE) --no-print-directory all gpu-tools
	@bash tests/run

lint-tasks: all
	@LEAP_LINT_ALL=1 bash tests/run tests/tasks.bats tests/kernelbench.bats tests/torch-tasks.bats

install: all
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(DATADIR)/tasks' '$(DESTDIR)$(MANDIR)/man1' \
		'$(DESTDIR)$(MANDIR)/man5' '$(DESTDIR)$(MANDIR)/man7'
	install -m 755 $(PROGS) '$(DESTDIR)$(BINDIR)'
	install -m 755 examples/sampler-openai '$(DESTDIR)$(BINDIR)/leap-sampler-openai'
	install -m 755 examples/sampler-replay '$(DESTDIR)$(BINDIR)/leap-sampler-replay'
	install -d '$(DESTDIR)$(DATADIR)/replay'
	install -m 644 examples/replay/*.jsonl '$(DESTDIR)$(DATADIR)/replay/'
	for p in $(MAN_PAGES); do s=$${p##*.}; install -m 644 $$p '$(DESTDIR)$(MANDIR)'/man$$s/; done
	cp -R tasks/. '$(DESTDIR)$(DATADIR)/tasks/'
	rm -rf '$(DESTDIR)$(DATADIR)/tasks/kernelbench' # the suites' generator, not a suite

uninstall:
	rm -f $(PROGS:bin/%='$(DESTDIR)$(BINDIR)'/%) '$(DESTDIR)$(BINDIR)'/leap-sampler-openai \
		'$(DESTDIR)$(BINDIR)'/leap-sampler-replay
	for p in $(MAN_PAGES); do s=$${p##*.}; rm -f '$(DESTDIR)$(MANDIR)'/man$$s/$${p#man/}; done
	rm -rf '$(DESTDIR)$(DATADIR)'

clean:
	rm -rf build bin libexec lib/libleap.a tests/.tmp
