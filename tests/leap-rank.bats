# leap-rank.bats - the pairwise tournament: the outcome key, ties, zero-sum scores, streaming groups.
load helpers

F="$FIXTURES/leap-rank"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# scores FILE: "group sample score" per trajectory (its first record), in output order.
scores() {
	jq -r 'select(.turn == 1) | "\(.group) \(.sample) \(.rank.score)"' "$1"
}

@test "leap-rank: --help, --version, bad option, bad key" {
	run -0 leap-rank --help
	assert_line --index 0 "usage: leap-rank [OPTION]... [FILE]..."
	run -0 leap-rank --version
	run -2 --separate-stderr leap-rank --bogus
	run -2 --separate-stderr leap-rank --key turn,turn </dev/null
	run -2 --separate-stderr leap-rank --key speedy </dev/null
	run -2 --separate-stderr leap-rank --speed-tie -1 </dev/null
}

@test "leap-rank: gold and silver: a turn-2 success is +1 where most failed, -1 where most passed" {
	# The default key is turn alone (the paper's first-turn success > second-turn success >
	# failure). Group A: s0 solved at turn 2; s1, s2, s3 never solved. s0 beats all three: 3
	# wins, score 3/3 = 1. The others lose to s0 and tie each other: (0 - 1)/3 = -1/3.
	# Group B: s0 solved at turn 2, s1, s2, s3 at turn 1. s0 loses to all: -1. s1, s2, s3 each
	# beat s0 and tie the other two, whatever their speed: (1 - 0)/3 = 1/3.
	leap-rank "$F/story.jsonl" >"$T/out"
	run -0 scores "$T/out"
	assert_output "$(printf '%s\n' "A 0 1" "A 1 -0.3333333333333333" "A 2 -0.3333333333333333" \
		"A 3 -0.3333333333333333" "B 0 -1" "B 1 0.3333333333333333" "B 2 0.3333333333333333" "B 3 0.3333333333333333")"
	run -0 jq -c 'select(.group == "B" and .sample == 1 and .turn == 1) | .rank' "$T/out"
	assert_output '{"wins":1,"losses":0,"ties":2,"score":0.3333333333333333,"group_size":4,"turns":1,"complete":true}'
	# every record of a trajectory carries the same rank; turns is its last turn
	run -0 jq -c 'select(.group == "A" and .sample == 1) | [.turn, .rank.score, .rank.turns]' "$T/out"
	assert_output "$(printf '[1,-0.3333333333333333,3]\n[2,-0.3333333333333333,3]\n[3,-0.3333333333333333,3]')"
	# with speed in the key (the old default turn,speed,tokens): B s2 (2.0) beats s1 (1.0) and
	# s3 (1.01); s1 vs s3: 1.01 < 1.02 * 1.0, a tie: s1 and s3 (1 - 1)/3 = 0, s2 +1
	leap-rank --key turn,speed,tokens "$F/story.jsonl" >"$T/out2"
	run -0 jq -r 'select(.group == "B" and .turn == 1) | "\(.sample) \(.rank.score)"' "$T/out2"
	assert_output "$(printf '0 -1\n1 0\n2 1\n3 0')"
}

@test "leap-rank: scores sum to zero in every group and lie in [-1, 1]" {
	# 5 groups of 7 trajectories with outcomes from a fixed pseudo-random sequence
	awk 'BEGIN { split("pass mismatch timeout compile_error no_code runtime_error", st, " ");
		x = 7; for (g = 0; g < 5; g++) for (s = 0; s < 7; s++) { x = (x * 1103515245 + 12345) % 2147483648;
		k = int(x / 65536) % 6 + 1; t = int(x / 7) % 3 + 1; sp = (int(x / 13) % 50) / 10 + 0.1;
		printf "{\"group\":\"g%d\",\"sample\":%d,\"turn\":%d,\"status\":\"%s\",\"tokens\":%d,\"bench\":{\"speedup\":%.1f}}\n", g, s, t, st[k], int(x / 3) % 500, sp } }' >"$T/in"
	leap-rank "$T/in" >"$T/out"
	run -0 jq -s -c 'group_by(.group) | map([(map(.rank.score) | add | fabs < 1e-12), (map(.rank.score) | all(. >= -1 and . <= 1)), (map(.rank.wins) | add) == (map(.rank.losses) | add)]) | flatten | unique' "$T/out"
	assert_output '[true]'
	# and it is not all ties
	run -0 jq -s 'map(.rank.score) | map(select(. != 0)) | length > 10' "$T/out"
	assert_output true
}

@test "leap-rank: unsolved trajectories tie, whatever their tokens or status" {
	printf '%s\n' '{"group":"u","sample":0,"status":"mismatch","tokens":10}' \
		'{"group":"u","sample":1,"status":"no_code","tokens":99}' \
		'{"group":"u","sample":2,"status":"timeout","tokens":50}' >"$T/in"
	run -0 jq -c '.rank | [.wins, .losses, .ties, .score]' <(leap-rank "$T/in")
	assert_output "$(printf '[0,0,2,0]\n[0,0,2,0]\n[0,0,2,0]')"
	# with status in the key: mismatch > timeout > no_code -> +1, 0, -1
	run -0 jq -c '.rank.score' <(leap-rank --key turn,status "$T/in")
	assert_output "$(printf '1\n-1\n0')"
}

@test "leap-rank: a group of one scores 0" {
	printf '%s\n' '{"group":"solo","sample":0,"status":"pass","bench":{"speedup":3}}' >"$T/in"
	run -0 jq -c '.rank' <(leap-rank "$T/in")
	assert_output '{"wins":0,"losses":0,"ties":0,"score":0,"group_size":1,"turns":1,"complete":true}'
}

@test "leap-rank: the speed tie margin" {
	# B s1 (1.0) and s3 (1.01): a tie within 2%; with --speed-tie 0, s3 is faster.
	# s1 then beats s0, loses to s2 and s3: (1 - 2)/3 = -1/3; s3 beats s0, s1: (2 - 1)/3 = 1/3.
	leap-rank --key turn,speed --speed-tie 0 "$F/story.jsonl" >"$T/out"
	run -0 jq -r 'select(.group == "B" and .turn == 1) | "\(.sample) \(.rank.score)"' "$T/out"
	assert_output "$(printf '0 -1\n1 -0.3333333333333333\n2 1\n3 0.3333333333333333')"
	# --key turn alone: s1, s2, s3 all solved at turn 1 tie: each beats s0 only: 1/3
	leap-rank --key turn "$F/story.jsonl" >"$T/out2"
	run -0 jq -r 'select(.group == "B" and .turn == 1) | "\(.sample) \(.rank.score)"' "$T/out2"
	assert_output "$(printf '0 -1\n1 0.3333333333333333\n2 0.3333333333333333\n3 0.3333333333333333')"
}

@test "leap-rank: speedups whose intervals overlap tie on speed, whatever the margin" {
	# s0 1.10 [1.05, 1.15] and s1 1.14 [1.08, 1.20] overlap: a tie even at --speed-tie 0;
	# s2 1.50 [1.45, 1.55] is above both; s3 1.30 without an interval is compared by the margin
	printf '%s\n' '{"group":"v","sample":0,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.10,"speedup_ci":[1.05,1.15]}}' \
		'{"group":"v","sample":1,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.14,"speedup_ci":[1.08,1.20]}}' \
		'{"group":"v","sample":2,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.50,"speedup_ci":[1.45,1.55]}}' \
		'{"group":"v","sample":3,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.30}}' >"$T/in"
	run -0 jq -c '[.sample, .rank.wins, .rank.losses, .rank.ties]' <<<"$(leap-rank --key turn,speed --speed-tie 0 "$T/in")"
	assert_output "$(printf '%s\n' '[0,0,2,1]' '[1,0,2,1]' '[2,3,0,0]' '[3,2,1,0]')"
}

@test "leap-rank: tokens, summed over the turns, break a speed tie between solved trajectories" {
	# s0: turn 1 (100 tokens) fails, turn 2 (100) passes: 200 tokens, solved at 2.
	# s1: turn 1 (150) fails, turn 2 (20) passes: 170 tokens, solved at 2. Same speed.
	# s1 has fewer tokens in total: s1 +1, s0 -1. Without tokens in the key: a tie.
	printf '%s\n' '{"group":"k","sample":0,"turn":1,"status":"mismatch","tokens":100,"prune":{"decision":"expand"}}' \
		'{"group":"k","sample":1,"turn":1,"status":"mismatch","tokens":150,"prune":{"decision":"expand"}}' \
		'{"group":"k","sample":0,"turn":2,"status":"pass","tokens":100,"bench":{"status":"ok","speedup":1.5},"prune":{"decision":"final"}}' \
		'{"group":"k","sample":1,"turn":2,"status":"pass","tokens":20,"bench":{"status":"ok","speedup":1.5},"prune":{"decision":"final"}}' >"$T/in"
	run -0 jq -r '"\(.sample) \(.turn) \(.rank.score)"' <(leap-rank --key turn,speed,tokens "$T/in")
	assert_output "$(printf '0 1 -1\n1 1 1\n0 2 -1\n1 2 1')"
	run -0 jq -r '.rank.score' <(leap-rank --key turn,speed "$T/in")
	assert_output "$(printf '0\n0\n0\n0')"
	# a record without tokens makes the trajectory's count unknown: a tie again
	sed '1s/"tokens":100,//' "$T/in" >"$T/in2"
	run -0 jq -r '.rank.score' <(leap-rank --key turn,speed,tokens "$T/in2")
	assert_output "$(printf '0\n0\n0\n0')"
}

@test "leap-rank: interleaved groups stream out as soon as their trajectories have ended" {
	# story.jsonl: group B's last trajectory ends on line 12, group A's on line 14
	run -0 --separate-stderr leap-rank --group-size 4 "$F/story.jsonl"
	[ -z "$stderr" ]
	[ "$(echo "$output" | jq -r .group | uniq | tr '\n' ' ')" = "B A " ]
	# the rest of the input is held back until group B came out (until_lines)
	mkfifo "$T/fifo"
	{
		head -n 12 "$F/story.jsonl"
		until_lines "$T/out" 5 || exit 1
		cp "$T/out" "$T/out.early"
		tail -n 2 "$F/story.jsonl"
	} >"$T/fifo" &
	writer=$!
	leap-rank --group-size 4 <"$T/fifo" >"$T/out"
	wait "$writer"
	[ "$(jq -r .group "$T/out.early" | sort -u)" = B ]
	[ "$(wc -l <"$T/out.early")" -eq 5 ]
}

@test "leap-rank: incomplete groups and unended trajectories are ranked and reported" {
	run -0 --separate-stderr leap-rank --group-size 5 "$F/story.jsonl"
	[[ "$stderr" == *"group 'A': end of input after 4 of 5 ended trajectories"* ]]
	[ "$(echo "$output" | jq -r .rank.complete | sort -u)" = false ]
	head -n 12 "$F/story.jsonl" >"$T/in"
	run -0 --separate-stderr leap-rank "$T/in"
	[[ "$stderr" == *"group 'A': 2 trajectories have not ended"* ]]
	[ "$(echo "$output" | jq -r 'select(.group == "A") | .rank.complete' | sort -u)" = false ]
	[ "$(echo "$output" | jq -r 'select(.group == "B") | .rank.complete' | sort -u)" = true ]
}

@test "leap-rank: records pass through byte for byte with rank appended; an old rank is replaced" {
	leap-rank "$F/story.jsonl" >"$T/out"
	python3 - "$F/story.jsonl" "$T/out" <<'EOF'
import sys, json
src = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    src[(r["group"], r["sample"], r["turn"])] = line.rstrip("\n")
n = 0
for line in open(sys.argv[2]):
    line = line.rstrip("\n")
    r = json.loads(line)
    raw = src[(r["group"], r["sample"], r["turn"])]
    assert line.startswith(raw[:-1] + ',"rank":{'), (raw, line)
    n += 1
assert n == len(src)
EOF
	leap-rank <"$T/out" >"$T/again"
	run -0 jq -c 'keys_unsorted | map(select(. == "rank")) | length' "$T/again"
	[ "$(echo "$output" | sort -u)" = 1 ]
	diff <(jq -c .rank "$T/out") <(jq -c .rank "$T/again")
}

@test "leap-rank: a malformed line and a record without a group key become error records" {
	{ head -n 2 "$F/story.jsonl"; echo '[1,2]'; echo '{"sample":1}'; } >"$T/in"
	run -1 --separate-stderr leap-rank "$T/in"
	[ "$(echo "$output" | wc -l)" -eq 4 ]
	[ "$(echo "$output" | jq -c 'select(.error) | .error.line' | tr '\n' ' ')" = "3 4 " ]
}

@test "leap-rank: every kind of invalid JSON becomes an error record (the scanner is strict)" {
	printf '%s\n' '{"group":"g","sample":0,}' "{'group':'g'}" '{"group":"g","x":"\x"}' '{"group":"g","x":"\ud800"}' \
		'{"group":"g","x":01}' '{"group":"g","x":1.}' '{"group":"g","x":-}' '{"group" "g"}' '{"group":"g"}}' \
		'{"group":"g","x":tru}' '{"group":"g","x":[1,2}' '{"group":"g","x":{"y":[}}' '{"group":"g","x":"a' \
		'{"group":"g","x":"\udc00\ud800"}' '"just a string"' >"$T/bad"
	printf '{"group":"g","x":"tab\there"}\n{"group":"g","x":"\xff"}\n{"group":"g","x":"\xc3"}\n' >>"$T/bad"
	# found by fuzzing: a member name holding U+0000 (jansson refuses it, so must the scanner)
	printf '%s\n' '{"group":"g","a\u0000b":1}' >>"$T/bad"
	run -1 --separate-stderr leap-rank "$T/bad"
	[ "$(echo "$output" | wc -l)" -eq 19 ]
	[ "$(echo "$output" | jq -r '.error.program' | sort | uniq -c | awk '{print $1, $2}')" = "19 leap-rank" ]
}

@test "leap-rank: valid JSON in all its forms is ranked, escaped names included" {
	# "gr\u006fup" is "group"; "s\u0061mple" is "sample"; numbers, literals, nesting, a
	# surrogate pair and blanks around the object are all valid
	printf '%s\n' ' {"gr\u006fup":"e","s\u0061mple":0,"status":"pass","x":[1,-0.5E-3,1e5,true,false,null,{},[[]]],"y":"\ud83d\ude00\u00e9\n"} ' \
		'{"group":"e","sample":1,"status":"mismatch","z":{"a":{"b":{"c":[{"d":"é"}]}}}}' >"$T/ok"
	run -0 --separate-stderr leap-rank "$T/ok"
	run -0 jq -c '[.rank.score, .rank.group_size]' <(leap-rank "$T/ok" 2>/dev/null)
	assert_output "$(printf '[1,2]\n[-1,2]')"
}

@test "leap-rank: a done file with groups spread over turns is ranked in input order, read twice" {
	# story.jsonl interleaves groups A and B across turns, as leap-prune's done file does.
	# From a file (or standard input redirected from one) every record comes out in input
	# order; from a pipe, groups are held and come out group by group. Same ranks either way.
	leap-rank "$F/story.jsonl" >"$T/file"
	leap-rank <"$F/story.jsonl" >"$T/redirect"
	cat "$F/story.jsonl" | leap-rank >"$T/pipe"
	diff <(jq -c '[.group, .sample, .turn]' "$F/story.jsonl") <(jq -c '[.group, .sample, .turn]' "$T/file")
	diff "$T/file" "$T/redirect"
	[ "$(jq -r .group "$T/pipe" | uniq | tr '\n' ' ')" = "A B " ]
	diff <(jq -c '[.group, .sample, .turn, .rank]' "$T/file" | sort) <(jq -c '[.group, .sample, .turn, .rank]' "$T/pipe" | sort)
	# two files, the second repeating the first (a turn appended twice): the second copy's 14
	# records are duplicates, each naming its first; the groups still have 4 trajectories
	run -1 --separate-stderr leap-rank "$F/story.jsonl" "$F/story.jsonl"
	echo "$output" >"$T/twice"
	run -0 jq -s -c 'map(select(.rank) | .rank.group_size) | unique' "$T/twice"
	assert_output '[4]'
	[ "$(jq -r 'select(.error) | .error.line' "$T/twice" | tr '\n' ' ')" = "$(seq 1 14 | tr '\n' ' ')" ]
	diff <(jq -c 'select(.rank) | .rank' "$T/twice") <(jq -c .rank "$T/file")
	# three copies: each of the 28 duplicates names its first, in the first copy, by its line
	run -1 --separate-stderr leap-rank "$F/story.jsonl" "$F/story.jsonl" "$F/story.jsonl"
	echo "$output" >"$T/thrice"
	[ "$(jq -r 'select(.error) | .error.message' "$T/thrice" | grep -c "(the first is $F/story.jsonl:")" -eq 28 ]
	run -0 jq -r 'select(.error) | [.error.line, (.error.message | capture("jsonl:(?<n>[0-9]+)").n)] | @tsv' "$T/thrice"
	[ "$(awk '$1 != $2' <<<"$output")" = "" ]
}

@test "leap-rank: file (two passes), pipe (held) and --group-size (streamed) agree on generated rollouts" {
	"$ROOT/bench/gen-records" --records 1500 --mode done --seed 5 >"$T/done"
	leap-rank "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn, .rank]' | sort >"$T/a"
	cat "$T/done" | leap-rank 2>/dev/null | jq -c '[.group, .sample, .turn, .rank]' | sort >"$T/b"
	leap-rank -g 16 "$T/done" 2>/dev/null | jq -c '[.group, .sample, .turn, .rank]' | sort >"$T/c"
	[ "$(wc -l <"$T/a")" -eq 1500 ]
	diff "$T/a" "$T/b"
	diff <(grep -v '"complete":false' "$T/a") <(grep -v '"complete":false' "$T/c")
	# zero-sum in every group
	run -0 jq -s -c 'map(select(.turn == 1)) | group_by(.group) | map(map(.rank.score) | add | fabs < 1e-9) | unique' <(leap-rank "$T/done" 2>/dev/null)
	assert_output '[true]'
}

@test "leap-rank: two passes: a byte-order mark, an old rank, a bad line and a record without a group agree with the pipe" {
	# lib/group/twopass.c writes an unchanged record without scanning it again; these take the slow
	# path and must come out exactly as when the input is held
	{ printf '\xef\xbb\xbf'; head -n 3 "$F/story.jsonl"; echo '{"group":"A","sample":9,"status":"pass","rank":{"score":7}}'
	  echo '{not json'; echo '{"sample":1}'; tail -n +4 "$F/story.jsonl"; } >"$T/in"
	run -1 --separate-stderr leap-rank "$T/in"
	echo "$output" >"$T/file"
	run -1 --separate-stderr bash -c 'cat "$1" | leap-rank' _ "$T/in"
	echo "$output" >"$T/pipe"
	[ "$(wc -l <"$T/file")" -eq "$(grep -c . "$T/in")" ]
	diff <(jq -c '[.group, .sample, .turn, .rank, .error.line]' "$T/file" | sort) <(jq -c '[.group, .sample, .turn, .rank, .error.line]' "$T/pipe" | sort)
	run -0 jq -c 'select(.sample == 9) | .rank | [.score > 0, has("wins")]' "$T/file"
	assert_output '[true,true]'
}

# Issue 15 -------------------------------------------------------------------------------

@test "leap-rank: the default key is turn: gold > silver > time-out, speed and tokens ignored" {
	# s0 solved at turn 1 (speedup 1.0, 900 tokens), s1 at turn 1 (speedup 3.0, 10 tokens),
	# s2 at turn 2, s3 never. s0 and s1 tie (same turn); each beats s2 and s3: (2 - 0)/3 = 2/3.
	# s2 beats s3, loses to s0, s1: (1 - 2)/3 = -1/3. s3 loses to all: -1.
	printf '%s\n' '{"group":"g","sample":0,"turn":1,"status":"pass","tokens":900,"bench":{"status":"ok","speedup":1.0}}' \
		'{"group":"g","sample":1,"turn":1,"status":"pass","tokens":10,"bench":{"status":"ok","speedup":3.0}}' \
		'{"group":"g","sample":2,"turn":1,"status":"mismatch","tokens":5,"prune":{"decision":"expand"}}' \
		'{"group":"g","sample":2,"turn":2,"status":"pass","tokens":5,"bench":{"status":"ok","speedup":9.0}}' \
		'{"group":"g","sample":3,"turn":1,"status":"timeout","tokens":1}' >"$T/in"
	run -0 jq -r 'select(.turn == 1) | "\(.sample) \(.rank.wins) \(.rank.losses) \(.rank.ties) \(.rank.score)"' <(leap-rank "$T/in")
	assert_output "$(printf '%s\n' "0 2 0 1 0.6666666666666666" "1 2 0 1 0.6666666666666666" "2 1 2 0 -0.3333333333333333" "3 0 3 0 -1")"
}

@test "leap-rank: speed ignores timings whose bench.status is not ok, and says how many" {
	# s0 and s1 both solved at turn 1. s0's 2.0 is 'noisy', s2's 3.0 'suspicious', s3's 5.0
	# has no status: only s1's 1.0 is a speed leap trusts. Under --key turn,speed every pair of
	# solved trajectories ties on speed (one side unknown): all four tie, score 0. Three
	# passing records have an unusable timing.
	printf '%s\n' '{"group":"g","sample":0,"status":"pass","bench":{"status":"noisy","speedup":2.0}}' \
		'{"group":"g","sample":1,"status":"pass","bench":{"status":"ok","speedup":1.0}}' \
		'{"group":"g","sample":2,"status":"pass","bench":{"status":"suspicious","speedup":3.0}}' \
		'{"group":"g","sample":3,"status":"pass","bench":{"speedup":5.0}}' >"$T/in"
	run -0 --separate-stderr leap-rank --key turn,speed "$T/in"
	[ "$(echo "$output" | jq -r .rank.score | tr '\n' ' ')" = "0 0 0 0 " ]
	[[ "$stderr" == *"3 passing records have a timing whose bench.status is not \"ok\" (noisy, suspicious or missing): speed counts them as unknown"* ]]
	# the same from a pipe (groups held) and with --group-size (streamed)
	run -0 --separate-stderr bash -c 'cat "$1" | leap-rank --key turn,speed' _ "$T/in"
	[[ "$stderr" == *"3 passing records have a timing"* ]]
	# with s0's timing ok, s0 (2.0) beats s1 (1.0): 2.0 > 1.02 * 1.0 -> +1/3 and -1/3
	sed 's/"noisy"/"ok"/' "$T/in" >"$T/in2"
	run -0 --separate-stderr leap-rank --key turn,speed -g 4 "$T/in2"
	[ "$(echo "$output" | jq -r .rank.score | tr '\n' ' ')" = "0.3333333333333333 -0.3333333333333333 0 0 " ]
	[[ "$stderr" == *"2 passing records have a timing"* ]]
	# without speed in the key nothing is said
	run -0 --separate-stderr leap-rank "$T/in"
	[ -z "$stderr" ]
}

@test "leap-rank: a second record of a (group, sample, turn) is an error record naming the first" {
	# group g: s0 fails at turn 1 and passes at turn 2; s1 passes at turn 1; line 4 repeats
	# s0's turn 2 (a re-run appended to the done file). Counted once: s1 (turn 1) beats s0
	# (turn 2): +1 and -1.
	printf '%s\n' '{"group":"g","sample":0,"turn":1,"status":"mismatch","prune":{"decision":"expand"}}' \
		'{"group":"g","sample":1,"turn":1,"status":"pass","prune":{"decision":"final"}}' \
		'{"group":"g","sample":0,"turn":2,"status":"pass","prune":{"decision":"final"}}' \
		'{"group":"g","sample":0,"turn":2,"status":"pass","prune":{"decision":"final"}}' >"$T/in"
	want="$(printf '%s\n' '[0,1,-1,null]' '[1,1,1,null]' '[0,2,-1,null]' '[0,2,null,4]')"
	# from a file (two passes): input order
	run -1 --separate-stderr leap-rank "$T/in"
	[[ "$stderr" == *"$T/in:4: a second record of group 'g', sample 0, turn 2 (the first is $T/in:3); it takes no part"* ]]
	[ "$(echo "$output" | jq -c '[.sample, .turn, .rank.score, .error.line]')" = "$want" ]
	# from a pipe (held): group by group, the duplicate in its place (here: the same order)
	run -1 --separate-stderr bash -c 'cat "$1" | leap-rank' _ "$T/in"
	[[ "$stderr" == *"<stdin>:4: a second record of group 'g', sample 0, turn 2 (the first is <stdin>:3)"* ]]
	[ "$(echo "$output" | jq -c '[.sample, .turn, .rank.score, .error.line]' | sort)" = "$(echo "$want" | sort)" ]
	# streamed (-g 2): found while the group is open (here a repeated turn 1 before it ends);
	# it does not count toward the 2 ended trajectories and is written in its place
	sed -n '1p;1p;2,3p' "$T/in" >"$T/in2"
	run -1 --separate-stderr leap-rank -g 2 "$T/in2"
	[[ "$stderr" == *"$T/in2:2: a second record of group 'g', sample 0, turn 1 (the first is $T/in2:1)"* ]]
	run -0 jq -c '[.sample, .turn, .rank.score, .error.line]' <(echo "$output")
	assert_output "$(printf '%s\n' '[0,1,-1,null]' '[0,1,null,2]' '[1,1,1,null]' '[0,2,-1,null]')"
}

@test "leap-rank: a record leap-prune already marked a duplicate is a duplicate here too" {
	# leap-prune wrote an error record for a duplicate; leap-rank names it again (it is the
	# second record of its (group, sample, turn)) and ranks the first
	printf '%s\n' '{"group":"g","sample":0,"turn":1,"status":"pass"}' '{"group":"g","sample":1,"turn":1,"status":"mismatch"}' \
		'{"group":"g","sample":1,"turn":1,"status":"mismatch","error":{"program":"leap-prune","message":"dup"}}' >"$T/in"
	run -1 --separate-stderr leap-rank "$T/in"
	run -0 jq -c '[.sample, .rank.score, .error.line]' <(leap-rank "$T/in" 2>/dev/null)
	assert_output "$(printf '[0,1,null]\n[1,-1,null]\n[1,null,3]')"
}
