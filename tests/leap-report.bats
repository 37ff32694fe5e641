#!/usr/bin/env bats
# leap-report.bats - run summaries checked against numbers computed by hand from a small rollout.
load helpers

# done.jsonl: 3 tasks, 10 trajectories, 15 records and one malformed line (see the expected
# values below; each was worked out by hand from the fixture, not by the program).
DONE="$FIXTURES/leap-report/done.jsonl"

@test "pass by turn, recovery, fast_p and geomean speedup match the hand computation" {
	run --separate-stderr -1 leap-report --format json "$DONE"
	all="$(jq -c '.all' <<<"$output")"
	assert_equal "$(jq -c '.pass_at_turn' <<<"$all")" '[0.3,0.4,0.5]'
	assert_equal "$(jq -c '[.recovery[] | [.failed, .recovered]]' <<<"$all")" '[[3,1],[2,1]]'
	assert_equal "$(jq -c '.fast_p' <<<"$all")" '{"0":0.5,"0.5":0.4,"0.8":0.4,"1":0.3,"1.5":0.2,"2":0.1}'
	# (2 * 0.5 * 1.2 * 4 * 1) ^ (1/5)
	assert_equal "$(jq '.geomean_speedup * 10000 | round' <<<"$all")" 13685
	assert_equal "$(jq -c '[.records, .errors, .trajectories, .turns]' <<<"$output")" '[16,1,10,3]'
	assert_equal "$(jq -c '[.tasks[] | [.task, .trajectories, .solved]]' <<<"$output")" '[["A",4,3],["B",4,0],["C",2,2]]'
}

@test "outcome shares are over records" {
	run --separate-stderr -1 leap-report --format json "$DONE"
	assert_equal "$(jq -c '.outcomes | map_values(. * 15 | round)' <<<"$output")" \
		'{"no_code":0,"compile_error":5,"runtime_error":1,"timeout":1,"mismatch":3,"pass":5}'
}

@test "the DCP ledger counts group decisions and estimates the work saved" {
	run --separate-stderr -1 leap-report --format json "$DONE"
	dcp="$(jq -c .dcp <<<"$output")"
	assert_equal "$(jq -c '.groups' <<<"$dcp")" '{"expanded":2,"easy":1,"hopeless":1,"max_turns":1,"solved":0,"other":0}'
	# group B (4 samples) pruned hopeless at turn 1 of 3: 8 trajectory-turns not run;
	# 15 records cost 1.5 s each: 22.5 s spent, 22.5 + 8 * 1.5 = 34.5 s unpruned
	assert_equal "$(jq -c '[.trajectories_ended_early, .turns_saved, .spent_s, .unpruned_s]' <<<"$dcp")" '[4,8,22.5,34.5]'
}

@test "advantage statistics" {
	run --separate-stderr -1 leap-report --format json "$DONE"
	assert_equal "$(jq -c '.advantage | [.n, .groups, .zero_variance_groups, .mean, .min, .max, .zero_share]' <<<"$output")" \
		'[10,3,2,0,-1.5,1,0.7]'
	assert_equal "$(jq '.advantage.std * 10000 | round' <<<"$output")" 5916
}

@test "text, markdown and csv renderings" {
	run --separate-stderr -1 leap-report "$DONE"
	assert_line --regexp '^  all +10 +0\.300 +0\.400 +0\.500 +0\.333 +0\.500 +0\.300 +1\.37x +-$'
	[[ "$stderr" == *"done.jsonl:8: invalid JSON"* ]]
	run --separate-stderr -1 leap-report --format markdown "$DONE"
	assert_line '| task | n | pass@1 | pass@2 | pass@3 | rec1>2 | rec2>3 | fast_1 | geomean | roofline |'
	run --separate-stderr -1 leap-report --format csv "$DONE"
	assert_equal "$(sed -n 1p <<<"$output")" 'task,n,pass@1,pass@2,pass@3,rec1>2,rec2>3,fast_1,geomean,roofline'
	assert_equal "$(wc -l <<<"$output")" 5
}

@test "--plot writes five SVG charts that parse as XML" {
	run --separate-stderr -1 leap-report --plot "$BATS_TEST_TMPDIR/plots" "$DONE"
	for f in pass-by-turn tasks speedup dcp advantage; do
		[ -s "$BATS_TEST_TMPDIR/plots/$f.svg" ]
		python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$BATS_TEST_TMPDIR/plots/$f.svg"
	done
	# speedups 0.5, 1.2, 1.0, 2.0, 4.0 in the bins <0.25 .25-.5 .5-.8 .8-1 1-1.5 1.5-2 2-4 >=4
	assert_equal "$(grep -o '<title>trajectories: [0-9]*' "$BATS_TEST_TMPDIR/plots/speedup.svg" | cut -d' ' -f2 | tr '\n' ' ')" "0 0 1 0 2 0 1 1 "
}

@test "without timing data fast_p for p > 0 is unknown, not 0: null, '-' and 'no timing data'" {
	jq -rR '(fromjson | del(.bench) | tojson)? // .' "$DONE" >"$BATS_TEST_TMPDIR/untimed.jsonl"
	run --separate-stderr -1 leap-report --format json "$BATS_TEST_TMPDIR/untimed.jsonl"
	assert_equal "$(jq -c '.all.fast_p' <<<"$output")" '{"0":0.5,"0.5":null,"0.8":null,"1":null,"1.5":null,"2":null}'
	assert_equal "$(jq -c '[.tasks[].fast_p."1"]' <<<"$output")" '[null,0,null]'
	run --separate-stderr -1 leap-report --plot "$BATS_TEST_TMPDIR/plots" "$BATS_TEST_TMPDIR/untimed.jsonl"
	assert_line --regexp '^  all +10 +0\.300 +0\.400 +0\.500 +0\.333 +0\.500 +- +- +-$'
	assert_line "  no timing data: fast_p for p > 0 and speedups need leap-bench's times"
	assert_line "fast_p: correct and speedup > p, over all trajectories (no timing data)"
	assert_line --regexp '^  0\.5 +- +-$'
	assert_line --regexp '^  0 +0\.500 +0\.500$'
	# the speedup chart says so instead of drawing empty bins
	grep -q '>no timing data' "$BATS_TEST_TMPDIR/plots/speedup.svg"
	refute [ -n "$(grep '<rect x=[^>]*><title>' "$BATS_TEST_TMPDIR/plots/speedup.svg")" ]
}

@test "fast_p from ok speedups and from their intervals' lower ends; noisy timings said, never 'no timing data'" {
	# four correct trajectories: ok 1.2 [1.1, 1.3], ok 1.05 [0.98, 1.12], noisy (interval +-30%),
	# noisy with too few pairs; one wrong
	printf '%s\n' '{"task":"t","group":"t","sample":0,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.2,"speedup_ci":[1.1,1.3],"speedup_rel_ci":0.083,"target_ci":0.1}}' \
		'{"task":"t","group":"t","sample":1,"turn":1,"status":"pass","bench":{"status":"ok","speedup":1.05,"speedup_ci":[0.98,1.12],"speedup_rel_ci":0.067,"target_ci":0.1}}' \
		'{"task":"t","group":"t","sample":2,"turn":1,"status":"pass","bench":{"status":"noisy","speedup":0,"measured_speedup":1.5,"speedup_ci":[1.1,2.0],"speedup_rel_ci":0.3,"target_ci":0.05}}' \
		'{"task":"t","group":"t","sample":3,"turn":1,"status":"pass","bench":{"status":"noisy","speedup":0,"measured_speedup":0.9,"target_ci":0.05}}' \
		'{"task":"t","group":"t","sample":4,"turn":1,"status":"mismatch"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-report --format json "$BATS_TEST_TMPDIR/in.jsonl"
	# fast_1: 2 of 5 above 1; their lower ends: 1.1 only
	assert_equal "$(jq -c '[.all.fast_p."1", .all.fast_p_lower."1", .all.fast_p."0"]' <<<"$output")" '[0.4,0.2,0.8]'
	assert_equal "$(jq -c '.timings' <<<"$output")" \
		'{"timed":4,"ok":2,"noisy":2,"suspicious":0,"noisy_too_few":1,"noisy_rel_ci":[0.3,0.3],"target_ci":[0.05,0.05]}'
	run -0 leap-report "$BATS_TEST_TMPDIR/in.jsonl"
	assert_line "  2 of 4 timings noisy: intervals 30% to 30% against 5%; 1 with too few pairs for an interval (no speedup; leap-bench --max-time longer, or a quieter machine)"
	assert_line --regexp '^  1 +0\.400 +0\.200$'
	refute_output --partial "no timing data"
	# every timing noisy: fast_p unknown, and said why, not "no timing data"
	jq -c 'select(.bench.status != "ok")' "$BATS_TEST_TMPDIR/in.jsonl" >"$BATS_TEST_TMPDIR/noisy.jsonl"
	run -0 leap-report --plot "$BATS_TEST_TMPDIR/plots" "$BATS_TEST_TMPDIR/noisy.jsonl"
	refute_output --partial "no timing data"
	assert_line --partial "2 of 2 timings noisy"
	grep -q '>no ok timing: 2 of 2 timings noisy or suspicious' "$BATS_TEST_TMPDIR/plots/speedup.svg"
}

@test "csv: the per-task table as numbers a program reads back, empty cells for none" {
	run --separate-stderr -1 leap-report --format csv "$DONE"
	python3 -c '
import csv, io, json, sys
rows = list(csv.reader(io.StringIO(sys.argv[1])))
assert rows[0][:2] == ["task", "n"], rows[0]
for r in rows[1:]:
    for c in r[1:]:
        assert c == "" or float(c) == float(c), r   # every cell a number or empty
all_ = dict(zip(rows[0], rows[-1]))
assert all_["task"] == "all" and all_["n"] == "10", all_
assert abs(float(all_["geomean"]) - 1.36851) < 1e-5, all_    # not "1.37x"
assert all_["roofline"] == "", all_                           # not "-"
b = dict(zip(rows[0], rows[2]))
assert b["task"] == "B" and b["geomean"] == "" and b["rec1>2"] == "", b
' "$output"
}

@test "charts: axis titles, n and backend in the title, a y-range close to the data, every bin labelled" {
	run --separate-stderr -1 leap-report --plot "$BATS_TEST_TMPDIR/plots" "$DONE"
	python3 - "$BATS_TEST_TMPDIR/plots" <<'PY'
import re, sys, xml.dom.minidom as md
want_x = {"pass-by-turn": "turn", "tasks": "task", "speedup": "speedup over the baseline (best correct turn)",
          "dcp": "turn", "advantage": "advantage (bin centre)"}
ncat = {"pass-by-turn": 3, "tasks": 3, "speedup": 8, "dcp": 3, "advantage": 20}
for name, xlabel in want_x.items():
    doc = md.parse(f"{sys.argv[1]}/{name}.svg")
    texts = {t.getAttribute("class") or "": t.firstChild.data if t.firstChild else ""
             for t in doc.getElementsByTagName("text")}
    title = doc.getElementsByTagName("text")[0].firstChild.data
    assert title.endswith("(10 trajectories, 3 tasks, cpu)"), (name, title)
    assert texts.get("xtitle") == xlabel, (name, "x-axis title", texts.get("xtitle"))
    # every category labelled
    labels = [t for t in doc.getElementsByTagName("text") if t.getAttribute("class") == "category"]
    assert len(labels) == ncat[name] and all(l.firstChild for l in labels), (name, len(labels))
    # the y-axis ends within 30% above the largest bar
    values = [float(r.getElementsByTagName("title")[0].firstChild.data.rsplit(": ", 1)[1])
              for r in doc.getElementsByTagName("rect") if r.getElementsByTagName("title")]
    ticks = [float(t.firstChild.data) for t in doc.getElementsByTagName("text") if t.getAttribute("class") == "tick"]
    top, vmax = max(ticks), max(values)
    assert vmax <= top <= 1.3 * vmax, (name, "y-axis up to", top, "for data up to", vmax)
print("ok")
PY
	# the per-task view: turn-1 and last-turn pass rates of A (1 of 4, 3 of 4), B (0), C (2 of 2)
	assert_equal "$(grep -o '<title>solved at turn 1: [0-9.]*' "$BATS_TEST_TMPDIR/plots/tasks.svg" | cut -d' ' -f5 | tr '\n' ' ')" "0.25 0 1 "
	assert_equal "$(grep -o '<title>solved by the last turn: [0-9.]*' "$BATS_TEST_TMPDIR/plots/tasks.svg" | cut -d' ' -f6 | tr '\n' ' ')" "0.75 0 1 "
}

@test "an empty input gives an empty report, exit 0" {
	run -0 leap-report --format json </dev/null
	assert_equal "$(jq -c '[.records, .trajectories, .all.fast_p."1"]' <<<"$output")" '[0,0,null]'
}

@test "usage errors" {
	run --separate-stderr -2 leap-report --format xml
	[[ "$stderr" == *"--format: 'xml' is not text, markdown, json or csv"* ]]
	run --separate-stderr -2 leap-report --max-turns 0
}

@test "leap-report: a second record of a (group, sample, turn) is named, counted as an error and not summarised" {
	# g: s0 passes (advantage 1), s1 fails (-1); line 3 repeats s1's turn 1 as a pass with
	# advantage 5 (a turn re-run into the same done file). Counted once: pass rate 1/2, the
	# advantages {1, -1}: mean 0, max 1.
	printf '%s\n' '{"task":"t","group":"g","sample":0,"turn":1,"status":"pass","advantage":1}' \
		'{"task":"t","group":"g","sample":1,"turn":1,"status":"mismatch","advantage":-1}' \
		'{"task":"t","group":"g","sample":1,"turn":1,"status":"pass","advantage":5}' >"$BATS_TEST_TMPDIR/in"
	run -1 --separate-stderr leap-report --format json "$BATS_TEST_TMPDIR/in"
	[[ "$stderr" == *"in:3: a second record of group 'g', sample 1, turn 1 (the first is $BATS_TEST_TMPDIR/in:2)"* ]]
	run -0 jq -c '[.records, .errors, .duplicates, .all.pass_at_turn, .advantage.n, .advantage.mean, .advantage.max]' <(echo "$output")
	assert_output '[3,1,1,[0.5],2,0,1]'
}

@test "the report says what the speedups are against: bench.baseline_kind of each timed trajectory's best" {
	# task A's three timed trajectories against a vendor library, C's two against a kernel
	jq -Rc 'fromjson? | if .bench.speedup then .bench.baseline_kind = (if .task == "A" then "vendor" else "kernel" end) else . end' \
		"$DONE" >"$BATS_TEST_TMPDIR/kinds.jsonl"
	run --separate-stderr -0 leap-report --format json "$BATS_TEST_TMPDIR/kinds.jsonl"
	assert_equal "$(jq -c '.all.against' <<<"$output")" '{"vendor":3,"kernel":2}'
	assert_equal "$(jq -c '[.tasks[] | .against]' <<<"$output")" '[{"vendor":3},{},{"kernel":2}]'
	run --separate-stderr -0 leap-report "$BATS_TEST_TMPDIR/kinds.jsonl"
	assert_line "  speedups are against: a vendor library (cuBLAS, cuDNN) in 3 timed trajectories, a hand-written CUDA kernel in 2 timed trajectories"
	# a module task's speedups are against torch itself: KernelBench's metric is computable against it
	jq -Rc 'fromjson? | if .bench.speedup then .bench.baseline_kind = "torch-eager" else . end' \
		"$DONE" >"$BATS_TEST_TMPDIR/torch.jsonl"
	run --separate-stderr -0 leap-report --metric kernelbench --format json "$BATS_TEST_TMPDIR/torch.jsonl"
	assert_equal "$(jq -c '.all.against' <<<"$output")" '{"torch-eager":5}'
	run --separate-stderr -0 leap-report "$BATS_TEST_TMPDIR/torch.jsonl"
	assert_line "  speedups are against: PyTorch eager (a module task's torch) in 5 timed trajectories"
	# or against torch.compile: counted apart, and KernelBench's metric over both says it mixes them
	jq -Rc 'fromjson? | if .bench.speedup then .bench.baseline_kind = (if .task == "A" then "torch-compile" else "torch-eager" end) else . end' \
		"$DONE" >"$BATS_TEST_TMPDIR/both.jsonl"
	run --separate-stderr -0 leap-report --metric kernelbench --format json "$BATS_TEST_TMPDIR/both.jsonl"
	assert_equal "$(jq -c '[.all.against, .kernelbench.against]' <<<"$output")" \
		'[{"torch-eager":2,"torch-compile":3},{"torch-eager":2,"torch-compile":3}]'
	run --separate-stderr -0 leap-report --metric kernelbench "$BATS_TEST_TMPDIR/both.jsonl"
	assert_line "  speedups are against: PyTorch eager (a module task's torch) in 2 timed answers, torch.compile (a module task's torch) in 3 timed answers"
	assert_line --partial "the fast_p above mixes baselines"
	run --separate-stderr -0 leap-report --metric kernelbench "$BATS_TEST_TMPDIR/torch.jsonl"
	refute_line --partial "mixes baselines"
	# records of before baseline_kind: said to be unnamed, not guessed
	run --separate-stderr -1 leap-report "$DONE"
	assert_line "  speedups are against: an unnamed baseline (records of before baseline_kind) in 5 timed trajectories"
}

@test "--metric kernelbench: fast_0, fast_1, fast_2 per answer match the hand computation, beside leap's per trajectory" {
	# 7 answers: correct A0t1 (0.5x), A0t2 (2.5x), A1t2 (1.5x), B0t2 (noisy: no speedup), B1t1 (3x); A1t1 and B0t1
	# wrong. Per answer: fast_0 5/7, fast_1 3/7 (2.5, 1.5, 3), fast_2 2/7 (2.5, 3); turn 1: 2/4, 1/4, 1/4;
	# turn 2: 3/3, 2/3, 1/3. Per trajectory (best turn): fast_1 3/4, fast_2 2/4.
	F="$FIXTURES/leap-report/kernelbench.jsonl"
	run -0 leap-report --metric kernelbench -f json "$F"
	run -0 jq -e '.kernelbench | (.answers == 7) and ((.fast_p["0"] - 5/7) | fabs < 1e-12) and
		((.fast_p["1"] - 3/7) | fabs < 1e-12) and ((.fast_p["2"] - 2/7) | fabs < 1e-12) and
		(.by_turn == [{"turn":1,"answers":4,"fast_p":{"0":0.5,"1":0.25,"2":0.25}},
			      {"turn":2,"answers":3,"fast_p":{"0":1,"1":(2/3),"2":(1/3)}}]) and
		(.against == {"vendor":3,"kernel":1})' <<<"$output"
	# leap's own fast_p stays per trajectory, best over its turns
	run -0 leap-report --metric kernelbench -f json "$F"
	run -0 jq -c '.all.fast_p | [.["0"], .["1"], .["2"]]' <<<"$output"
	assert_output "[1,0.75,0.5]"
	# the text labels each and says what the speedups are against
	run -0 leap-report --metric kernelbench "$F"
	assert_output --partial "fast_p: correct and speedup > p, over all trajectories"
	assert_output --partial "KernelBench fast_p: per answer (every record counts: correct and speedup > p, over all answers)"
	assert_output --regexp "  all +7 +0\.714 +0\.429 +0\.286"
	assert_output --regexp "  1 +4 +0\.500 +0\.250 +0\.250"
	assert_output --partial "speedups are against: a vendor library (cuBLAS, cuDNN) in 3 timed answers, a hand-written CUDA kernel in 1 timed answer"
	assert_output --partial "KernelBench's speedups are against PyTorch eager"
	# without the option the report is leap's alone
	run -0 leap-report "$F"
	refute_output --partial "KernelBench fast_p"
	run -0 leap-report -f json "$F"
	run -0 jq -e 'has("kernelbench") | not' <<<"$output"
}

@test "--metric kernelbench: without timing data fast_1 and fast_2 are unknown, not 0; a bad metric is a usage error" {
	run -0 bash -c 'jq -c "del(.bench)" "$1" | leap-report --metric kernelbench -f json' _ "$FIXTURES/leap-report/kernelbench.jsonl"
	run -0 jq -c '.kernelbench.fast_p' <<<"$output"
	assert_output '{"0":0.7142857142857143,"1":null,"2":null}'
	run -2 --separate-stderr leap-report --metric fast "$FIXTURES/leap-report/kernelbench.jsonl"
	[[ "$stderr" == *"--metric: 'fast' is not leap or kernelbench"* ]]
}

@test "the DCP ledger names what each column counts, and says the work saved in words" {
	T="$BATS_TEST_TMPDIR"
	# issue 30: an unexplained "other" column (groups whose records had all passed) and "saved
	# share 0.000" with no meaning given
	rec() { printf '{"task":"t","group":"g","sample":%d,"turn":%d,"status":"%s","verify":{"ms":1000},"prune":{"decision":"%s","reason":"%s","verdict":"expand"}}\n' "$@"; }
	{ rec 0 1 pass final solved; rec 1 1 mismatch expand failed; rec 1 2 pass final solved; } >"$T/in"
	run -0 --separate-stderr leap-report --format json "$T/in"
	assert_equal "$(jq -c '.dcp.turns' <<<"$output")" \
		'[{"turn":1,"expanded":1,"easy":0,"hopeless":0,"max_turns":0,"solved":0,"other":0},{"turn":2,"expanded":0,"easy":0,"hopeless":0,"max_turns":0,"solved":1,"other":0}]'
	run -0 --separate-stderr leap-report "$T/in"
	assert_output --partial "DCP ledger: groups per turn, by what became of them"
	assert_line --regexp '^  turn +expanded +easy +hopeless +solved$'
	assert_line --regexp '^  2 +0 +0 +0 +1$'
	assert_line "  solved: every record it had left passed"
	assert_line "  expanded: some record of the group went on to the next turn"
	refute_output --partial "other"
	# nothing ended early: said in words, not as a share of 0
	assert_line "  DCP ended no trajectory early: no turn was saved (compile and run time spent: 3.0 s)"
	refute_output --partial "saved share"
	# the hand-computed rollout: 4 trajectories ended early, 8 turns, 22.5 s of 34.5 s
	run --separate-stderr -1 leap-report "$DONE"
	assert_line "  DCP ended 4 failing trajectories early (easy or hopeless before turn 3): 8 trajectory-turns not run; compile and run time 22.5 s, about 34.5 s without pruning (each turn not run priced at the mean cost of a record): about 35% saved"
}
