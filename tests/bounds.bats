#!/usr/bin/env bats
# bounds.bats - the memory of every streaming filter stays bounded on long input: N and 4N
# records, made on the fly and streamed through a pipe (tests/bounds/rss.py), give the same peak
# resident set, under a fixed bound. Grouping filters (leap-prune, leap-rank -g, leap-advantage
# -g) hold one open group at a time here: the input is ordered by group.
#
# Under the sanitizers (make check SANITIZE=1, as CI runs it) every N is halved: the programs run
# five to ten times slower there, and LeakSanitizer already finds memory never freed; what is
# left to this file, memory held while running, still shows on 3N/2 more records (a record
# held costs hundreds of bytes; 64 bytes per record over the 300 000 more break the rule).

load helpers

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	# Under ASan (make check SANITIZE=1) freed memory waits in a quarantine of up to 256 MiB
	# before reuse: the sanitizer's memory, not the program's. Without it the peak is the
	# program's again (plus the shadow of what it holds).
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
	T=$BATS_TEST_TMPDIR
	S=1 # the divisor of every N
	if grep -q -- '-fsanitize=' "$ROOT/build/flags"; then S=2; fi
}

# measure N TEMPLATE COMMAND...: streams N lines made from TEMPLATE into COMMAND; sets rss
# (KiB, the peak of the command's own process: children such as compilers and sandboxes are
# bounded by their own limits), lines (lines it wrote) and status.
measure() {
	local n=$1 template=$2
	shift 2
	local out
	out=$(python3 "$ROOT/tests/bounds/rss.py" "$template" "$n" "$@") || return 1
	read -r _ rss _ lines _ status <<<"$out"
	echo "$* <$n records>: maxrss $rss KiB, $lines lines out, exit $status"
}

# bounded N LIMIT_KIB OUT_PER_IN TEMPLATE COMMAND...: runs COMMAND on N and on 4N records;
# fails unless it exits 0 or 1 both times, writes OUT_PER_IN lines per input line (a fraction
# as a/b; - for any number), peaks under LIMIT_KIB, and peaks no higher on 4N records than on N, but for 1/8
# (at least 2 MiB) of allocator noise and the 16 MiB of free heap the readers keep on top of
# the heap (lib/core/jsonl.c: M_TOP_PAD; its pages are touched bit by bit, so a filter's peak
# climbs to about 18 MiB over its first few hundred thousand records, then stays): a leak of
# 32 bytes per record over the 3N more records (600 000 with N = 200 000) breaks that rule.
bounded() {
	local n=$1 limit=$2 ratio=$3 template=$4
	shift 4
	local n4=$((4 * n)) num=${ratio%/*} den=${ratio#*/}
	[ "$num" != "$ratio" ] || den=1
	[ "$ratio" != - ] || num=-1
	measure "$n" "$template" "$@"
	[ "$status" -le 1 ] || { echo "exit status $status"; return 1; }
	[ "$num" -lt 0 ] || [ "$lines" -eq $((n * num / den)) ] || { echo "expected $((n * num / den)) lines"; return 1; }
	local rss1=$rss
	measure "$n4" "$template" "$@"
	[ "$status" -le 1 ] || { echo "exit status $status"; return 1; }
	[ "$num" -lt 0 ] || [ "$lines" -eq $((n4 * num / den)) ] || { echo "expected $((n4 * num / den)) lines"; return 1; }
	local slack=$((rss1 / 8 > 2048 ? rss1 / 8 : 2048))
	slack=$((slack + 16384)) # the free heap the readers keep on top (M_TOP_PAD, lib/core/jsonl.c)
	[ "$rss1" -le "$limit" ] || { echo "peak $rss1 KiB on $n records is above $limit KiB"; return 1; }
	[ "$rss" -le "$limit" ] || { echo "peak $rss KiB on $n4 records is above $limit KiB"; return 1; }
	[ "$rss" -le $((rss1 + slack)) ] ||
		{ echo "peak grew from $rss1 KiB ($n records) to $rss KiB ($n4 records)"; return 1; }
}

# A record with every field leap owns, unknown fields, and a malformed line now and then.
records_template() {
	cat >"$T/rec.t" <<-'EOF2'
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":0,"turn":1,"backend":"cpu","completion":"```c\nint x;\n```","status":"pass","tokens":12,"x":{"a":[1,2,3],"s":"é😀\u0000"}}
		{"id":@K@,"task":"softmax","group":"g@C@","sample":1,"turn":2,"backend":"cpu","status":"mismatch","verify":{"status":"mismatch","cases":0},"y":[null,true,-0.0,1e300]}
		{bad line @K@
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":2,"turn":1,"status":"no_code","messages":[{"role":"user","content":"hi"}]}
	EOF2
}

@test "bounds: the measure catches a filter whose memory grows with its input (awk holding every line)" {
	printf '{"id":@K@,"pad":"%0200d"}\n' 0 >"$T/hold.t"
	run -1 bounded 100000 262144 1 "$T/hold.t" awk '{a[NR] = $0} END {for (i = 1; i <= NR; i++) print a[i]}'
	assert_line --partial "peak grew from"
}

@test "bounds: leap-record keeps its memory on N and 4N records (N = 200 000)" {
	records_template
	run -0 bounded $((200000 / S)) 32768 1 "$T/rec.t" leap-record
	echo "$output"
}

@test "bounds: leap-prompt --file - keeps its memory on N and 4N task ids (N = 20 000)" {
	printf 'vector_add\nsoftmax\n# a comment @K@\nmatmul\n' >"$T/ids.t"
	run -0 bounded $((20000 / S)) 32768 3/4 "$T/ids.t" leap-prompt --backend cpu --file -
	echo "$output"
}

@test "bounds: leap-compile keeps its memory on N and 4N records (N = 50 000, cache hits)" {
	jq -nc --rawfile c "$FIXTURES/leap-verify/correct.c" '{id: "@K@", task: "vector_add", backend: "cpu", code: $c} | .id = "ID"' |
		sed 's/"ID"/@K@/' >"$T/compile.t"
	jq -nc --rawfile c "$FIXTURES/leap-verify/correct.c" '{id: "ID", task: "vector_add", group: "g@C@", completion: ("```c\n" + $c + "```")}' |
		sed 's/"ID"/@K@/' >>"$T/compile.t"
	echo '{"id":@K@,"task":"vector_add","completion":"no code @K@"}' >>"$T/compile.t"
	echo '{bad @K@' >>"$T/compile.t"
	run -0 bounded $((50000 / S)) 65536 1 "$T/compile.t" leap-compile --backend cpu --jobs 2 --no-progress
	echo "$output"
}

@test "bounds: leap-verify keeps its memory on N and 4N records (N = 3 000, a tenth run in the sandbox)" {
	jq -nc --rawfile c "$FIXTURES/leap-verify/correct.c" '{task: "vector_add", backend: "cpu", code: $c}' >"$T/one.jsonl"
	leap-compile --no-progress "$T/one.jsonl" | sed 's/^{/{"id":@K@,/' >"$T/verify.t"
	for _ in 1 2 3 4 5 6 7 8; do
		echo '{"id":@K@,"task":"vector_add","backend":"cpu","compile":{"status":"error"},"status":"compile_error"}' >>"$T/verify.t"
	done
	echo '{bad @K@' >>"$T/verify.t"
	grep -q '"status":"ok"' "$T/verify.t"
	run -0 bounded $((3000 / S)) 65536 1 "$T/verify.t" leap-verify --seed 1 --timeout 10 --no-progress
	echo "$output"
}

# A GRPO group of 4 turn-1 records (2 pass, 2 fail: expanded) per cycle, one group at a time.
group_template() {
	cat >"$T/group.t" <<-'EOF2'
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":0,"turn":1,"status":"pass","bench":{"speedup":1.5},"tokens":10,"reward":1,"z":"é"}
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":1,"turn":1,"status":"mismatch","verify":{"message":"wrong @K@"},"tokens":20,"reward":0}
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":2,"turn":1,"status":"pass","bench":{"speedup":0.5},"tokens":30,"reward":0.5}
		{"id":@K@,"task":"vector_add","group":"g@C@","sample":3,"turn":1,"status":"compile_error","compile":{"message":"x"},"tokens":40,"reward":0}
	EOF2
}

@test "bounds: leap-prune holds one group: same memory on N and 4N records (N = 200 000)" {
	group_template
	# Half of each group is expanded: two next-turn records on stdout per four in.
	run -0 bounded $((200000 / S)) 32768 1/2 "$T/group.t" leap-prune --group-size 4 --done /dev/null --no-progress
	echo "$output"
}

@test "bounds: leap-rank -g holds one group: same memory on N and 4N records (N = 200 000)" {
	group_template
	run -0 bounded $((200000 / S)) 32768 1 "$T/group.t" leap-rank --group-size 4 --no-progress
	echo "$output"
}

@test "bounds: leap-advantage (rank, and grpo -g) keeps its memory on N and 4N records (N = 200 000)" {
	group_template
	sed 's/"reward"/"rank":{"score":0.5,"turns":1},"reward"/' "$T/group.t" >"$T/ranked.t"
	run -0 bounded $((200000 / S)) 32768 1 "$T/ranked.t" leap-advantage --no-progress
	echo "$output"
	run -0 bounded $((200000 / S)) 32768 1 "$T/group.t" leap-advantage --estimator grpo --group-size 4 --no-progress
	echo "$output"
}

@test "bounds: leap-report keeps its memory on N and 4N records of 256 trajectories (N = 200 000)" {
	# The report keeps a summary per trajectory (group and sample) and per task: the input
	# cycles over 64 groups of 4, so its memory must not grow with the number of records.
	group_template
	sed 's/"g@C@"/"g@M@"/' "$T/group.t" >"$T/report.t"
	run -0 bounded $((200000 / S)) 32768 - "$T/report.t" leap-report -f json
	echo "$output"
}
