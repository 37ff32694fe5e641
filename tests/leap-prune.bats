# leap-prune.bats - Difficulty-Conditioned Pruning: verdicts, thresholds, feedback, done file, streaming.
load helpers

F="$FIXTURES/leap-prune"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# group NAME TURN STATUS...: one record per status, samples 0.., in group NAME at TURN.
group() {
	local name=$1 turn=$2 s=0 st
	shift 2
	for st in "$@"; do
		printf '{"task":"softmax","group":"%s","sample":%d,"turn":%d,"messages":[{"role":"user","content":"go"}],"completion":"c%d","status":"%s"}\n' \
			"$name" "$s" "$turn" "$s" "$st"
		s=$((s + 1))
	done
}

# verdict FILE: prints the verdicts of the records of FILE (annotated), one per line.
verdicts() {
	jq -r '.prune.verdict' "$1" | sort -u | tr '\n' ' '
}

@test "leap-prune: --help, --version, bad option, no destination" {
	run -0 leap-prune --help
	assert_line --index 0 "usage: leap-prune [OPTION]... --done FILE [FILE]..."
	run -0 leap-prune --version
	assert_output --regexp '^leap-prune \(leap\) [0-9]'
	run -2 --separate-stderr leap-prune --annotate --bogus
	run -2 --separate-stderr leap-prune </dev/null
	[[ "$stderr" == *"--done FILE, or --annotate"* ]]
	run -2 --separate-stderr leap-prune --annotate --easy-below 1.5 </dev/null
	[[ "$stderr" == *"--easy-below: '1.5'"* ]]
	run -2 --separate-stderr leap-prune --annotate --catastrophic pass </dev/null
	run -2 --separate-stderr leap-prune --annotate --catastrophic nonsense </dev/null
}

@test "leap-prune: a group to expand, an easy one and a hopeless one" {
	# softmax: 4 records, 3 fail; T_easy = 0.5*4 = 2; 3 < 2 is false -> expand.
	# vector_add: 2 pass, n_fail 0 < 1 -> easy.  matmul: compile_error + no_code, all
	# catastrophic -> hopeless.
	run -0 leap-prune --annotate "$F/turn1.jsonl"
	echo "$output" >"$T/out"
	run -0 jq -r '[.group, .sample, .prune.decision, .prune.reason, .prune.verdict, .prune.n_fail, .prune.group_size, .prune.complete] | @tsv' "$T/out"
	assert_output "$(printf '%s\n' \
		"softmax	0	final	solved	expand	3	4	true" \
		"softmax	1	expand	failed	expand	3	4	true" \
		"softmax	2	expand	failed	expand	3	4	true" \
		"softmax	3	expand	failed	expand	3	4	true" \
		"vector_add	0	final	easy	easy	0	2	true" \
		"vector_add	1	final	easy	easy	0	2	true" \
		"matmul	0	final	hopeless	hopeless	2	2	true" \
		"matmul	1	final	hopeless	hopeless	2	2	true")"
}

@test "leap-prune: every input record lands in the done file exactly once, next turns on stdout" {
	run -0 --separate-stderr leap-prune --done "$T/done" "$F/turn1.jsonl"
	echo "$output" >"$T/next"
	# done: the 8 input records, each once, in decision order
	[ "$(wc -l <"$T/done")" -eq 8 ]
	diff <(jq -c '[.group, .sample]' "$F/turn1.jsonl" | sort) <(jq -c '[.group, .sample]' "$T/done" | sort)
	# stdout: exactly the records decided expand, at turn 2
	diff <(jq -c 'select(.prune.decision == "expand") | [.group, .sample, .turn + 1]' "$T/done") \
		<(jq -c '[.group, .sample, .turn]' "$T/next")
	# the done file is appended to, never truncated: another turn's records join the 8
	jq -c '.turn = 2 | .dcp = {verdict: "expand", turn: 1, n_fail: 3, group_size: 4}' "$F/turn1.jsonl" >"$T/turn2"
	leap-prune --done "$T/done" "$T/turn2" >/dev/null
	[ "$(wc -l <"$T/done")" -eq 16 ]
	[ "$(jq -r .turn "$T/done" | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')" = "8x1 8x2 " ]
}

@test "leap-prune: decided records keep their raw text byte for byte, prune appended" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >/dev/null
	python3 - "$F/turn1.jsonl" "$T/done" <<'EOF'
import sys, json
src = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    src[(r["group"], r["sample"])] = line.rstrip("\n")
for line in open(sys.argv[2]):
    line = line.rstrip("\n")
    r = json.loads(line)
    raw = src[(r["group"], r["sample"])]
    assert line.startswith(raw[:-1] + ',"prune":{'), (raw, line)
    assert list(r.keys())[-1] == "prune"
EOF
}

@test "leap-prune: the next-turn record: history, feedback, this turn's results dropped, own fields kept" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >"$T/next"
	run -0 jq -c 'select(.sample == 1)' "$T/next"
	echo "$output" >"$T/s1"
	# kept: step (a field leap does not own), task, group, sample; turn + 1
	run -0 jq -c '[.step, .task, .group, .sample, .turn, .group_size]' "$T/s1"
	assert_output '[7,"softmax","softmax",1,2,3]'
	# dropped: this turn's results
	run -0 jq -c '[has("completion"), has("status"), has("compile"), has("tokens"), has("prune")]' "$T/s1"
	assert_output '[false,false,false,false,false]'
	# messages: the two of turn 1, the assistant's completion, the feedback as the user's turn
	run -0 jq -c '[.messages[].role]' "$T/s1"
	assert_output '["system","user","assistant","user"]'
	run -0 jq -r '.messages[2].content' "$T/s1"
	assert_output "$(jq -r 'select(.sample == 1 and .group == "softmax") | .completion' "$F/turn1.jsonl")"
	run -0 jq -r '.messages[3].content == .feedback' "$T/s1"
	assert_output true
}

@test "leap-prune: feedback names the compiler errors in order with line:col, not the warnings" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >"$T/next"
	run -0 jq -r 'select(.sample == 1) | .feedback' "$T/next"
	assert_output "$(printf '%s\n' \
		"Your code does not compile." \
		"line 1:9: error: expected expression before ';' token" \
		"line 7:2: error: 'n' undeclared" \
		"Reply with the complete corrected code in one fenced code block.")"
}

@test "leap-prune: feedback for a mismatch and a timeout is verify.message" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >"$T/next"
	run -0 jq -r 'select(.sample == 2) | .feedback' "$T/next"
	assert_line --index 0 "Your kernel computes wrong results."
	assert_line --index 1 "case 0 (rows=4, cols=8): element 5 (row 0, col 5): got 0.25, want 0.125"
	run -0 jq -r 'select(.sample == 3) | .feedback' "$T/next"
	assert_line --index 0 "Your kernel did not finish within the time limit."
	assert_line --index 1 "no result after 10 s (wall clock)"
}

@test "leap-prune: a mismatch without a message is described by verify.mismatch" {
	{ group m 1 pass pass; printf '%s\n' '{"group":"m","sample":2,"turn":1,"status":"mismatch","verify":{"mismatch":{"case":1,"index":17,"got":2.5,"want":3}}}' '{"group":"m","sample":3,"turn":1,"status":"timeout"}'; } >"$T/in"
	leap-prune --done "$T/done" "$T/in" >"$T/next"
	run -0 jq -r 'select(.sample == 2) | .feedback' "$T/next"
	assert_line --index 1 "case 1, index 17, got 2.5, want 3"
}

@test "leap-prune: feedback is cut to --feedback-bytes at a character boundary, headline and instruction kept" {
	leap-prune --done "$T/done" --feedback-bytes 200 "$F/long.jsonl" >"$T/next"
	[ "$(wc -l <"$T/next")" -eq 2 ]
	run -0 jq -r '.feedback | utf8bytelength <= 200' "$T/next"
	assert_output "$(printf 'true\ntrue')"
	# the mismatch message (400 times a 2-byte character) uses the room, cut between characters
	run -0 jq -r 'select(.sample == 1) | .feedback | utf8bytelength >= 199' "$T/next"
	assert_output true
	run -0 jq -r 'select(.sample == 1) | .feedback' "$T/next"
	assert_line --index 1 --regexp '^(é)+\.\.\.$'
	# compiler errors are kept whole, then counted
	run -0 jq -r 'select(.sample == 0) | .feedback' "$T/next"
	assert_output "$(printf '%s\n' "Your code does not compile." \
		"line 1:5: error: identifier 'x1' is undefined" "(58 more errors not shown)" \
		"Reply with the complete corrected code in one fenced code block.")"
	# the default, 1024 bytes, holds more of the 59 errors but not all
	leap-prune --done "$T/done" "$F/long.jsonl" >"$T/next"
	run -0 jq -r 'select(.sample == 0) | .feedback | utf8bytelength' "$T/next"
	[ "$output" -le 1024 ] && [ "$output" -ge 950 ]
	run -0 jq -r 'select(.sample == 0) | .feedback' "$T/next"
	assert_line --index 19 "line 19:5: error: identifier 'x19' is undefined"
	assert_line --regexp '^\([0-9]+ more errors not shown\)$'
}

@test "leap-prune: feedback shorter than its headline and instruction is cut whole" {
	leap-prune --done "$T/done" --feedback-bytes 64 "$F/long.jsonl" >"$T/next"
	run -0 jq -r '.feedback | utf8bytelength' "$T/next"
	assert_output "$(printf '64\n64')"
}

@test "leap-prune: easy threshold at its edge (fraction and count)" {
	# 4 records. Default T_easy = 50% of 4 = 2: n_fail = 1 -> easy; n_fail = 2 -> expand.
	group a 1 pass pass pass mismatch >"$T/one"
	group a 1 pass pass mismatch mismatch >"$T/two"
	leap-prune --annotate "$T/one" >"$T/o1"
	leap-prune --annotate "$T/two" >"$T/o2"
	[ "$(verdicts "$T/o1")" = "easy " ]
	[ "$(verdicts "$T/o2")" = "expand " ]
	# As a count: --easy-below 2 is the same; --easy-below 3 makes n_fail = 2 easy.
	leap-prune --annotate --easy-below 2 "$T/two" >"$T/o3"
	[ "$(verdicts "$T/o3")" = "expand " ]
	leap-prune --annotate --easy-below 3 "$T/two" >"$T/o4"
	[ "$(verdicts "$T/o4")" = "easy " ]
	# --easy-below 0 never calls a group easy, even one that all passed: all end as solved.
	group a 1 pass pass >"$T/all"
	leap-prune --annotate --easy-below 0 "$T/all" >"$T/o5"
	[ "$(verdicts "$T/o5")" = "expand " ]
	[ "$(jq -r .prune.reason "$T/o5" | sort -u)" = solved ]
	# 75% of 4 = 3: n_fail 2 < 3 -> easy
	leap-prune --annotate --easy-below 75% "$T/two" >"$T/o6"
	[ "$(verdicts "$T/o6")" = "easy " ]
}

@test "leap-prune: hopeless threshold at its edge" {
	# n_fail = 3 of 4. --hopeless-above 3: 3 > 3 false -> expand; 2 -> hopeless; 0.5 -> 2 -> hopeless.
	group h 1 pass mismatch mismatch timeout >"$T/in"
	leap-prune --annotate --hopeless-above 3 "$T/in" >"$T/o1"
	[ "$(verdicts "$T/o1")" = "expand " ]
	leap-prune --annotate --hopeless-above 2 "$T/in" >"$T/o2"
	[ "$(verdicts "$T/o2")" = "hopeless " ]
	leap-prune --annotate --hopeless-above 0.5 "$T/in" >"$T/o3"
	[ "$(verdicts "$T/o3")" = "hopeless " ]
	leap-prune --annotate --hopeless-above 0.75 "$T/in" >"$T/o4"
	[ "$(verdicts "$T/o4")" = "expand " ]
}

@test "leap-prune: the catastrophic rule (off by default): all failed without compiling" {
	# 4 records, 1 pass, 3 compile errors or no code. Default: n_fail 3 > T_max = G-1 = 3 is
	# false and 3 < 2 (easy) is false -> expand: the paper's rule counts failures, not their kind.
	group c 1 pass compile_error no_code compile_error >"$T/in"
	leap-prune --annotate "$T/in" >"$T/o1"
	[ "$(verdicts "$T/o1")" = "expand " ]
	# the failure-type rule needs every record to fail with a listed status: one passed -> expand
	leap-prune --annotate --catastrophic no_code,compile_error "$T/in" >"$T/o2"
	[ "$(verdicts "$T/o2")" = "expand " ]
	# 3 records, all compile_error or no_code: hopeless by count (3 > G-1 = 2) either way
	group c 1 compile_error no_code compile_error >"$T/in2"
	leap-prune --annotate "$T/in2" >"$T/o3"
	[ "$(verdicts "$T/o3")" = "hopeless " ]
	# with the count rule off (--hopeless-above 100%: 3 > 3 never), the type rule alone decides:
	# every failure is a listed status -> hopeless; only no_code listed -> expand
	leap-prune --annotate --hopeless-above 100% --catastrophic no_code,compile_error "$T/in2" >"$T/o4"
	[ "$(verdicts "$T/o4")" = "hopeless " ]
	leap-prune --annotate --hopeless-above 100% --catastrophic no_code "$T/in2" >"$T/o5"
	[ "$(verdicts "$T/o5")" = "expand " ]
	leap-prune --annotate --hopeless-above 100% "$T/in2" >"$T/o6"
	[ "$(verdicts "$T/o6")" = "expand " ]
	# one sample compiled but was wrong: the type rule does not fire (count rule off) -> expand
	group c 1 compile_error mismatch compile_error >"$T/in3"
	leap-prune --annotate --hopeless-above 100% --catastrophic no_code,compile_error "$T/in3" >"$T/o7"
	[ "$(verdicts "$T/o7")" = "expand " ]
}

@test "leap-prune: --max-turns ends every trajectory" {
	group z 3 pass mismatch mismatch timeout >"$T/in"
	run -0 --separate-stderr leap-prune --done "$T/done" "$T/in"
	assert_output ""
	run -0 jq -r '.prune.reason' "$T/done"
	assert_output "$(printf 'solved\nmax_turns\nmax_turns\nmax_turns')"
	leap-prune --done "$T/done2" --max-turns 4 "$T/in" >"$T/next"
	[ "$(wc -l <"$T/next")" -eq 3 ]
}

@test "leap-prune: --expand-slow gives a slow pass another turn with its timing" {
	{ printf '%s\n' '{"group":"s","sample":0,"turn":1,"completion":"a","status":"pass","bench":{"status":"ok","median_ms":2,"baseline_ms":1,"speedup":0.5}}' \
		'{"group":"s","sample":1,"turn":1,"completion":"b","status":"pass","bench":{"status":"ok","median_ms":0.5,"baseline_ms":1,"speedup":2}}'
		group s 1 x x | sed 's/"sample":0/"sample":2/; s/"sample":1,/"sample":3,/; s/"status":"x"/"status":"mismatch"/'; } >"$T/in"
	leap-prune --done "$T/d1" "$T/in" >"$T/n1"
	[ "$(jq -r .sample "$T/n1" | tr '\n' ' ')" = "2 3 " ]
	leap-prune --done "$T/d2" --expand-slow "$T/in" >"$T/n2"
	[ "$(jq -r .sample "$T/n2" | tr '\n' ' ')" = "0 2 3 " ]
	run -0 jq -r 'select(.sample == 0) | .prune.reason' "$T/d2"
	assert_output slow
	run -0 jq -r 'select(.sample == 0) | .feedback' "$T/n2"
	assert_line --index 0 "Your kernel is correct but slower than the baseline."
	assert_line --index 1 "Timed: median 2 ms, against 1 ms for the baseline, a straightforward hand-written CUDA kernel (speedup 0.5x)."
	# a threshold of 3 makes the 2x kernel slow too
	leap-prune --done "$T/d3" --expand-slow=3 "$T/in" >"$T/n3"
	[ "$(wc -l <"$T/n3")" -eq 4 ]
	# it is told that it beats the baseline, not that it is slower
	run -0 jq -r 'select(.sample == 1) | .feedback' "$T/n3"
	assert_line --index 0 "Your kernel is correct and 2x as fast as the baseline, short of the 3x asked for."
}

@test "leap-prune: interleaved groups are told apart by their key" {
	paste -d '\n' <(group a 1 pass mismatch mismatch pass) <(group b 1 pass pass pass mismatch) >"$T/in"
	leap-prune --annotate --group-size 4 "$T/in" >"$T/out"
	run -0 jq -r '"\(.group) \(.prune.verdict) \(.prune.n_fail)"' "$T/out"
	assert_output "$(printf 'a expand 2\na expand 2\na expand 2\na expand 2\nb easy 1\nb easy 1\nb easy 1\nb easy 1')"
}

@test "leap-prune: a group is decided as soon as its records have arrived" {
	mkfifo "$T/fifo"
	# two records of group a, then the writer waits: the decision must come out before EOF
	# (the rest is held back until it did, until_lines)
	{
		group a 1 pass mismatch
		until_lines "$T/done" 2 && until_lines "$T/next" 1 || exit 1
		cp "$T/next" "$T/next.early"
		cp "$T/done" "$T/done.early"
		group b 1 pass
	} >"$T/fifo" &
	writer=$!
	leap-prune --group-size 2 --done "$T/done" <"$T/fifo" >"$T/next"
	wait "$writer"
	run -0 jq -c '[.group, .sample, .turn]' "$T/next.early"
	assert_output '["a",1,2]'
	[ "$(wc -l <"$T/done.early")" -eq 2 ]
}

@test "leap-prune: an incomplete group is decided at end of input and says so" {
	group a 1 pass mismatch mismatch >"$T/in"
	run -0 --separate-stderr leap-prune --annotate --group-size 4 "$T/in"
	[[ "$stderr" == *"group 'a': end of input after 3 of 4 records"* ]]
	echo "$output" >"$T/out"
	[ "$(jq -r .prune.complete "$T/out" | sort -u)" = false ]
	[ "$(jq -r .prune.group_size "$T/out" | sort -u)" = 3 ]
}

@test "leap-prune: next-turn records carry their count, so turn 2 streams without --group-size" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >"$T/next"
	# the model answers: sample 1 now passes, 2 and 3 still fail
	jq -c '.completion = "fixed" | .status = (if .sample == 1 then "pass" else "mismatch" end)' "$T/next" >"$T/turn2"
	run -0 --separate-stderr leap-prune --done "$T/done" "$T/turn2"
	[ -z "$stderr" ]
	# 3 records, n_fail 2: 2 < 1.5 is false -> expand; 2 records go to turn 3
	[ "$(echo "$output" | jq -r '"\(.sample) \(.turn) \(.group_size)"' | tr '\n' ' ')" = "2 3 2 3 3 2 " ]
	run -0 jq -c 'select(.turn == 2) | [.sample, .prune.decision, .prune.complete]' "$T/done"
	assert_output "$(printf '[1,"final",true]\n[2,"expand",true]\n[3,"expand",true]')"
	# the done file now holds the turn-1 and turn-2 records: 8 + 3
	[ "$(wc -l <"$T/done")" -eq 11 ]
	# a count that does not arrive is reported
	head -n 2 "$T/turn2" >"$T/short"
	run -0 --separate-stderr leap-prune --done "$T/done3" "$T/short"
	[[ "$stderr" == *"end of input after 2 of 3 records"* ]]
}

@test "leap-prune: a malformed line and a record without status become error records; the rest goes on" {
	{ group a 1 pass; echo '{not json'; printf '%s\n' '{"group":"a","sample":9,"turn":1}'; group a 1 mismatch | sed 's/"sample":0/"sample":1/'; } >"$T/in"
	run -1 --separate-stderr leap-prune --done "$T/done" "$T/in"
	[ "$(wc -l <"$T/done")" -eq 4 ]
	run -0 jq -c 'select(.error) | [.error.program, .error.line]' "$T/done"
	assert_output "$(printf '["leap-prune",2]\n["leap-prune",3]')"
	run -0 jq -c 'select(.prune) | [.sample, .prune.verdict, .prune.group_size]' "$T/done"
	assert_output "$(printf '[0,"expand",2]\n[1,"expand",2]')"
}

@test "leap-prune: --stats counts the verdicts" {
	run -0 --separate-stderr leap-prune --done "$T/done" --stats "$F/turn1.jsonl"
	[[ "$stderr" == *"3 groups (1 easy, 1 hopeless, 1 expand, 0 incomplete); 5 records end, 3 get another turn"* ]]
}

@test "leap-prune: --adaptive moves the easy threshold towards the target and counts task streaks" {
	# turn1.jsonl: 3 groups, 2 ended (vector_add easy, matmul hopeless): 2/3 > target 0.5, so
	# each run lowers the easy threshold by one step of 0.05: 0.5 -> 0.45 -> 0.40 -> 0.35
	for i in 1 2 3; do
		leap-prune --adaptive "$T/state" --done /dev/null "$F/turn1.jsonl" >/dev/null
	done
	run -0 jq -c '[.runs, (.easy_below * 1000 | round), .target, .tasks.vector_add.easy, .tasks.vector_add.hopeless, .tasks.matmul.hopeless, .tasks.softmax.easy, .tasks.softmax.hopeless]' "$T/state"
	assert_output '[3,350,0.5,3,0,3,0,0]'
	# the threshold in the state is the one used: at 0.35 of 4 = 1.4, softmax's 3 failures still expand
	run -0 --separate-stderr leap-prune --adaptive "$T/state" --stats --done /dev/null "$F/turn1.jsonl"
	[[ "$stderr" == *"easy threshold 0.35 -> 0.3"* ]]
	# with a target of 1 (end every group), the threshold rises instead
	leap-prune --adaptive "$T/up" --target 1 --done /dev/null "$F/turn1.jsonl" >/dev/null
	run -0 jq -c '.easy_below * 1000 | round' "$T/up"
	assert_output 550
	# an expand verdict breaks a streak
	group vector_add 1 pass mismatch mismatch | sed 's/"task":"softmax"/"task":"vector_add"/' >"$T/va"
	leap-prune --adaptive "$T/state" --done /dev/null "$T/va" >/dev/null
	run -0 jq -c '.tasks.vector_add.easy' "$T/state"
	assert_output 0
}

@test "leap-prune: --adaptive learns from turn 1 only and survives concurrent runs" {
	group a 2 pass mismatch >"$T/turn2"
	leap-prune --adaptive "$T/state" --done /dev/null "$T/turn2" >/dev/null
	[ ! -e "$T/state" ]
	for i in 1 2 3 4 5 6 7 8; do
		leap-prune --adaptive "$T/state" --done /dev/null "$F/turn1.jsonl" >/dev/null &
	done
	wait
	run -0 jq -c '[.runs, .tasks.vector_add.easy]' "$T/state"
	assert_output '[8,8]'
	[ -z "$(find "$T" -name 'state.tmp.*')" ]
	echo '{"tasks":3}' >"$T/bad"
	run -2 --separate-stderr leap-prune --adaptive "$T/bad" --done /dev/null "$F/turn1.jsonl"
	[[ "$stderr" == *"not a leap-prune state"* ]]
}

@test "leap-prompt --skip-from skips tasks easy or hopeless for k steps, revisiting some" {
	# a suite of the three tasks the fixture's groups are about
	mkdir -p "$T/suite"
	cp -R "$LEAP_TASKS/vector_add" "$LEAP_TASKS/softmax" "$LEAP_TASKS/matmul" "$T/suite/"
	export LEAP_TASKS="$T/suite"
	for i in 1 2 3; do
		leap-prune --adaptive "$T/state" --done /dev/null "$F/turn1.jsonl" >/dev/null
	done
	# vector_add (easy 3 times) and matmul (hopeless 3 times) are skipped; softmax stays
	run -0 --separate-stderr leap-prompt --skip-from "$T/state" --revisit 0 --all
	[ "$(echo "$output" | jq -r .task | tr '\n' ' ')" = "softmax " ]
	[[ "$stderr" == *"skipped 2 tasks"* ]]
	run -0 --separate-stderr leap-prompt --skip-from "$T/state" --revisit 1 --all
	[ "$(echo "$output" | jq -r .task | tr '\n' ' ')" = "matmul softmax vector_add " ]
	run -0 --separate-stderr leap-prompt --skip-from "$T/state" --skip-after 4 --revisit 0 --all
	[ "$(echo "$output" | jq -r .task | wc -l)" -eq 3 ]
	# the revisit draw is a fair coin per (seed, task): over 200 seeds about half are kept
	kept=0
	for s in $(seq 1 200); do
		n=$(leap-prompt --skip-from "$T/state" --revisit 0.5 --seed "$s" vector_add 2>/dev/null | wc -l)
		kept=$((kept + n))
	done
	[ "$kept" -gt 70 ] && [ "$kept" -lt 130 ]
	# the same seed decides the same way
	diff <(leap-prompt --skip-from "$T/state" --seed 9 --all 2>/dev/null) <(leap-prompt --skip-from "$T/state" --seed 9 --all 2>/dev/null)
}

@test "leap-prune: next-turn records equal a jq definition of the transformation, key order included" {
	cat "$F/turn1.jsonl" "$F/long.jsonl" >"$T/in"
	leap-prune --done "$T/done" "$T/in" >"$T/next"
	[ "$(wc -l <"$T/next")" -eq 5 ]
	jq -c --slurpfile src "$T/in" '
		. as $n
		| ($src[] | select(.group == $n.group and .sample == $n.sample))
		| del(.completion, .code, .compile, .verify, .bench, .status, .tokens, .reward, .rank,
		      .advantage, .error, .prune, .feedback, .group_size)
		| .turn += 1
		| .messages += [{role: "assistant", content: $src[] | select(.group == $n.group and .sample == $n.sample) | .completion},
		                {role: "user", content: $n.feedback}]
		| .feedback = $n.feedback | .group_size = $n.group_size | .dcp = $n.dcp' "$T/next" >"$T/want"
	diff <(jq -c . "$T/next") "$T/want"
}

@test "leap-prune: a done file that is also an input is refused (it would be read again)" {
	cp "$F/turn1.jsonl" "$T/in"
	run -2 --separate-stderr leap-prune --done "$T/in" "$T/in"
	[[ "$stderr" == *"the done file is also an input"* ]]
	run -2 --separate-stderr leap-prune --done "$T/in" <"$T/in"
	[ "$(wc -l <"$T/in")" -eq 8 ]
}

@test "leap-prune: parallel runs appending to one done file leave only whole lines" {
	"$ROOT/bench/gen-records" --records 4000 --mode turn --seed 3 >"$T/turn"
	split -n l/4 "$T/turn" "$T/part."
	for p in "$T"/part.*; do
		leap-prune --group-size 16 --done "$T/done" "$p" >/dev/null 2>&1 &
	done
	wait
	[ "$(wc -l <"$T/done")" -eq 4000 ]
	# every line parses and carries its decision
	run -0 jq -r 'has("prune")' "$T/done"
	[ "$(echo "$output" | sort -u)" = true ]
}

# Issue 15 -------------------------------------------------------------------------------

@test "leap-prune: DCP decides once, at turn 1; the verdict travels in 'dcp'; --regate decides again" {
	# Turn 1, a group of 8: 2 pass, 6 fail. n_fail 6 < T_easy = 0.5 * 8 = 4? no. 6 > T_max =
	# G-1 = 7? no -> expand: the 6 failures get turn 2, carrying dcp {expand, turn 1, 6, 8}.
	group g 1 pass pass mismatch mismatch mismatch mismatch mismatch mismatch >"$T/t1"
	leap-prune --done "$T/done" "$T/t1" >"$T/t2"
	[ "$(wc -l <"$T/t2")" -eq 6 ]
	run -0 jq -c '.dcp' "$T/t2"
	[ "$(echo "$output" | sort -u)" = '{"verdict":"expand","turn":1,"n_fail":6,"group_size":8}' ]
	# Turn 2: 4 of the 6 pass, 2 fail. Re-gating would say n_fail 2 < 0.5 * 6 = 3 -> easy and
	# end the 2 failures; the paper's gate was taken at turn 1: they get turn 3.
	jq -c '.completion = "c" | .status = (if .sample < 6 then "pass" else "mismatch" end)' "$T/t2" >"$T/t2v"
	leap-prune --done "$T/done" "$T/t2v" >"$T/t3"
	[ "$(jq -r .sample "$T/t3" | tr '\n' ' ')" = "6 7 " ]
	# issue 30: n_fail and group_size are the counts the verdict was taken on (turn 1: 6 of 8),
	# this turn's are turn_fail and turn_records (2 of the 6 sent on)
	run -0 jq -c 'select(.turn == 2) | [.sample, .prune.decision, .prune.reason, .prune.verdict, .prune.n_fail, .prune.group_size, .prune.gate_turn, .prune.turn_fail, .prune.turn_records]' "$T/done"
	assert_output "$(printf '%s\n' '[2,"final","solved","expand",6,8,1,2,6]' '[3,"final","solved","expand",6,8,1,2,6]' \
		'[4,"final","solved","expand",6,8,1,2,6]' '[5,"final","solved","expand",6,8,1,2,6]' \
		'[6,"expand","failed","expand",6,8,1,2,6]' '[7,"expand","failed","expand",6,8,1,2,6]')"
	# the turn-3 records still carry the turn-1 gate
	[ "$(jq -c .dcp "$T/t3" | sort -u)" = '{"verdict":"expand","turn":1,"n_fail":6,"group_size":8}' ]
	# --regate: the same turn 2 is easy (2 < 3): nothing goes on
	run -0 --separate-stderr leap-prune --regate --done "$T/done2" "$T/t2v"
	assert_output ""
	[ "$(jq -r '.prune | "\(.verdict) \(.reason) \(.gate_turn)"' "$T/done2" | sort -u | tr '\n' '|')" = "easy easy 2|" ]
	# Turn 3 ends everything (--max-turns 3): the failure ends with max_turns, the pass solved
	jq -c '.completion = "c" | .status = (if .sample == 6 then "pass" else "timeout" end)' "$T/t3" >"$T/t3v"
	run -0 --separate-stderr leap-prune --done "$T/done" "$T/t3v"
	assert_output ""
	run -0 jq -c 'select(.turn == 3) | [.sample, .prune.reason]' "$T/done"
	assert_output "$(printf '[6,"solved"]\n[7,"max_turns"]')"
}

@test "leap-prune: hopeless is a count, n_fail > T_max = G-1; thresholds G and G-K" {
	# 4 records, all compile errors (say, a missing #include): 4 > G-1 = 3 -> hopeless.
	group h 1 compile_error compile_error compile_error compile_error >"$T/all"
	leap-prune --annotate "$T/all" >"$T/o1"
	[ "$(verdicts "$T/o1")" = "hopeless " ]
	# 3 compile errors and a pass: 3 > 3 is false, 3 < 2 is false -> expand (the old type rule
	# needed every record to fail; the count rule agrees here)
	group h 1 pass compile_error compile_error compile_error >"$T/three"
	leap-prune --annotate "$T/three" >"$T/o2"
	[ "$(verdicts "$T/o2")" = "expand " ]
	# G-2 = 2: 3 > 2 -> hopeless.  G = 4: 4 > 4 never -> the all-failed group expands.
	leap-prune --annotate --hopeless-above G-2 "$T/three" >"$T/o3"
	[ "$(verdicts "$T/o3")" = "hopeless " ]
	leap-prune --annotate --hopeless-above G "$T/all" >"$T/o4"
	[ "$(verdicts "$T/o4")" = "expand " ]
	# G-K works for the easy threshold too: G-1 = 3 for 4 records: n_fail 2 < 3 -> easy
	group h 1 pass pass mismatch mismatch >"$T/two"
	leap-prune --annotate --easy-below G-1 "$T/two" >"$T/o5"
	[ "$(verdicts "$T/o5")" = "easy " ]
	for bad in G1 G-x G-1.5 g-1 G-; do
		run -2 --separate-stderr leap-prune --annotate --hopeless-above "$bad" </dev/null
		[[ "$stderr" == *"--hopeless-above: '$bad'"* ]]
	done
}

@test "leap-prune: --preset leap, debug-all, debug-below-half, single-turn; flags override a preset" {
	# A: 4 pass (n_fail 0 < 2: easy). B: 1 pass, 3 fail (3 < 2 no, 3 > 3 no: expand).
	# C: 4 fail (4 > G-1 = 3: hopeless). D: 3 pass, 1 fail (1 < 2: easy).
	{ group A 1 pass pass pass pass; group B 1 pass mismatch timeout mismatch
	  group C 1 mismatch mismatch mismatch mismatch; group D 1 pass pass pass mismatch; } >"$T/in"
	# next-turn records per preset: leap (the default): B's 3 failures
	leap-prune --done /dev/null "$T/in" >"$T/default"
	leap-prune --preset leap --done /dev/null "$T/in" >"$T/leap"
	diff "$T/default" "$T/leap"
	[ "$(jq -r .group "$T/leap" | uniq -c | awk '{print $2 $1}' | tr '\n' ' ')" = "B3 " ]
	# debug-all: no easy, no hopeless: every failure debugs: B3 + C4 + D1 = 8
	leap-prune --preset debug-all --done /dev/null "$T/in" >"$T/all"
	[ "$(jq -r .group "$T/all" | uniq -c | awk '{print $2 $1}' | tr '\n' ' ')" = "B3 C4 D1 " ]
	# debug-below-half: the easy rule alone: B3 + C4 = 7 (A and D easy)
	leap-prune --preset debug-below-half --done /dev/null "$T/in" >"$T/half"
	[ "$(jq -r .group "$T/half" | uniq -c | awk '{print $2 $1}' | tr '\n' ' ')" = "B3 C4 " ]
	# single-turn: every record ends at turn 1; B's failures end with max_turns
	run -0 --separate-stderr leap-prune --preset single-turn --done "$T/d1" "$T/in"
	assert_output ""
	[ "$(jq -r 'select(.group == "B") | .prune.reason' "$T/d1" | tr '\n' ' ')" = "solved max_turns max_turns max_turns " ]
	# a flag overrides the preset, before or after it: debug-all with easy < 50% is debug-below-half
	leap-prune --preset debug-all --easy-below 50% --done /dev/null "$T/in" >"$T/o1"
	leap-prune --easy-below 50% --preset debug-all --done /dev/null "$T/in" >"$T/o2"
	diff "$T/o1" "$T/half"
	diff "$T/o2" "$T/half"
	run -2 --separate-stderr leap-prune --preset paper --done /dev/null </dev/null
	[[ "$stderr" == *"--preset: 'paper' is not leap, debug-all, debug-below-half or single-turn"* ]]
}

@test "leap-prune: a second record of a (group, sample, turn) is an error record naming the first" {
	# group a: sample 1 twice (lines 2 and 3). With --group-size 3 the group completes with
	# lines 1, 2, 4 (the duplicate does not count): n = 3, n_fail = 2 -> expand.
	{ group a 1 pass mismatch; group a 1 pass mismatch | sed -n 2p; group a 1 pass mismatch timeout | sed -n 3p; } >"$T/in"
	run -1 --separate-stderr leap-prune --group-size 3 --done "$T/done" "$T/in"
	[[ "$stderr" == *"$T/in:3: a second record of group 'a', sample 1, turn 1 (the first is $T/in:2)"* ]]
	[ "$(wc -l <"$T/done")" -eq 4 ]
	run -0 jq -c 'select(.error) | [.sample, .error.line]' "$T/done"
	assert_output '[1,3]'
	run -0 jq -c 'select(.prune) | [.sample, .prune.n_fail, .prune.group_size]' "$T/done"
	assert_output "$(printf '[0,2,3]\n[1,2,3]\n[2,2,3]')"
	# the same turn twice in one input: the second copy's records are duplicates of the first's
	cat "$F/turn1.jsonl" "$F/turn1.jsonl" >"$T/twice"
	run -1 --separate-stderr leap-prune --group-size 4 --done "$T/d2" "$T/twice"
	[ "$(jq -r 'select(.error) | .error.line' "$T/d2" | wc -l)" -eq 8 ]
	[ "$(jq -r 'select(.prune) | .sample' "$T/d2" | wc -l)" -eq 8 ]
	[ "$(echo "$output" | wc -l)" -eq 3 ]
}

@test "leap-prune: re-running a turn is safe: the done file's decisions stand, next turns are made again" {
	leap-prune --done "$T/done" "$F/turn1.jsonl" >"$T/next1"
	cp "$T/done" "$T/done.once"
	# the same turn again (a second `make`, a retry): nothing is written twice, and the
	# next-turn records are the same bytes
	run -0 --separate-stderr leap-prune --done "$T/done" "$F/turn1.jsonl"
	echo "$output" >"$T/next2"
	diff "$T/done.once" "$T/done"
	diff "$T/next1" "$T/next2"
	[[ "$stderr" == *"group 'softmax', turn 1: 4 records were decided by an earlier run ($T/done:1 and on)"* ]]
	# resampled: every answer differs (sample 1 now passes); the done file's records win, so the
	# next turn continues what the done file holds (sample 1 still gets turn 2, with its
	# original completion in its history)
	jq -c '.completion = "other" | .status = (if .sample == 1 then "pass" else .status end)' "$F/turn1.jsonl" >"$T/resampled"
	leap-prune --done "$T/done" "$T/resampled" >"$T/next3" 2>/dev/null
	diff "$T/done.once" "$T/done"
	diff "$T/next1" "$T/next3"
	# a run killed after its first group: the re-run adds the missing groups only
	jq -c 'select(.group == "vector_add")' "$F/turn1.jsonl" >"$T/first"
	leap-prune --done "$T/done4" "$T/first" >/dev/null
	leap-prune --done "$T/done4" "$F/turn1.jsonl" >"$T/next4" 2>/dev/null
	[ "$(wc -l <"$T/done4")" -eq 8 ]
	diff <(jq -c '[.group, .sample, .prune]' "$T/done.once" | sort) <(jq -c '[.group, .sample, .prune]' "$T/done4" | sort)
	diff "$T/next1" "$T/next4"
	# an error record in the done file is no decision: the record is decided when it comes good
	printf '%s\n' '{"group":"e","sample":0,"turn":1,"error":{"program":"leap-prune","message":"no status"}}' >"$T/done5"
	group e 1 pass mismatch >"$T/good"
	leap-prune --done "$T/done5" "$T/good" >/dev/null
	run -0 jq -c 'select(.prune) | [.sample, .prune.reason]' "$T/done5"
	assert_output "$(printf '[0,"solved"]\n[1,"failed"]')"
}

@test "leap-prune: --expand-slow and the speed of a timing whose bench.status is not ok" {
	# sample 0 passes 2x slower than the baseline but its timing is noisy: its speed is not
	# known, so it is not 'slow'; sample 1 (status ok, 0.5) is.
	printf '%s\n' '{"group":"s","sample":0,"turn":1,"completion":"a","status":"pass","bench":{"status":"noisy","speedup":0.5}}' \
		'{"group":"s","sample":1,"turn":1,"completion":"b","status":"pass","bench":{"status":"ok","speedup":0.5}}' \
		'{"group":"s","sample":2,"turn":1,"completion":"c","status":"mismatch"}' \
		'{"group":"s","sample":3,"turn":1,"completion":"d","status":"mismatch"}' >"$T/in"
	leap-prune --done "$T/d" --expand-slow "$T/in" >"$T/n"
	[ "$(jq -r .sample "$T/n" | tr '\n' ' ')" = "1 2 3 " ]
}

@test "leap-prune: an error shared by many records is said once, then counted" {
	# issue 30: the whole message came once per record ("not decided: ...")
	for i in 0 1 2; do
		printf '{"task":"t","group":"g","sample":%d,"turn":1,"error":{"program":"leap-verify","file":"-","line":%d,"message":"Not verified: no NVIDIA GPU."}}\n' $i $((i + 1))
	done >"$T/in"
	printf '{"task":"t","group":"h","sample":0,"turn":1}\n{"task":"t","group":"h","sample":1,"turn":1}\n' >>"$T/in"
	run -1 --separate-stderr leap-prune --done "$T/done" "$T/in"
	[ "$(grep -c 'no NVIDIA GPU' <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"$T/in:1: not decided: the record carries an error (leap-verify: Not verified: no NVIDIA GPU.)"* ]]
	[[ "$stderr" == *"leap-prune: 2 more records were not decided for the same reason as $T/in:1"* ]]
	[ "$(grep -c "no valid 'status'" <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"leap-prune: 1 more record was not decided for the same reason as $T/in:4"* ]]
	# every record is still in the done file
	[ "$(wc -l <"$T/done")" -eq 5 ]
}
