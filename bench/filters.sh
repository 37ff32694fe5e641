#!/usr/bin/env bash
# filters.sh - leap-prune, leap-rank and leap-advantage: throughput and peak memory, against cat, jq and Python.
#
# usage: bench/filters.sh [RECORDS] [DIR]   (default 1000000 records; data in /tmp/leap-bench)
#        env PEER_RECORDS (default 100000): records of the jq / Python comparison;
#        BEST (default 3): leap and Python run BEST times there, the run with the least CPU counts
#
# Part 1 runs leap alone on RECORDS records (generated once by bench/gen-records and kept in
# DIR: a turn, leap-prune's input, and a done file in group order and in turn order) against
# `cat` (the physical ceiling). Part 2 runs leap, the jq programs (bench/jq/) and the Python
# scripts (bench/ref-*.py) on the same PEER_RECORDS records, checks with bench/peer-check.py
# that every peer wrote the same numbers as leap (the script fails on any difference), and
# gives the ratios. Throughput is over CPU time (user + sys: the machine may be shared) and
# over elapsed time; peak RSS from /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${2:-/tmp/leap-bench}
np=${PEER_RECORDS:-100000}
BEST=${BEST:-3}
[ "$np" -le "$n" ] || np=$n
mkdir -p "$dir"
bin=$PWD/bin
gen=$PWD/bench/gen-records
. bench/lib.sh
export LC_ALL=C

# the data, generated once per size
data() { # NAME RECORDS GEN-ARGS...
	local f="$dir/$1.$2.jsonl"
	[ -s "$f" ] || { nice -n 10 "$gen" --records "$2" "${@:3}" >"$f.tmp" && mv "$f.tmp" "$f"; }
}
for k in "$n" "$np"; do
	data turn "$k" --mode turn
	# the done file in group order and, from the same pass, in turn order
	[ -s "$dir/doneturn.$k.jsonl" ] || rm -f "$dir/done.$k.jsonl"
	data "done" "$k" --mode "done" --turn-order-copy "$dir/doneturn.$k.jsonl"
	[ -s "$dir/ranked.$k.jsonl" ] || { "$bin/leap-rank" --group-size 16 "$dir/done.$k.jsonl" >"$dir/ranked.$k.jsonl.tmp" 2>/dev/null &&
		mv "$dir/ranked.$k.jsonl.tmp" "$dir/ranked.$k.jsonl"; }
done

bench_header "leap-prune, leap-rank, leap-advantage on $n records" "bench/filters.sh $n $dir   (PEER_RECORDS=$np BEST=$BEST)"

# Part 1 ------------------------------------------------------------------------------------
bytes() { stat -L -c %s "$1"; }
printf '%s records: turn %s bytes, done %s bytes (16-sample groups, up to 3 turns)\n\n' "$n" \
	"$(bytes "$dir/turn.$n.jsonl")" "$(bytes "$dir/done.$n.jsonl")"
printf '    %-46s %8s %8s %10s %10s %9s %8s %9s\n' run "elapsed" "cpu" "rec/s" "rec/s" "MB/s" "of cat" "peak RSS"
printf '    %-46s %8s %8s %10s %10s %9s %8s %9s\n' "" "s" "s" "elapsed" "cpu" "cpu" "cpu" "MiB"
cat_mbs=0
row1() { # NAME FILE CMD... (CMD reads FILE)
	local name=$1 file=$2
	shift 2
	timed /dev/null "$@"
	local mbs
	mbs=$(awk -v b="$(bytes "$file")" -v t="$T_CPU" 'BEGIN { printf "%.0f", (t > 0 ? b / t / 1e6 : 0) }')
	[ "${name#cat}" != "$name" ] && cat_mbs=$mbs
	awk -v name="$name" -v n="$n" -v el="$T_EL" -v cpu="$T_CPU" -v rss="$T_RSS" -v mbs="$mbs" -v cat="$cat_mbs" \
		'function rate(t) { return t > 0 ? sprintf("%10.0f", n / t) : sprintf("%10s", "-") }
		BEGIN { printf "    %-46s %8.2f %8.2f %s %s %9.0f %7.0f%% %9.1f\n", name, el, cpu, rate(el), rate(cpu), mbs,
			(cat > 0 ? 100 * mbs / cat : 0), rss / 1024 }'
}
T=$dir/turn.$n.jsonl D=$dir/done.$n.jsonl DT=$dir/doneturn.$n.jsonl R=$dir/ranked.$n.jsonl
row1 "cat turn (the ceiling)" "$T" cat "$T"
row1 "leap-prune -g 16 --done /dev/null" "$T" "$bin/leap-prune" --group-size 16 --done /dev/null "$T"
row1 "leap-prune -g 16 --annotate" "$T" "$bin/leap-prune" --group-size 16 --annotate "$T"
row1 "cat done (the ceiling)" "$D" cat "$D"
row1 "leap-rank -g 16 (group order, streamed)" "$D" "$bin/leap-rank" --group-size 16 "$D"
row1 "leap-rank (turn order, two passes)" "$DT" "$bin/leap-rank" "$DT"
row1 "leap-advantage rank" "$R" "$bin/leap-advantage" "$R"
row1 "leap-advantage -e grpo -g 16 (streamed)" "$D" "$bin/leap-advantage" -e grpo -r binary --group-size 16 "$D"
row1 "leap-advantage -e grpo (turn order, two passes)" "$DT" "$bin/leap-advantage" -e grpo -r binary "$DT"
row1 "leap-advantage -e kevin -g 16" "$D" "$bin/leap-advantage" -e kevin -r kevin --group-size 16 "$D"
echo
echo "MB/s over CPU time; \"of cat\": that rate as a share of cat's over the same file (the"
echo "ceiling: reading the file from the page cache and writing nothing)."
echo

# Part 2 ------------------------------------------------------------------------------------
echo "### The same computations in jq $(jq --version | sed 's/^jq-//') and Python $(python3 -c 'import platform; print(platform.python_version())') (standard library), on $np records"
echo
echo "Each peer's output is checked against leap's (bench/peer-check.py: same records in the same"
echo "order, same numbers to 1e-9). speedup = the peer's CPU time / leap's CPU time. leap and Python:"
echo "the least CPU time of $BEST runs each; jq: one run (it is 10x or more behind either way)."
echo
printf '    %-40s %-7s %8s %8s %10s %9s %8s\n' computation program "cpu s" "elapsed" "rec/s cpu" "RSS MiB" "speedup"
jqrun=(jq -n -c -L "$PWD/bench/jq")
out=$dir/out
fails=0
# row2 COMPUTATION FIELD LEAP-CMD ... -- JQ-CMD ... -- PY-CMD ... (JQ-CMD may be "-": not written)
row2() {
	local comp=$1 field=$2 lcpu
	shift 2
	local -a cmd=()
	local prog=leap
	while :; do
		cmd=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
		[ $# -gt 0 ] && shift
		if [ "${cmd[0]}" = - ]; then
			printf '    %-40s %-7s %8s %8s %10s %9s %8s\n' "$comp" "$prog" - - - - "n/a"
		else
			# best of $BEST runs for leap and Python (the machine may be shared), one for jq
			local k best_cpu="" best_el best_rss runs=$BEST
			[ $prog = jq ] && runs=1
			for k in $(seq "$runs"); do
				timed "$out.$prog" "${cmd[@]}"
				if [ -z "$best_cpu" ] || awk -v a="$T_CPU" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
					best_cpu=$T_CPU best_el=$T_EL best_rss=$T_RSS
				fi
			done
			T_CPU=$best_cpu T_EL=$best_el T_RSS=$best_rss
			[ $prog = leap ] && lcpu=$T_CPU
			local check=""
			if [ $prog != leap ] && ! check=$(python3 bench/peer-check.py "$field" "$out.leap" "$out.$prog" 2>&1); then
				echo "$check" >&2
				fails=$((fails + 1))
				check=" MISMATCH"
			else
				check=""
			fi
			awk -v c="$comp" -v p="$prog" -v n="$np" -v cpu="$T_CPU" -v el="$T_EL" -v rss="$T_RSS" -v l="$lcpu" -v chk="$check" \
				'BEGIN { printf "    %-40s %-7s %8.2f %8.2f %10.0f %9.1f %7.1fx%s\n", c, p, cpu, el, (cpu > 0 ? n / cpu : 0),
					rss / 1024, (cpu > 0 && l > 0 ? cpu / l : 0), chk }'
		fi
		case $prog in leap) prog=jq ;; jq) prog=python ;; python) break ;; esac
	done
	rm -f "$out.leap" "$out.jq" "$out.python"
}
pT=$dir/turn.$np.jsonl pD=$dir/done.$np.jsonl pDT=$dir/doneturn.$np.jsonl pR=$dir/ranked.$np.jsonl
row2 "prune (DCP decisions, -g 16, annotate)" prune "$bin/leap-prune" -g 16 --annotate "$pT" -- \
	"${jqrun[@]}" --argjson g 16 -f bench/jq/prune.jq "$pT" -- python3 bench/ref-prune.py -g 16 "$pT"
row2 "rank -g 16 (group order, streamed)" rank "$bin/leap-rank" -g 16 "$pD" -- \
	"${jqrun[@]}" --argjson g 16 -f bench/jq/rank.jq "$pD" -- python3 bench/ref-rank.py -g 16 "$pD"
row2 "rank (turn order, two passes)" rank "$bin/leap-rank" "$pDT" -- - -- python3 bench/ref-rank.py "$pDT"
row2 "advantage rank (record by record)" advantage "$bin/leap-advantage" "$pR" -- \
	"${jqrun[@]}" --arg est rank --arg reward field --argjson g 0 -f bench/jq/advantage.jq "$pR" -- \
	python3 bench/ref-advantage.py "$pR"
row2 "advantage grpo -g 16 (streamed)" advantage "$bin/leap-advantage" -e grpo -r binary -g 16 "$pD" -- \
	"${jqrun[@]}" --arg est grpo --arg reward binary --argjson g 16 -f bench/jq/advantage.jq "$pD" -- \
	python3 bench/ref-advantage.py -e grpo -r binary -g 16 "$pD"
row2 "advantage grpo (turn order, two passes)" advantage "$bin/leap-advantage" -e grpo -r binary "$pDT" -- - -- \
	python3 bench/ref-advantage.py -e grpo -r binary "$pDT"
row2 "advantage kevin -g 16 (streamed)" advantage "$bin/leap-advantage" -e kevin -r kevin -g 16 "$pD" -- \
	"${jqrun[@]}" --arg est kevin --arg reward kevin --argjson g 16 -f bench/jq/advantage.jq "$pD" -- \
	python3 bench/ref-advantage.py -e kevin -r kevin -g 16 "$pD"
echo
echo "jq has no two-pass mode (n/a): holding a turn-ordered file whole would need ~10x its size in memory."
if [ $fails -gt 0 ]; then
	echo "filters.sh: $fails peer(s) wrote different numbers from leap's (above)" >&2
	exit 1
fi
echo "All peers checked: the same numbers as leap."
