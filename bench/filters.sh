#!/usr/bin/env bash
# filters.sh - throughput and peak memory of leap-prune, leap-rank and leap-advantage on synthetic records.
#
# usage: bench/filters.sh [RECORDS] [DIR]     (default 1000000 records, files in /tmp/leap-bench)
#
# Generates (once, kept in DIR) a turn of RECORDS records (leap-prune's input) and a done file
# of RECORDS records in two orders: group by group, and turn by turn as a rollout writes it.
# Prints one line per run: records/s over elapsed time and over CPU time (user + sys; the
# machine may be shared), and peak RSS from /usr/bin/time. `cat` gives the ceiling.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${2:-/tmp/leap-bench}
mkdir -p "$dir"
bin=$PWD/bin
gen=$PWD/bench/gen-records
[ -s "$dir/turn.$n.jsonl" ] || "$gen" --records "$n" --mode turn >"$dir/turn.$n.jsonl"
[ -s "$dir/done.$n.jsonl" ] || "$gen" --records "$n" --mode done >"$dir/done.$n.jsonl"
[ -s "$dir/doneturn.$n.jsonl" ] || "$gen" --records "$n" --mode done --order turn >"$dir/doneturn.$n.jsonl"
[ -s "$dir/ranked.$n.jsonl" ] || "$bin/leap-rank" --group-size 16 "$dir/done.$n.jsonl" >"$dir/ranked.$n.jsonl" 2>/dev/null

# run NAME CMD...: runs CMD (stdout to /dev/null) under /usr/bin/time and prints a table row.
run() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr" || {
		cat "$dir/stderr" >&2
		return 1
	}
	read -r el us sy rss <"$dir/time"
	awk -v name="$name" -v n="$n" -v el="$el" -v cpu="$(awk -v a="$us" -v b="$sy" 'BEGIN { print a + b }')" -v rss="$rss" \
		'function rate(t) { return t > 0 ? sprintf("%10.0f", n / t) : sprintf("%10s", "-") }
		BEGIN { printf "%-50s %8.2f s %s rec/s %8.2f s cpu %s rec/s/cpu %8.1f MiB\n",
			name, el, rate(el), cpu, rate(cpu), rss / 1024 }'
}

printf '%-50s %10s %16s %12s %20s %12s\n' run elapsed throughput cpu "throughput/cpu" "peak RSS"
printf '%s records; %s bytes (turn), %s bytes (done)\n' "$n" "$(stat -L -c %s "$dir/turn.$n.jsonl")" "$(stat -L -c %s "$dir/done.$n.jsonl")"
run "cat turn (the ceiling)" cat "$dir/turn.$n.jsonl"
run "leap-prune -g 16 --done /dev/null" "$bin/leap-prune" --group-size 16 --done /dev/null "$dir/turn.$n.jsonl"
run "cat done (the ceiling)" cat "$dir/done.$n.jsonl"
run "leap-rank -g 16 (group order, streamed)" "$bin/leap-rank" --group-size 16 "$dir/done.$n.jsonl"
run "leap-rank (turn order, two passes)" "$bin/leap-rank" "$dir/doneturn.$n.jsonl"
run "leap-advantage rank" "$bin/leap-advantage" "$dir/ranked.$n.jsonl"
run "leap-advantage -e grpo -g 16 (streamed)" "$bin/leap-advantage" -e grpo -r binary --group-size 16 "$dir/done.$n.jsonl"
run "leap-advantage -e grpo (turn order, two passes)" "$bin/leap-advantage" -e grpo -r binary "$dir/doneturn.$n.jsonl"
run "leap-advantage -e kevin -g 16" "$bin/leap-advantage" -e kevin -r kevin --group-size 16 "$dir/done.$n.jsonl"
