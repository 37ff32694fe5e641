# rollout.mk - a LEAP rollout as a Makefile experiment: every step a file target, resumable, parallel with make -j.
#
#   make -f examples/rollout.mk -j4 OUT=out/exp1 GROUP=8 TURNS=3 BACKEND=cpu SHARDS=4
#
# Each turn's records are split into SHARDS line shards; every shard runs
# sampler | leap-compile | leap-verify on its own (make -j runs shards at once), the shards are
# joined in order, one leap-bench times the turn (it holds the device lock while it times, so
# shards timing at once would only queue for it) and leap-prune decides the groups (DCP). At
# the end the finished trajectories are ranked, turned into advantages and reported
# (OUT/report.txt, OUT/plots/*.svg). Every target is written to a temporary file and renamed,
# so an interrupted run resumes where it stopped: run the same command again. The settings
# are part of the dependency graph (OUT/settings): the same command again has nothing to do,
# while a run with another GROUP, TURNS, BACKEND, TASKS, LEVEL, SAMPLER, BENCH, BENCH_FLAGS or
# SEED on the same OUT starts over from the prompts, and another SHARDS from the split.
# `make -f ... clean` removes OUT.
#
# Variables: OUT (out/rollout), GROUP (8), TURNS (3), BACKEND (cpu or cuda; empty: what
# leap-prompt picks, cuda where a CUDA device is usable, else cpu), SHARDS (2),
# TASKS (task ids; empty: the whole suite), SAMPLER (default: sampler-replay next to this
# file; any command that reads records with `messages` and adds `completion`), BENCH
# (leap-bench; empty: skip timing), BENCH_FLAGS (extra leap-bench options, e.g. a shorter
# timing budget "--max-time 1"), SEED (1), LEVEL (with no TASKS: only this level).

ROOT    := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
export PATH := $(ROOT)/bin:$(PATH)
export LEAP_TASKS ?= $(ROOT)/tasks

OUT     ?= out/rollout
GROUP   ?= 8
TURNS   ?= 3
BACKEND ?=
SHARDS  ?= 2
TASKS   ?=
LEVEL   ?=
SAMPLER ?= $(ROOT)/examples/sampler-replay
BENCH   ?= leap-bench
BENCH_FLAGS ?=
SEED    ?= 1

SHELL   := bash
TURN_NUMS  := $(shell seq 1 $(TURNS))
SHARD_IDS  := $(shell seq -f '%03g' 0 $$(($(SHARDS) - 1)))
BENCH_STAGE := $(if $(strip $(BENCH)),$(BENCH) --seed $(SEED) --no-progress $(BENCH_FLAGS),cat)
PROMPT_ARGS := $(if $(strip $(TASKS)),$(TASKS),--all $(if $(LEVEL),--level $(LEVEL)))
BACKEND_ARG := $(if $(strip $(BACKEND)),--backend $(BACKEND))

# The settings in the dependency graph: OUT/settings is rewritten only when they differ from
# the last run's, and the prompts depend on it (OUT/shards, the split of every turn).
SETTINGS := GROUP=$(GROUP) TURNS=$(TURNS) BACKEND=$(BACKEND) TASKS=$(strip $(TASKS)) LEVEL=$(LEVEL) \
	SAMPLER=$(SAMPLER) BENCH=$(BENCH) BENCH_FLAGS=$(BENCH_FLAGS) SEED=$(SEED)
ifneq ($(MAKECMDGOALS),clean)
ifneq ($(SETTINGS),$(file < $(OUT)/settings))
$(shell mkdir -p $(OUT))
$(file > $(OUT)/settings,$(SETTINGS))
endif
ifneq ($(SHARDS),$(file < $(OUT)/shards))
$(shell mkdir -p $(OUT))
$(file > $(OUT)/shards,$(SHARDS))
endif
endif

# ok: after a pipeline, fail the recipe when a stage exited with more than 1 (1 only means
# that some record carries an error, which the record itself reports).
ok = codes=("$${PIPESTATUS[@]}"); for c in "$${codes[@]}"; do [ "$$c" -le 1 ] || { echo "rollout: a stage failed: $${codes[*]}" >&2; exit 1; }; done

.PHONY: all clean
.DELETE_ON_ERROR:

all: $(OUT)/report.txt

$(OUT)/turn1.in.jsonl: $(OUT)/settings
	@mkdir -p $(@D)
	leap-prompt $(BACKEND_ARG) --group-size $(GROUP) $(PROMPT_ARGS) > $@.tmp && mv $@.tmp $@

# shard S of turn N: sampler, compile and verify (the records name their backend)
define shard_rule
$(OUT)/t$(1)/out.$(2).jsonl: $(OUT)/t$(1)/split.done
	$(SAMPLER) < $(OUT)/t$(1)/in.$(2).jsonl | leap-compile --jobs 1 --no-progress \
		| leap-verify --seed $(SEED) --no-progress > $$@.tmp; $$(ok); mv $$@.tmp $$@

endef

# turn N: split, shards, join, prune
define turn_rules
$(OUT)/t$(1)/split.done: $(OUT)/turn$(1).in.jsonl $(OUT)/shards
	rm -rf $(OUT)/t$(1) && mkdir -p $(OUT)/t$(1)
	split -n l/$(SHARDS) -d -a 3 --additional-suffix=.jsonl $$< $(OUT)/t$(1)/in.
	touch $$@

$(foreach s,$(SHARD_IDS),$(call shard_rule,$(1),$(s)))

$(OUT)/turn$(1).out.jsonl: $(foreach s,$(SHARD_IDS),$(OUT)/t$(1)/out.$(s).jsonl)
	cat $$^ | $(BENCH_STAGE) > $$@.tmp; $$(ok); mv $$@.tmp $$@

$(OUT)/turn$(1).done.jsonl: $(OUT)/turn$(1).out.jsonl
	rm -f $$@.tmp
	leap-prune --group-size $(GROUP) --max-turns $(TURNS) --done $$@.tmp --no-progress < $$< \
		> $(OUT)/turn$(shell echo $$(($(1) + 1))).in.jsonl.tmp; $$(ok); touch $$@.tmp
	mv $(OUT)/turn$(shell echo $$(($(1) + 1))).in.jsonl.tmp $(OUT)/turn$(shell echo $$(($(1) + 1))).in.jsonl
	mv $$@.tmp $$@

$(OUT)/turn$(shell echo $$(($(1) + 1))).in.jsonl: $(OUT)/turn$(1).done.jsonl ;
endef
$(foreach t,$(TURN_NUMS),$(eval $(call turn_rules,$(t))))

$(OUT)/done.jsonl: $(foreach t,$(TURN_NUMS),$(OUT)/turn$(t).done.jsonl)
	cat $^ > $@.tmp && mv $@.tmp $@

$(OUT)/train.jsonl: $(OUT)/done.jsonl
	leap-rank --no-progress < $< | leap-advantage --no-progress > $@.tmp; $(ok); mv $@.tmp $@

$(OUT)/report.txt: $(OUT)/train.jsonl
	leap-report --max-turns $(TURNS) --plot $(OUT)/plots $< > $@.tmp || [ $$? -eq 1 ]
	mv $@.tmp $@
	@cat $@

clean:
	rm -rf $(OUT)
