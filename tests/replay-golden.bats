# replay-golden.bats - the replay demo's records, with a fixed seed, stay what they were: a refactoring moves no record.
#
# The demo's pipeline (examples/demo.sh: replay sampler, leap-compile, leap-verify, leap-bench,
# leap-prune for three turns, then leap-rank and leap-advantage) runs on six tasks of the suite
# and its records, every field that holds a measured time or follows from one taken out, are
# compared with tests/fixtures/replay-golden/. Two runs: the whole rollout untimed (BENCH=),
# whose every other field is fixed by the seed and the replay data (prune, feedback, rank and
# advantage included: rank's and advantage's defaults do not read speed), and leap-bench over
# the first turn, where only what leap-bench decides before and besides timing is kept (which
# records it skips and why, the case and seed it times; ok, noisy and suspicious, verdicts of
# the timing itself, all read "timed").
#
# The compiler's messages reach the records (compile.log, the feedback of the next turn), so
# the golden files hold for the compiler that made them (fixtures/replay-golden/compiler);
# with another the test skips. After a change that is meant to change records:
# `REGEN=1 bats tests/replay-golden.bats` writes the golden files again; the diff is the change.
load helpers

GOLDEN="$FIXTURES/replay-golden"
TASKS_USED="attention gelu layernorm matmul softmax vector_add"

setup() {
	for p in leap-prompt leap-compile leap-verify leap-bench leap-prune leap-rank leap-advantage; do
		command -v "$p" >/dev/null || skip "$p is not built in this checkout"
	done
	if [ -z "${REGEN:-}" ] && [ "$(cc --version | head -n 1)" != "$(cat "$GOLDEN/compiler")" ]; then
		skip "the golden records were made with $(cat "$GOLDEN/compiler"), not $(cc --version | head -n 1)"
	fi
	export LEAP_TASKS="$BATS_TEST_TMPDIR/tasks" LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	mkdir "$LEAP_TASKS"
	for t in $TASKS_USED; do ln -s "$ROOT/tasks/$t" "$LEAP_TASKS/$t"; done
}

# normalise: the records of stdin, one line each, without what a clock or the machine decides:
# times (every ms), whether an artifact came from the cache (two jobs may race for it), where
# the cache is, and the prompt itself (leap-prompt's, the same for a task's every record: its
# length stands for it). bench keeps only what leap-bench decided without a clock.
normalise() {
	jq -c 'walk(if type == "object" then del(.ms, .run_ms, .compiled_ms, .cached) else . end)
		| if .compile.artifact then .compile.artifact = "ARTIFACT" else . end
		| if .messages then .messages |= (to_entries | map(if .key < 2 then .value.content |= length else .value end)) else . end
		| if .bench == null then .
		  elif (.bench.status | IN("ok", "noisy", "suspicious")) then .bench = {status: "timed", case: .bench.case, seed: .bench.seed}
		  else .bench = {status: .bench.status, message: .bench.message} end'
}

# compare NAME: the normalised records of stdin against the golden file NAME (or, with REGEN
# set, written as it).
compare() {
	normalise >"$BATS_TEST_TMPDIR/$1.normal"
	if [ -n "${REGEN:-}" ]; then
		mkdir -p "$GOLDEN"
		cp "$BATS_TEST_TMPDIR/$1.normal" "$GOLDEN/$1"
		cc --version | head -n 1 >"$GOLDEN/compiler"
	fi
	diff -u "$GOLDEN/$1" "$BATS_TEST_TMPDIR/$1.normal" # not `run`: a failure shows the lines that differ
}

@test "replay-golden: the untimed three-turn rollout writes the records it wrote before" {
	run -0 env BENCH= BACKEND=cpu SEED=1 JOBS=2 bash "$ROOT/examples/demo.sh" "$BATS_TEST_TMPDIR/demo"
	out="$BATS_TEST_TMPDIR/demo"
	# the data makes every outcome and both DCP verdicts happen in these six tasks
	run -0 jq -rs '[.[].status] | unique | join(" ")' "$out/train.jsonl"
	assert_output "compile_error mismatch no_code pass"
	run -0 jq -rs '[.[].prune.verdict] | unique | join(" ")' "$out/train.jsonl"
	assert_output "easy expand hopeless"
	compare turn2.jsonl <"$out/turn2.jsonl"
	compare turn3.jsonl <"$out/turn3.jsonl"
	compare train.jsonl <"$out/train.jsonl"
}

@test "replay-golden: leap-bench decides on the first turn's records as it did before" {
	leap-prompt --backend cpu --group-size 8 --all >"$BATS_TEST_TMPDIR/turn1.jsonl"
	"$ROOT/examples/sampler-replay" <"$BATS_TEST_TMPDIR/turn1.jsonl" |
		leap-compile --jobs 2 --no-progress |
		leap-verify --seed 1 --jobs 2 --no-progress >"$BATS_TEST_TMPDIR/verified.jsonl" || [ $? -eq 1 ]
	# a short budget (only the decisions are compared) and a bound no load reaches
	run -0 --separate-stderr bash -c 'leap-bench --seed 1 --no-progress --max-time 0.05 --min-runs 2 --max-runs 4 \
		--target-ci 0.5 --timeout 600 <"$1" >"$2" || [ $? -eq 1 ]' _ "$BATS_TEST_TMPDIR/verified.jsonl" "$BATS_TEST_TMPDIR/bench.jsonl"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/bench.jsonl")" -eq 48 ]
	compare bench.jsonl <"$BATS_TEST_TMPDIR/bench.jsonl"
}
