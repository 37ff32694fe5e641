#!/usr/bin/env bats
# bench.bats - the benchmark peers (bench/jq, bench/ref-*.py) compute what leap computes, so they cannot drift.
load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	B="$ROOT/bench"
	JQ=(jq -n -c -L "$B/jq")
	# 400 records: a turn for leap-prune, a done file in group order and in turn order
	"$B/gen-records" --records 400 --mode turn --seed 3 >"$T/turn"
	"$B/gen-records" --records 400 --mode done --seed 3 >"$T/done"
	"$B/gen-records" --records 400 --mode done --order turn --seed 3 >"$T/doneturn"
	leap-rank -g 16 "$T/done" >"$T/ranked" 2>/dev/null
}

# check FIELD LEAP-OUTPUT PEER-OUTPUT [N]: peer-check.py agrees, on every record (N, default 400).
check() {
	run -0 python3 "$B/peer-check.py" "$1" "$2" "$3"
	assert_output --partial "${4:-400} records, $1 the same as leap's"
}

@test "bench peers: prune in jq and Python decides as leap-prune" {
	# generated groups, then the hand-made turn (a hopeless group among them), cut short
	cat "$T/turn" "$FIXTURES/leap-prune/turn1.jsonl" >"$T/in"
	leap-prune -g 16 --annotate "$T/in" >"$T/leap" 2>/dev/null
	"${JQ[@]}" --argjson g 16 -f "$B/jq/prune.jq" "$T/in" >"$T/jq"
	python3 "$B/ref-prune.py" -g 16 "$T/in" >"$T/py"
	check prune "$T/leap" "$T/jq" 408
	check prune "$T/leap" "$T/py" 408
	[ "$(jq -r .prune.reason "$T/leap" | sort -u | tr '\n' ' ')" = "easy failed hopeless solved " ]
	[ "$(jq -c 'select(.prune.complete == false)' "$T/leap" | wc -l)" -eq 8 ]
	# without --group-size a group is decided at the end of input, complete
	leap-prune --annotate "$FIXTURES/leap-prune/turn1.jsonl" >"$T/leap"
	"${JQ[@]}" --argjson g 0 -f "$B/jq/prune.jq" "$FIXTURES/leap-prune/turn1.jsonl" >"$T/jq"
	python3 "$B/ref-prune.py" "$FIXTURES/leap-prune/turn1.jsonl" >"$T/py"
	check prune "$T/leap" "$T/jq" 8
	check prune "$T/leap" "$T/py" 8
	# turn 2: next-turn records carry the gate (verdict, turn, n_fail, group_size) in `dcp`,
	# which every peer reports, with this turn's counts beside it; one in two now passes
	leap-prune -g 16 --done "$T/done1" "$T/in" 2>/dev/null | jq -c '.status = (if .sample % 2 == 0 then "pass" else "mismatch" end)' >"$T/turn2"
	n=$(wc -l <"$T/turn2")
	[ "$n" -gt 0 ]
	leap-prune --annotate "$T/turn2" >"$T/leap"
	"${JQ[@]}" --argjson g 0 -f "$B/jq/prune.jq" "$T/turn2" >"$T/jq"
	python3 "$B/ref-prune.py" "$T/turn2" >"$T/py"
	check prune "$T/leap" "$T/jq" "$n"
	check prune "$T/leap" "$T/py" "$n"
	[ "$(jq -c 'select(.prune.group_size != .prune.turn_records)' "$T/leap" | wc -l)" -gt 0 ]
}

@test "bench peers: rank in jq and Python scores as leap-rank (streamed and two passes)" {
	leap-rank -g 16 "$T/done" >"$T/leap" 2>/dev/null
	"${JQ[@]}" --argjson g 16 -f "$B/jq/rank.jq" "$T/done" >"$T/jq"
	python3 "$B/ref-rank.py" -g 16 "$T/done" >"$T/py"
	check rank "$T/leap" "$T/jq"
	check rank "$T/leap" "$T/py"
	leap-rank "$T/doneturn" >"$T/leap2" 2>/dev/null
	python3 "$B/ref-rank.py" "$T/doneturn" >"$T/py2"
	check rank "$T/leap2" "$T/py2"
}

@test "bench peers: advantage rank, grpo and kevin in jq and Python as leap-advantage" {
	leap-advantage "$T/ranked" >"$T/leap"
	"${JQ[@]}" --arg est rank --arg reward field --argjson g 0 -f "$B/jq/advantage.jq" "$T/ranked" >"$T/jq"
	python3 "$B/ref-advantage.py" "$T/ranked" >"$T/py"
	check advantage "$T/leap" "$T/jq"
	check advantage "$T/leap" "$T/py"
	for e in "grpo binary" "kevin kevin"; do
		set -- $e
		leap-advantage -e "$1" -r "$2" -g 16 "$T/done" >"$T/leap" 2>/dev/null
		"${JQ[@]}" --arg est "$1" --arg reward "$2" --argjson g 16 -f "$B/jq/advantage.jq" "$T/done" >"$T/jq"
		python3 "$B/ref-advantage.py" -e "$1" -r "$2" -g 16 "$T/done" >"$T/py"
		check advantage "$T/leap" "$T/jq"
		check advantage "$T/leap" "$T/py"
		# some advantages are not zero: the comparison is not between zeros
		[ "$(jq -c 'select(.advantage != 0)' "$T/leap" | wc -l)" -gt 50 ]
	done
	leap-advantage -e grpo -r binary "$T/doneturn" >"$T/leap" 2>/dev/null
	python3 "$B/ref-advantage.py" -e grpo -r binary "$T/doneturn" >"$T/py"
	check advantage "$T/leap" "$T/py"
}

@test "bench peers: peer-check.py fails on a different number, decision or record order" {
	leap-advantage -e kevin -r kevin -g 16 "$T/done" >"$T/leap" 2>/dev/null
	sed '7s/"advantage":\(-\{0,1\}[0-9]\)/"advantage":1\1/' "$T/leap" >"$T/bad"
	! cmp -s "$T/leap" "$T/bad"
	run -1 python3 "$B/peer-check.py" advantage "$T/leap" "$T/bad"
	assert_output --partial "record 7 differs"
	leap-prune -g 16 --annotate "$T/turn" >"$T/leap" 2>/dev/null
	sed '3s/"reason":"[a-z_]*"/"reason":"other"/' "$T/leap" >"$T/bad"
	run -1 python3 "$B/peer-check.py" prune "$T/leap" "$T/bad"
	{ sed -n 2p "$T/leap"; sed 2d "$T/leap"; } >"$T/bad"
	run -1 python3 "$B/peer-check.py" prune "$T/leap" "$T/bad"
	head -n 399 "$T/leap" >"$T/bad"
	run -1 python3 "$B/peer-check.py" prune "$T/leap" "$T/bad"
	assert_output --partial "not the same number of records"
}
