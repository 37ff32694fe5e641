# leap-advantage.bats - every estimator against numbers derived by hand; no NaN, no infinity.
load helpers

F="$FIXTURES/leap-advantage"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# expect OUTPUT_FILE JQ_KEY "key value" ...: for every pair, the record whose JQ_KEY renders
# as `key` has an advantage within 1e-9 of `value`, and no other record exists.
expect() {
	local file=$1 key=$2
	shift 2
	printf '%s\n' "$@" >"$T/want"
	jq -r "\"\\($key) \\(.advantage)\"" "$file" >"$T/got"
	awk 'NR == FNR { want[$1] = $2; n++; next }
	     { if (!($1 in want)) { print "unexpected " $0; bad = 1; next }
	       d = $2 - want[$1]; if (d < 0) d = -d;
	       if (d > 1e-9) { print "key " $1 ": got " $2 ", want " want[$1]; bad = 1 }
	       seen++ }
	     END { if (seen != n) { print "records: " seen ", want " n; bad = 1 } exit bad }' "$T/want" "$T/got"
}

@test "leap-advantage: --help, --version, bad option, bad combinations" {
	run -0 leap-advantage --help
	assert_line --index 0 "usage: leap-advantage [OPTION]... [FILE]..."
	run -0 leap-advantage --version
	run -2 --separate-stderr leap-advantage --bogus
	run -2 --separate-stderr leap-advantage --estimator ppo </dev/null
	run -2 --separate-stderr leap-advantage --scale group </dev/null
	[[ "$stderr" == *"scale-free"* ]]
	run -2 --separate-stderr leap-advantage --reward binary </dev/null
	run -2 --separate-stderr leap-advantage -e grpo --gamma 1.5 </dev/null
	run -2 --separate-stderr leap-advantage -e grpo --scale default </dev/null
}

@test "leap-advantage: rank: the score on every turn, positive ones discounted back" {
	# story (leap-rank's default key, turn): A s0 score 1, turns 2; A s1..s3 -1/3; B s0 -1
	# (turns 2); B s1, s2, s3 1/3 (turns 1).
	# gamma 1: every record gets its trajectory's score.
	leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage --gamma 1 >"$T/g1"
	expect "$T/g1" '.group + "/\(.sample)/\(.turn)"' \
		"A/0/1 1" "A/0/2 1" "A/1/1 -0.333333333333333" "A/1/2 -0.333333333333333" "A/1/3 -0.333333333333333" \
		"A/2/1 -0.333333333333333" "A/2/2 -0.333333333333333" "A/2/3 -0.333333333333333" "A/3/1 -0.333333333333333" \
		"B/0/1 -1" "B/0/2 -1" "B/1/1 0.333333333333333" "B/2/1 0.333333333333333" "B/3/1 0.333333333333333"
	# the default gamma, 0.4: A s0 turn 1 = 1 * 0.4^(2-1) = 0.4; B's 1/3 are at their last
	# turn (no discount); negative ones stay on every turn.
	leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage >"$T/g4"
	expect "$T/g4" '.group + "/\(.sample)/\(.turn)"' \
		"A/0/1 0.4" "A/0/2 1" "A/1/1 -0.333333333333333" "A/1/2 -0.333333333333333" "A/1/3 -0.333333333333333" \
		"A/2/1 -0.333333333333333" "A/2/2 -0.333333333333333" "A/2/3 -0.333333333333333" "A/3/1 -0.333333333333333" \
		"B/0/1 -1" "B/0/2 -1" "B/1/1 0.333333333333333" "B/2/1 0.333333333333333" "B/3/1 0.333333333333333"
	# gamma 0.5: A s0 turn 1 = 1 * 0.5^(2-1) = 0.5
	run -0 jq -c 'select(.group == "A" and .sample == 0) | .advantage' <(leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage --gamma 0.5)
	assert_output "$(printf '0.5\n1')"
	# gamma 0: only the solving turn keeps the credit
	run -0 jq -c 'select(.group == "A" and .sample == 0) | .advantage' <(leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage --gamma 0)
	assert_output "$(printf '0\n1')"
}

@test "leap-advantage: grpo, dr-grpo and rloo on hand-computed groups" {
	# g1 rewards 1, 0, 0.5, 0.5: mean 0.5; deviations 0.5, -0.5, 0, 0;
	#   std (N-1) = sqrt(0.5 / 3) = 0.408248290463863.
	#   grpo: 0.5 / (0.408248290463863 + 1e-6) = 1.224741871398938, -1.224741871398938, 0, 0
	#   dr-grpo: 0.5, -0.5, 0, 0
	#   rloo: 1 - (1 + 0.5 + 0.5)/3... precisely R_i - (sum - R_i)/3 with sum 2:
	#         1 - 1/3 = 0.666666666666667; 0 - 2/3; 0.5 - 0.5 = 0; 0
	# g2 is a group of one (reward 0.7): verl takes mean 0 and std 1: grpo 0.7 / (1 + 1e-6) =
	# 0.6999993000007; dr-grpo and rloo 0.7. g3 rewards 2, 2, 2 (zero variance): 0 for all.
	leap-advantage -e grpo "$F/scalar.jsonl" >"$T/grpo"
	expect "$T/grpo" '.group + "/\(.sample)"' "g1/0 1.224741871398938" "g1/1 -1.224741871398938" "g1/2 0" "g1/3 0" \
		"g2/0 0.6999993000007" "g3/0 0" "g3/1 0" "g3/2 0"
	leap-advantage -e dr-grpo "$F/scalar.jsonl" >"$T/dr"
	expect "$T/dr" '.group + "/\(.sample)"' "g1/0 0.5" "g1/1 -0.5" "g1/2 0" "g1/3 0" "g2/0 0.7" "g3/0 0" "g3/1 0" "g3/2 0"
	leap-advantage -e rloo "$F/scalar.jsonl" >"$T/rloo"
	expect "$T/rloo" '.group + "/\(.sample)"' "g1/0 0.666666666666667" "g1/1 -0.666666666666667" "g1/2 0" "g1/3 0" \
		"g2/0 0.7" "g3/0 0" "g3/1 0" "g3/2 0"
	# grpo with --scale none is dr-grpo
	diff <(jq -c .advantage "$T/dr") <(leap-advantage -e grpo --scale none "$F/scalar.jsonl" | jq -c .advantage)
}

@test "leap-advantage: zero variance gives exactly 0, never NaN; a group of one keeps its value as its source does" {
	# 0.1 three times: a computed mean is 0.10000000000000002, yet the advantage must be 0
	printf '{"group":"z","sample":%d,"reward":0.1}\n' 0 1 2 >"$T/in"
	for e in grpo dr-grpo rloo kevin trloo turn-mean; do
		run -0 jq -r .advantage <(leap-advantage -e "$e" "$T/in")
		assert_output "$(printf '0\n0\n0')"
	done
	run -0 jq -r .advantage <(leap-advantage -e grpo --scale batch "$T/in")
	assert_output "$(printf '0\n0\n0')"
	# A group of one, reward 5 (one record: its return is 5 at any gamma):
	#   grpo, kevin (group scale): 5 / (1 + 1e-6) = 4.999995000005 (verl: mean 0, std 1)
	#   dr-grpo, rloo (verl), trloo (Dr.Kernel: "else: advantages = returns"), turn-mean: 5
	printf '{"group":"one","sample":0,"reward":5}\n' >"$T/one"
	for e in grpo kevin; do
		expect <(leap-advantage -e "$e" "$T/one") .group "one 4.999995000005"
	done
	for e in dr-grpo rloo trloo turn-mean; do
		expect <(leap-advantage -e "$e" "$T/one") .group "one 5"
	done
	# with --scale batch alone in the input: std of one value is 0: 5 / (0 + 1e-4) = 50000
	expect <(leap-advantage -e dr-grpo --scale batch "$T/one") .group "one 50000"
}

@test "leap-advantage: the trajectory's reward is its last turn's" {
	# multiturn: final rewards s0 1 (turn 2), s1 1 (turn 3), s2 1 (turn 1): all equal -> 0
	run -0 jq -r .advantage <(leap-advantage -e dr-grpo "$F/multiturn.jsonl")
	assert_output "$(printf '0\n0\n0\n0\n0\n0')"
	# make s1's last turn fail: R = 1, 0, 1, mean 2/3: s0 and s2 +1/3, s1 -2/3 on every turn
	sed 's/"sample":1,"turn":3,"status":"pass","reward":1/"sample":1,"turn":3,"status":"mismatch","reward":0/' \
		"$F/multiturn.jsonl" >"$T/in"
	leap-advantage -e dr-grpo "$T/in" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 0.333333333333333" "0/2 0.333333333333333" "1/1 -0.666666666666667" \
		"1/2 -0.666666666666667" "1/3 -0.666666666666667" "2/1 0.333333333333333"
}

@test "leap-advantage: kevin as published: discounted returns normalised over all turns of the group" {
	# rewards: s0: t1 0, t2 1; s1: t1 0, t2 0, t3 1; s2: t1 1. gamma 0.4 (Kevin's).
	# returns: s0: G1 = 0 + 0.4*1 = 0.4, G2 = 1. s1: G3 = 1, G2 = 0.4, G1 = 0.16. s2: G1 = 1.
	# all six together: {0.4, 1, 0.16, 0.4, 1, 1}: mean 3.96 / 6 = 0.66; deviations -0.26, 0.34,
	# -0.5, -0.26, 0.34, 0.34; squares sum 0.732; std (N-1) = sqrt(0.732 / 5) = 0.382622529394180.
	# A = dev / (std + 1e-6): -0.26 / 0.382623529394180 = -0.679519109584469,
	# 0.34 / ... = 0.888601912533537, -0.5 / ... = -1.306767518431671.
	leap-advantage -e kevin "$F/multiturn.jsonl" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 -0.679519109584469" "1/1 -1.306767518431671" "2/1 0.888601912533537" \
		"0/2 0.888601912533537" "1/2 -0.679519109584469" "1/3 0.888601912533537"
	# --scale none: the deviations themselves
	leap-advantage -e kevin --scale none "$F/multiturn.jsonl" >"$T/none"
	expect "$T/none" '"\(.sample)/\(.turn)"' "0/1 -0.26" "1/1 -0.5" "2/1 0.34" "0/2 0.34" "1/2 -0.26" "1/3 0.34"
}

@test "leap-advantage: turn-mean: returns against the mean of the same turn (leap's per-turn variant)" {
	# the same returns (gamma 0.4): turn 1: {0.4, 0.16, 1}, mean 0.52: -0.12, -0.36, 0.48
	# turn 2: {1, 0.4}, mean 0.7: 0.3, -0.3.  turn 3: {1} alone: no baseline, 1.
	leap-advantage -e turn-mean "$F/multiturn.jsonl" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 -0.12" "1/1 -0.36" "2/1 0.48" "0/2 0.3" "1/2 -0.3" "1/3 1"
}

@test "leap-advantage: trloo: returns against the leave-one-out mean of the same turn" {
	# gamma 0.5: s0: G1 = 0.5, G2 = 1. s1: G3 = 1, G2 = 0.5, G1 = 0.25. s2: G1 = 1.
	# turn 1: s0 0.5 - (0.25 + 1)/2 = -0.125; s1 0.25 - (0.5 + 1)/2 = -0.5; s2 1 - (0.5 + 0.25)/2 = 0.625
	# turn 2: s0 1 - 0.5 = 0.5; s1 0.5 - 1 = -0.5.  turn 3: alone: the return itself, 1 (Dr.Kernel).
	leap-advantage -e trloo --gamma 0.5 "$F/multiturn.jsonl" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 -0.125" "1/1 -0.5" "2/1 0.625" "0/2 0.5" "1/2 -0.5" "1/3 1"
	# default gamma 1 (Dr.Kernel's): every return is 1: 0 where others share the turn, 1 alone
	run -0 jq -r .advantage <(leap-advantage -e trloo "$F/multiturn.jsonl")
	assert_output "$(printf '0\n0\n0\n0\n0\n1')"
}

@test "leap-advantage: reward presets binary, kevin and kernelgym" {
	# presets.jsonl: s0 pass speedup 2; s1 pass, no bench; s2 mismatch (speedup 3 ignored);
	# s3 pass speedup 1.005. dr-grpo shows r - mean.
	# binary 1, 1, 0, 1: mean 0.75 -> 0.25, 0.25, -0.75, 0.25
	leap-advantage -e dr-grpo -r binary "$F/presets.jsonl" >"$T/b"
	expect "$T/b" .sample "0 0.25" "1 0.25" "2 -0.75" "3 0.25"
	# kevin 0.3 + 2 = 2.3, 0.3, 0, 0.3 + 1.005 = 1.305: mean 0.97625
	leap-advantage -e dr-grpo -r kevin "$F/presets.jsonl" >"$T/k"
	expect "$T/k" .sample "0 1.32375" "1 -0.67625" "2 -0.97625" "3 0.32875"
	# kernelgym 1, 0.5, 0, 0.5 (1.005 < 1.01): mean 0.5
	leap-advantage -e dr-grpo -r kernelgym "$F/presets.jsonl" >"$T/g"
	expect "$T/g" .sample "0 0.5" "1 0" "2 -0.5" "3 0"
	# kernelgym-speedup 0.5 + 0.5*min(2, 3) = 1.5; 0.5; 0; 0.5 + 0.5*1.005 = 1.0025: mean
	# 3.0025 / 4 = 0.750625
	leap-advantage -e dr-grpo -r kernelgym-speedup "$F/presets.jsonl" >"$T/gs"
	expect "$T/gs" .sample "0 0.749375" "1 -0.250625" "2 -0.750625" "3 0.251875"
}

@test "leap-advantage: --scale group and batch" {
	# rloo, scaled by its group's std: g1 std 0.408248290463863 -> 0.666666666666667 / (0.408248290463863 + 1e-6);
	# g2 alone: 0.7 / (1 + 1e-6) (verl's std of one)
	leap-advantage -e rloo --scale group "$F/scalar.jsonl" >"$T/rg"
	expect "$T/rg" '.group + "/\(.sample)"' "g1/0 1.632989161865251" "g1/1 -1.632989161865251" "g1/2 0" "g1/3 0" \
		"g2/0 0.6999993000007" "g3/0 0" "g3/1 0" "g3/2 0"
	# batch (TRL's scale_rewards="batch", epsilon 1e-4): dr-grpo's values divided by the std of
	# all 8 rewards, 0.804340901430659 (computed here independently) + 1e-4:
	# 0.5 / 0.804440901430659 = 0.621549698816624; g2 alone 0.7 / ... = 0.870169578343274
	sd=$(python3 -c 'import statistics; print(repr(statistics.stdev([1, 2, 0, 0.7, 2, 0.5, 2, 0.5])))')
	leap-advantage -e dr-grpo --scale batch "$F/scalar.jsonl" >"$T/bt"
	expect "$T/bt" '.group + "/\(.sample)"' "g1/0 $(python3 -c "print(0.5 / ($sd + 1e-4))")" \
		"g1/1 $(python3 -c "print(-0.5 / ($sd + 1e-4))")" "g1/2 0" "g1/3 0" "g2/0 0.870169578343274" "g3/0 0" "g3/1 0" "g3/2 0"
	[ "$(python3 -c "print(round(0.5 / ($sd + 1e-4), 12))")" = 0.621549698817 ]
}

@test "leap-advantage: --stats reports mean, std and the share of zero-signal groups" {
	run -0 --separate-stderr leap-advantage -e dr-grpo --stats "$F/scalar.jsonl"
	# advantages 0.5, -0.5, 0.7 (g2 alone keeps its reward) and five zeros: mean 0.7 / 8 =
	# 0.0875; std sqrt((0.4125^2 + 0.5875^2 + 0.6125^2 + 5 * 0.0875^2) / 7) = 0.364251; only g3
	# is all zero
	[[ "$stderr" == *"dr-grpo: 8 advantages, mean 0.0875, std 0.364251; 3 groups, 1 with every advantage zero (33.3%); 0 errors"* ]]
}

@test "leap-advantage: --group-size computes a group once its trajectories have ended" {
	mkfifo "$T/fifo"
	{ head -n 5 "$F/multiturn.jsonl"; sleep 5; tail -n 1 "$F/multiturn.jsonl"; } >"$T/fifo" &
	writer=$!
	# 3 trajectories: only 2 have ended after 5 lines, so nothing may come out yet; the
	# program must still be waiting when stopped (124), not have crashed or ended
	local st=0
	timeout 2 leap-advantage -e kevin --group-size 3 <"$T/fifo" >"$T/out" || st=$?
	kill "$writer" 2>/dev/null || true
	[ "$st" -eq 124 ]
	[ ! -s "$T/out" ]
	# all 6 lines, the writer still open: the group comes out before the end of input
	# (the input is held open until they came out, until_lines)
	mkfifo "$T/fifo2"
	{ cat "$F/multiturn.jsonl"; until_lines "$T/out2" 6; } >"$T/fifo2" &
	writer=$!
	leap-advantage -e kevin --group-size 3 <"$T/fifo2" >"$T/out2"
	wait "$writer"
	[ "$(wc -l <"$T/out2")" -eq 6 ]
}

@test "leap-advantage: records without what the estimator needs become error records" {
	{ cat "$F/scalar.jsonl"; printf '%s\n' '{"group":"g1","sample":4,"reward":"high"}' 'not json'; } >"$T/in"
	run -1 --separate-stderr leap-advantage -e dr-grpo "$T/in"
	echo "$output" >"$T/out"
	[ "$(wc -l <"$T/out")" -eq 10 ]
	# from a file, records keep their input order
	run -0 jq -r 'select(.error) | .error.line' "$T/out"
	assert_output "$(printf '9\n10')"
	# from a pipe, the malformed line comes out at once, the held group at the end of input
	run -0 jq -r 'select(.error) | .error.line' <(cat "$T/in" | leap-advantage -e dr-grpo 2>/dev/null)
	assert_output "$(printf '10\n9')"
	# the others are computed without the bad record: g1 still 0.5, -0.5, 0, 0
	run -0 jq -r 'select(.group == "g1" and (.error | not)) | .advantage' "$T/out"
	assert_output "$(printf '0.5\n-0.5\n0\n0')"
	# rank needs rank.score
	run -1 --separate-stderr leap-advantage "$F/scalar.jsonl"
	[[ "$stderr" == *"no rank.score (run leap-rank first)"* ]]
	# rewards so large the arithmetic overflows: error records, no infinity
	printf '{"group":"big","sample":0,"reward":1.7e308}\n{"group":"big","sample":1,"reward":1.6e308}\n' >"$T/big"
	run -1 --separate-stderr leap-advantage -e grpo "$T/big"
	[ "$(echo "$output" | jq -r 'has("advantage")' | sort -u)" = false ]
}

@test "leap-advantage: records pass through byte for byte with advantage appended" {
	leap-advantage -e rloo "$F/multiturn.jsonl" >"$T/out"
	python3 - "$F/multiturn.jsonl" "$T/out" <<'EOF'
import sys, json
src = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    src[(r["sample"], r["turn"])] = line.rstrip("\n")
for line in open(sys.argv[2]):
    line = line.rstrip("\n")
    r = json.loads(line)
    assert line.startswith(src[(r["sample"], r["turn"])][:-1] + ',"advantage":'), line
EOF
	# an existing advantage is replaced, not duplicated
	leap-advantage -e rloo "$T/out" >"$T/again"
	diff <(jq -c . "$T/out") <(jq -c . "$T/again")
}

@test "leap-advantage: file (two passes), pipe (held) and --group-size (streamed) agree for every estimator" {
	"$ROOT/bench/gen-records" --records 1500 --mode done --seed 4 >"$T/done"
	for e in grpo dr-grpo rloo kevin trloo turn-mean; do
		leap-advantage -e "$e" -r kevin "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn, .advantage]' | sort >"$T/a"
		cat "$T/done" | leap-advantage -e "$e" -r kevin 2>/dev/null | jq -c '[.group, .sample, .turn, .advantage]' | sort >"$T/b"
		leap-advantage -e "$e" -r kevin -g 16 "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn, .advantage]' | sort >"$T/c"
		[ "$(wc -l <"$T/a")" -eq 1500 ]
		diff "$T/a" "$T/b"
		diff "$T/a" "$T/c"
		# and the file mode keeps the input order
		diff <(jq -c '[.group, .sample, .turn]' "$T/done") <(leap-advantage -e "$e" -r kevin "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn]')
	done
	# a batch scale too (the batch std sums the groups in another order: equal to 1e-12)
	diff <(leap-advantage -e grpo -r binary --scale batch "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn, (.advantage * 1e12 | round)]' | sort) \
		<(cat "$T/done" | leap-advantage -e grpo -r binary --scale batch 2>/dev/null | jq -c '[.group, .sample, .turn, (.advantage * 1e12 | round)]' | sort)
}

@test "a whole rollout: leap-prompt, 3 turns of leap-prune, leap-rank, leap-advantage" {
	cd "$T"
	leap-prompt --group-size 4 --backend cpu vector_add softmax matmul >turn.jsonl
	# The "sampler and verifier": vector_add always passes, matmul never compiles, softmax
	# sample s passes from turn s + 1 on (sample 3 never within 3 turns).
	for t in 1 2 3; do
		jq -c '.completion = "```c\n/* turn \(.turn) */\n```"
			| .status = (if .task == "vector_add" then "pass"
				elif .task == "matmul" then "compile_error"
				elif .turn >= .sample + 1 then "pass" else "mismatch" end)
			| if .status == "compile_error" then .compile = {status: "error", diagnostics: [{line: 1, col: 1, severity: "error", message: "x"}]}
			  elif .status == "mismatch" then .verify = {status: "mismatch", message: "element 3: got 1, want 2"} else . end' \
			turn.jsonl >verified.jsonl
		leap-prune --max-turns 3 --done done.jsonl verified.jsonl >turn.jsonl
	done
	# softmax: turn 1 n_fail 3 of 4 (3 < 2 no, 3 > G-1 = 3 no) -> expand, decided once: its
	# failures go on to turn 2 and 3 (the last ends with max_turns). vector_add: n_fail 0 ->
	# easy. matmul: 4 of 4 failed, 4 > 3 -> hopeless.
	[ ! -s turn.jsonl ]
	[ "$(wc -l <done.jsonl)" -eq 17 ]
	run -0 jq -r 'select(.task == "softmax") | "\(.sample) \(.turn) \(.prune.decision) \(.prune.reason)"' done.jsonl
	assert_output "$(printf '%s\n' "0 1 final solved" "1 1 expand failed" "2 1 expand failed" "3 1 expand failed" \
		"1 2 final solved" "2 2 expand failed" "3 2 expand failed" "2 3 final solved" "3 3 final max_turns")"
	# every trajectory has exactly one final record
	run -0 jq -s -c 'map(select(.prune.decision == "final")) | group_by([.group, .sample]) | map(length) | unique' done.jsonl
	assert_output '[1]'
	# the turn-3 user message holds both feedbacks
	run -0 jq -r 'select(.task == "softmax" and .sample == 3 and .turn == 3) | [.messages[] | select(.role == "user")] | length' done.jsonl
	assert_output 3
	# softmax ranks: s0 (turn 1) beats all: 1; s1 (turn 2): (2 - 1)/3; s2 (turn 3): (1 - 2)/3; s3 (never): -1.
	# vector_add: all solved at turn 1, ties: 0. matmul: none solved: 0.
	# advantages, gamma 0.4: s1's 1/3 at turn 1 is 1/3 * 0.4 = 0.133333333333333.
	leap-rank <done.jsonl | leap-advantage >train.jsonl
	expect train.jsonl '"\(.task)/\(.sample)/\(.turn)"' \
		"softmax/0/1 1" "softmax/1/1 0.133333333333333" "softmax/1/2 0.333333333333333" \
		"softmax/2/1 -0.333333333333333" "softmax/2/2 -0.333333333333333" "softmax/2/3 -0.333333333333333" \
		"softmax/3/1 -1" "softmax/3/2 -1" "softmax/3/3 -1" \
		"vector_add/0/1 0" "vector_add/1/1 0" "vector_add/2/1 0" "vector_add/3/1 0" \
		"matmul/0/1 0" "matmul/1/1 0" "matmul/2/1 0" "matmul/3/1 0"
}

# Issue 15 -------------------------------------------------------------------------------

@test "leap-advantage: --preset leap, grpo-mt, kevin, drkernel are their flags; flags override" {
	leap-rank "$FIXTURES/leap-rank/story.jsonl" >"$T/ranked"
	# leap: rank with gamma 0.4, the default
	diff <(leap-advantage --preset leap "$T/ranked") <(leap-advantage -e rank --gamma 0.4 "$T/ranked")
	diff <(leap-advantage --preset leap "$T/ranked") <(leap-advantage "$T/ranked")
	# grpo-mt: grpo on the binary outcome, group scale
	diff <(leap-advantage --preset grpo-mt "$T/ranked") <(leap-advantage -e grpo -r binary --scale group "$T/ranked")
	# kevin: Kevin-32B's reward 0.3 [pass] + speedup, gamma 0.4, normalised over the group
	diff <(leap-advantage --preset kevin "$T/ranked") <(leap-advantage -e kevin -r kevin --gamma 0.4 --scale group "$T/ranked")
	# drkernel: TRLOO on KernelGYM's continuous reward, gamma 1, unscaled
	diff <(leap-advantage --preset drkernel "$T/ranked") <(leap-advantage -e trloo -r kernelgym-speedup --gamma 1 --scale none "$T/ranked")
	# a flag overrides the preset, wherever it stands
	diff <(leap-advantage --gamma 0.9 --preset kevin "$T/ranked") <(leap-advantage -e kevin -r kevin --gamma 0.9 "$T/ranked")
	diff <(leap-advantage --preset drkernel -r binary "$T/ranked") <(leap-advantage -e trloo -r binary --gamma 1 "$T/ranked")
	# and the numbers of one: A's group under drkernel. Rewards (speedups ok): A s0 t1
	# compile_error 0, t2 pass 0.5 + 0.5*1.2 = 1.1; s1 0, 0, 0; s2 0, 0, 0; s3 0. gamma 1.
	# Returns: s0 t1 1.1, t2 1.1; the others 0. Turn 1 (4 trajectories): s0 1.1 - 0 = 1.1,
	# the others 0 - 1.1/3 = -0.366666666666667. Turn 2 (s0, s1, s2): 1.1, -0.55, -0.55.
	# Turn 3 (s1, s2): 0 - 0 = 0.
	leap-advantage --preset drkernel "$T/ranked" | jq -c 'select(.group == "A")' >"$T/a"
	expect "$T/a" '"\(.sample)/\(.turn)"' "0/1 1.1" "1/1 -0.366666666666667" "2/1 -0.366666666666667" \
		"3/1 -0.366666666666667" "0/2 1.1" "1/2 -0.55" "2/2 -0.55" "1/3 0" "2/3 0"
	run -2 --separate-stderr leap-advantage --preset kevin -e trloo </dev/null
	[[ "$stderr" == *"--preset and --estimator exclude each other"* ]]
	run -2 --separate-stderr leap-advantage --preset ppo </dev/null
	[[ "$stderr" == *"--preset: 'ppo' is not leap, grpo-mt, kevin or drkernel"* ]]
}

@test "leap-advantage: kernelgym-speedup caps the speedup at 3; speedups count only from ok timings" {
	# s0 pass 5.0 (ok): 0.5 + 0.5*3 = 2. s1 pass 2.0 noisy: 0.5 + 0 = 0.5. s2 pass 2.0
	# suspicious: 0.5. s3 pass 2.0 with no status: 0.5. mean (2 + 1.5)/4 = 0.875.
	printf '%s\n' '{"group":"k","sample":0,"status":"pass","bench":{"status":"ok","speedup":5.0}}' \
		'{"group":"k","sample":1,"status":"pass","bench":{"status":"noisy","speedup":2.0}}' \
		'{"group":"k","sample":2,"status":"pass","bench":{"status":"suspicious","speedup":2.0}}' \
		'{"group":"k","sample":3,"status":"pass","bench":{"speedup":2.0}}' >"$T/in"
	run -0 --separate-stderr leap-advantage -e dr-grpo -r kernelgym-speedup "$T/in"
	expect <(echo "$output") .sample "0 1.125" "1 -0.375" "2 -0.375" "3 -0.375"
	[[ "$stderr" == *"3 passing records have a timing whose bench.status is not \"ok\" (noisy, suspicious or missing): the reward counts their speedup as 0"* ]]
	# kevin: 0.3 + 5 = 5.3, then 0.3 three times: mean 6.2 / 4 = 1.55
	run -0 --separate-stderr leap-advantage -e dr-grpo -r kevin "$T/in"
	expect <(echo "$output") .sample "0 3.75" "1 -1.25" "2 -1.25" "3 -1.25"
	# a reward that does not use speed says nothing
	run -0 --separate-stderr leap-advantage -e dr-grpo -r binary "$T/in"
	[ -z "$stderr" ]
}

@test "leap-advantage: speed rewards tie where the speedup intervals overlap" {
	# s0 1.10 [1.05, 1.15] and s1 1.12 [1.08, 1.16] overlap: one speedup for both, their
	# geometric mean sqrt(1.232) = 1.1099549; s2 1.50 [1.45, 1.55] stands alone; s3 fails.
	# kevin: 1.4099549 twice, 1.8, 0: mean 4.6199099 / 4 = 1.1549775
	printf '%s\n' '{"group":"t","sample":0,"status":"pass","bench":{"status":"ok","speedup":1.10,"speedup_ci":[1.05,1.15]}}' \
		'{"group":"t","sample":1,"status":"pass","bench":{"status":"ok","speedup":1.12,"speedup_ci":[1.08,1.16]}}' \
		'{"group":"t","sample":2,"status":"pass","bench":{"status":"ok","speedup":1.50,"speedup_ci":[1.45,1.55]}}' \
		'{"group":"t","sample":3,"status":"mismatch"}' >"$T/in"
	for mode in file pipe streamed; do
		case $mode in
		file) leap-advantage -e dr-grpo -r kevin "$T/in" >"$T/out" ;;
		pipe) leap-advantage -e dr-grpo -r kevin <"$T/in" >"$T/out" ;;
		streamed) leap-advantage -e dr-grpo -r kevin --group-size 4 <"$T/in" >"$T/out" ;;
		esac
		run -0 jq -r '.advantage * 1e6 | round' "$T/out"
		assert_output "$(printf '%s\n' 254977 254977 645023 -1154977)"
	done
	# without intervals (records of leap 0.1) each keeps its own: 1.4, 1.42, 1.8, 0
	jq -c 'del(.bench.speedup_ci)' "$T/in" >"$T/old"
	run -0 jq -r '.advantage * 1e6 | round' <<<"$(leap-advantage -e dr-grpo -r kevin "$T/old")"
	assert_output "$(printf '%s\n' 245000 265000 645000 -1155000)"
	# kernelgym (a bonus from 1.01): the tie decides for both at once
	run -0 jq -r '.advantage' <<<"$(leap-advantage -e dr-grpo -r kernelgym "$T/in")"
	assert_output "$(printf '%s\n' 0.25 0.25 0.25 -0.75)"
}

@test "leap-advantage: a second record of a (group, sample, turn) is an error record naming the first" {
	# g: s0 reward 1, s1 reward 0, and s1 again (line 3, reward 5: a re-run). Counted once:
	# dr-grpo on {1, 0}: 0.5, -0.5. From a file, a pipe and with --group-size.
	printf '%s\n' '{"group":"g","sample":0,"turn":1,"reward":1}' '{"group":"g","sample":1,"turn":1,"reward":0}' \
		'{"group":"g","sample":1,"turn":1,"reward":5}' >"$T/in"
	run -1 --separate-stderr leap-advantage -e dr-grpo "$T/in"
	[[ "$stderr" == *"$T/in:3: a second record of group 'g', sample 1, turn 1 (the first is $T/in:2); it takes no part"* ]]
	[ "$(echo "$output" | jq -c '[.sample, .advantage, .error.line]' | tr '\n' ' ')" = '[0,0.5,null] [1,-0.5,null] [1,null,3] ' ]
	run -1 --separate-stderr bash -c 'cat "$1" | leap-advantage -e dr-grpo' _ "$T/in"
	[[ "$stderr" == *"<stdin>:3: a second record of group 'g', sample 1, turn 1 (the first is <stdin>:2)"* ]]
	[ "$(echo "$output" | jq -c '[.sample, .advantage, .error.line]' | sort | tr '\n' ' ')" = '[0,0.5,null] [1,-0.5,null] [1,null,3] ' ]
	# streamed: found while the group is open (-g 3: the group waits for a third trajectory,
	# so the duplicate arrives before it is written; it is then cut short by the end of input)
	run -1 --separate-stderr leap-advantage -e dr-grpo -g 3 "$T/in"
	[[ "$stderr" == *"a second record of group 'g', sample 1, turn 1"* ]]
	[ "$(echo "$output" | jq -c '[.sample, .advantage, .error.line]' | sort | tr '\n' ' ')" = '[0,0.5,null] [1,-0.5,null] [1,null,3] ' ]
	# a turn repeated across a multi-turn trajectory: kevin counts s1's turn 2 once
	{ cat "$F/multiturn.jsonl"; sed -n 5p "$F/multiturn.jsonl"; } >"$T/mt"
	run -1 --separate-stderr leap-advantage -e kevin "$T/mt"
	diff <(echo "$output" | head -n 6) <(leap-advantage -e kevin "$F/multiturn.jsonl")
	[ "$(echo "$output" | tail -n 1 | jq -r .error.line)" = 7 ]
}

@test "leap-advantage: a record carrying an upstream error is written unchanged and takes no part" {
	# leap-rank turned a duplicate into an error record (no rank): rank writes it as it came
	printf '%s\n' '{"group":"g","sample":0,"rank":{"score":1,"turns":1}}' \
		'{"group":"g","sample":0,"error":{"program":"leap-rank","file":"done","line":9,"message":"a second record"}}' >"$T/in"
	run -1 --separate-stderr leap-advantage "$T/in"
	[ "$(echo "$output" | sed -n 2p)" = "$(sed -n 2p "$T/in")" ]
	[ -z "$stderr" ]
	# the scalar estimators too: the error record's reward is not counted (dr-grpo over {1, 0})
	printf '%s\n' '{"group":"h","sample":0,"reward":1}' '{"group":"h","sample":1,"reward":0}' \
		'{"group":"h","sample":2,"reward":7,"error":{"program":"x","message":"bad"}}' >"$T/in2"
	run -1 leap-advantage -e dr-grpo "$T/in2"
	[ "$(echo "$output" | sed -n 3p)" = "$(sed -n 3p "$T/in2")" ]
	[ "$(echo "$output" | head -n 2 | jq -r .advantage | tr '\n' ' ')" = "0.5 -0.5 " ]
}
