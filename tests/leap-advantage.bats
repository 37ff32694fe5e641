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
	# story: A s0 score 1, turns 2; A s1..s3 -1/3; B s0 -1; B s1, s3 0; B s2 1 (turns 1).
	# gamma 1: every record gets its trajectory's score.
	leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage >"$T/g1"
	expect "$T/g1" '.group + "/\(.sample)/\(.turn)"' \
		"A/0/1 1" "A/0/2 1" "A/1/1 -0.333333333333333" "A/1/2 -0.333333333333333" "A/1/3 -0.333333333333333" \
		"A/2/1 -0.333333333333333" "A/2/2 -0.333333333333333" "A/2/3 -0.333333333333333" "A/3/1 -0.333333333333333" \
		"B/0/1 -1" "B/0/2 -1" "B/1/1 0" "B/2/1 1" "B/3/1 0"
	# gamma 0.5: A s0 turn 1 = 1 * 0.5^(2-1) = 0.5; negative ones stay on every turn.
	leap-rank "$FIXTURES/leap-rank/story.jsonl" | leap-advantage --gamma 0.5 >"$T/g5"
	expect "$T/g5" '.group + "/\(.sample)/\(.turn)"' \
		"A/0/1 0.5" "A/0/2 1" "A/1/1 -0.333333333333333" "A/1/2 -0.333333333333333" "A/1/3 -0.333333333333333" \
		"A/2/1 -0.333333333333333" "A/2/2 -0.333333333333333" "A/2/3 -0.333333333333333" "A/3/1 -0.333333333333333" \
		"B/0/1 -1" "B/0/2 -1" "B/1/1 0" "B/2/1 1" "B/3/1 0"
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
	# g2 is a group of one: 0.  g3 rewards 2, 2, 2 (zero variance): 0 for all.
	leap-advantage -e grpo "$F/scalar.jsonl" >"$T/grpo"
	expect "$T/grpo" '.group + "/\(.sample)"' "g1/0 1.224741871398938" "g1/1 -1.224741871398938" "g1/2 0" "g1/3 0" \
		"g2/0 0" "g3/0 0" "g3/1 0" "g3/2 0"
	leap-advantage -e dr-grpo "$F/scalar.jsonl" >"$T/dr"
	expect "$T/dr" '.group + "/\(.sample)"' "g1/0 0.5" "g1/1 -0.5" "g1/2 0" "g1/3 0" "g2/0 0" "g3/0 0" "g3/1 0" "g3/2 0"
	leap-advantage -e rloo "$F/scalar.jsonl" >"$T/rloo"
	expect "$T/rloo" '.group + "/\(.sample)"' "g1/0 0.666666666666667" "g1/1 -0.666666666666667" "g1/2 0" "g1/3 0" \
		"g2/0 0" "g3/0 0" "g3/1 0" "g3/2 0"
	# grpo with --scale none is dr-grpo
	diff <(jq -c .advantage "$T/dr") <(leap-advantage -e grpo --scale none "$F/scalar.jsonl" | jq -c .advantage)
}

@test "leap-advantage: zero variance and groups of one give exactly 0, never NaN" {
	# 0.1 three times: a computed mean is 0.10000000000000002, yet the advantage must be 0
	printf '{"group":"z","sample":%d,"reward":0.1}\n' 0 1 2 >"$T/in"
	printf '{"group":"one","sample":0,"reward":5}\n' >>"$T/in"
	for e in grpo dr-grpo rloo kevin trloo; do
		run -0 jq -r .advantage <(leap-advantage -e "$e" "$T/in")
		assert_output "$(printf '0\n0\n0\n0')"
	done
	run -0 jq -r .advantage <(leap-advantage -e grpo --scale batch "$T/in")
	assert_output "$(printf '0\n0\n0\n0')"
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

@test "leap-advantage: kevin: discounted returns against the mean of the same turn" {
	# rewards: s0: t1 0, t2 1; s1: t1 0, t2 0, t3 1; s2: t1 1. gamma 0.4.
	# returns: s0: G1 = 0 + 0.4*1 = 0.4, G2 = 1. s1: G3 = 1, G2 = 0.4, G1 = 0.16. s2: G1 = 1.
	# turn 1: {0.4, 0.16, 1}, mean 0.52: -0.12, -0.36, 0.48
	# turn 2: {1, 0.4}, mean 0.7: 0.3, -0.3.  turn 3: {1}: 0.
	leap-advantage -e kevin "$F/multiturn.jsonl" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 -0.12" "1/1 -0.36" "2/1 0.48" "0/2 0.3" "1/2 -0.3" "1/3 0"
}

@test "leap-advantage: trloo: returns against the leave-one-out mean of the same turn" {
	# gamma 0.5: s0: G1 = 0.5, G2 = 1. s1: G3 = 1, G2 = 0.5, G1 = 0.25. s2: G1 = 1.
	# turn 1: s0 0.5 - (0.25 + 1)/2 = -0.125; s1 0.25 - (0.5 + 1)/2 = -0.5; s2 1 - (0.5 + 0.25)/2 = 0.625
	# turn 2: s0 1 - 0.5 = 0.5; s1 0.5 - 1 = -0.5.  turn 3: alone: 0.
	leap-advantage -e trloo --gamma 0.5 "$F/multiturn.jsonl" >"$T/out"
	expect "$T/out" '"\(.sample)/\(.turn)"' "0/1 -0.125" "1/1 -0.5" "2/1 0.625" "0/2 0.5" "1/2 -0.5" "1/3 0"
	# default gamma 1: every return is 1: all 0
	run -0 jq -r .advantage <(leap-advantage -e trloo "$F/multiturn.jsonl")
	assert_output "$(printf '0\n0\n0\n0\n0\n0')"
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
}

@test "leap-advantage: --scale group and batch" {
	# rloo, scaled by its group's std: g1 std 0.408248290463863 -> 0.666666666666667 / (0.408248290463863 + 1e-6)
	leap-advantage -e rloo --scale group "$F/scalar.jsonl" >"$T/rg"
	expect "$T/rg" '.group + "/\(.sample)"' "g1/0 1.632989161865251" "g1/1 -1.632989161865251" "g1/2 0" "g1/3 0" \
		"g2/0 0" "g3/0 0" "g3/1 0" "g3/2 0"
	# batch: dr-grpo's values divided by the std of all 8 rewards, computed here independently
	sd=$(python3 -c 'import statistics; print(repr(statistics.stdev([1, 2, 0, 0.7, 2, 0.5, 2, 0.5])))')
	leap-advantage -e dr-grpo --scale batch "$F/scalar.jsonl" >"$T/bt"
	expect "$T/bt" '.group + "/\(.sample)"' "g1/0 $(python3 -c "print(0.5 / ($sd + 1e-6))")" \
		"g1/1 $(python3 -c "print(-0.5 / ($sd + 1e-6))")" "g1/2 0" "g1/3 0" "g2/0 0" "g3/0 0" "g3/1 0" "g3/2 0"
}

@test "leap-advantage: --stats reports mean, std and the share of zero-signal groups" {
	run -0 --separate-stderr leap-advantage -e dr-grpo --stats "$F/scalar.jsonl"
	# advantages 0.5, -0.5 and six zeros: mean 0, std sqrt(0.5 / 7) = 0.267261; g2 and g3 are all zero
	[[ "$stderr" == *"dr-grpo: 8 advantages, mean 0, std 0.267261; 3 groups, 2 with every advantage zero (66.7%); 0 errors"* ]]
}

@test "leap-advantage: --group-size computes a group once its trajectories have ended" {
	mkfifo "$T/fifo"
	{ head -n 5 "$F/multiturn.jsonl"; sleep 5; tail -n 1 "$F/multiturn.jsonl"; } >"$T/fifo" &
	writer=$!
	# 3 trajectories: only 2 have ended after 5 lines, so nothing may come out yet
	timeout 2 leap-advantage -e kevin --group-size 3 <"$T/fifo" >"$T/out" || true
	kill "$writer" 2>/dev/null || true
	[ ! -s "$T/out" ]
	# all 6 lines, the writer still open: the group comes out before the end of input
	mkfifo "$T/fifo2"
	{ cat "$F/multiturn.jsonl"; sleep 5; } >"$T/fifo2" &
	writer=$!
	timeout 2 leap-advantage -e kevin --group-size 3 <"$T/fifo2" >"$T/out2" || true
	kill "$writer" 2>/dev/null || true
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
	for e in grpo dr-grpo rloo kevin trloo; do
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
	# softmax: turn 1 n_fail 3 of 4 -> expand; turn 2 n_fail 2 of 3 -> expand; turn 3 max_turns
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
	leap-rank <done.jsonl | leap-advantage >train.jsonl
	expect train.jsonl '"\(.task)/\(.sample)/\(.turn)"' \
		"softmax/0/1 1" "softmax/1/1 0.333333333333333" "softmax/1/2 0.333333333333333" \
		"softmax/2/1 -0.333333333333333" "softmax/2/2 -0.333333333333333" "softmax/2/3 -0.333333333333333" \
		"softmax/3/1 -1" "softmax/3/2 -1" "softmax/3/3 -1" \
		"vector_add/0/1 0" "vector_add/1/1 0" "vector_add/2/1 0" "vector_add/3/1 0" \
		"matmul/0/1 0" "matmul/1/1 0" "matmul/2/1 0" "matmul/3/1 0"
}
