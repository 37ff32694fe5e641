#!/usr/bin/env bash
# verify-drawn.sh - what drawn cases (issue 14: sizes the prompt does not list) cost per
# candidate: leap-verify --drawn-cases 0 (the listed cases only), 3 (the default) and 6 on
# the fixture solutions of real tasks; ROUNDS rounds, round r with --seed r (the drawn sizes,
# hence their cost, depend on the seed), the three settings interleaved in each round; the
# median over the rounds of wall and CPU ms per candidate, and the ratio against 0.
# usage: bench/verify-drawn.sh [RECORDS] [TASK]...   (env ROUNDS, default 5; tasks default:
#        vector_add softmax matmul conv2d attention)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100}
shift || true
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=(vector_add softmax matmul conv2d attention)
rounds=${ROUNDS:-5}
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
. bench/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
source tests/artifact.bash

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

bench_header "leap-verify: the cost of drawn cases per candidate (cpu backend, fixture solutions)" \
	"bench/verify-drawn.sh $n ${tasks[*]}   (ROUNDS=$rounds)"
# The work drawn cases add, free of timing noise: buffer bytes and flops of 3 drawn cases
# against the listed cases', over every bundled task and 40 seeds (leap-task --draw).
for s in $(seq 40); do leap-task --all --draw 3 --seed "$s"; done | jq -s -r '
	group_by(.id)[] | ([.[0].cases[].bytes] | add) as $lb | ([.[0].cases[].flops] | add) as $lf |
	"\(([.[].drawn[].bytes] | add) / length / $lb) \(if $lf > 0 then ([.[].drawn[].flops] | add) / length / $lf else 0 end)"' |
	sort -g | awk '{ b[NR] = $1; sb += $1; sf += $2; nf += $2 > 0 }
		END { printf "    3 drawn cases add, per task (%d tasks, 40 seeds): buffer bytes %.0f%% of the listed cases'"'"' (mean; %.0f%% to %.0f%%), flops %.0f%% (mean, tasks with flops)\n\n",
			NR, 100 * sb / NR, 100 * b[1], 100 * b[NR], 100 * sf / nf }'

printf '    %-12s %6s %6s %9s %9s %9s %8s %8s\n' task drawn cases "wall ms" "cpu ms" "run ms" "wall x" "cpu x"
for t in "${tasks[@]}"; do
	build_artifact "$t" "tests/fixtures/tasks/$t/solution.c" "$work/$t.so"
	for _ in $(seq "$n"); do compiled_record "$t" "$work/$t.so"; done >"$work/$t.jsonl"
	: >"$work/$t.rows"
	for r in $(seq "$rounds"); do
		leap-verify --seed "$r" --drawn-cases 6 <(head -1 "$work/$t.jsonl") >/dev/null # reference build, cached
		for d in 0 3 6; do
			timed "$work/out.jsonl" leap-verify --seed "$r" --drawn-cases "$d" "$work/$t.jsonl"
			[ "$(jq -r .status "$work/out.jsonl" | sort -u)" = pass ] ||
				{ echo "verify-drawn: $t failed with --seed $r --drawn-cases $d" >&2; exit 1; }
			echo "$d $(head -1 "$work/out.jsonl" | jq .verify.cases) $T_EL $T_CPU \
				$(jq -s 'map(.verify.run_ms) | add / length' "$work/out.jsonl")" >>"$work/$t.rows"
		done
	done
	w0='' c0=''
	for d in 0 3 6; do
		k=$(awk -v d="$d" '$1 == d { print $2; exit }' "$work/$t.rows")
		w=$(awk -v d="$d" -v n="$n" '$1 == d { print $3 * 1000 / n }' "$work/$t.rows" | median)
		c=$(awk -v d="$d" -v n="$n" '$1 == d { print $4 * 1000 / n }' "$work/$t.rows" | median)
		rm=$(awk -v d="$d" '$1 == d { print $5 }' "$work/$t.rows" | median)
		[ -n "$w0" ] || { w0=$w c0=$c; }
		awk -v t="$t" -v d="$d" -v k="$k" -v w="$w" -v c="$c" -v r="$rm" -v w0="$w0" -v c0="$c0" \
			'BEGIN { printf "    %-12s %6d %6d %9.2f %9.2f %9.3f %7.2fx %7.2fx\n", t, d, k, w, c, r, w / w0, c / c0 }'
	done
done
echo
echo "drawn: --drawn-cases; cases: per candidate (listed + drawn); wall and cpu ms: per candidate,"
echo "the median over $rounds rounds (seeds 1..$rounds); cpu: user + sys of leap-verify and its"
echo "sandboxes; run ms: the candidate's own calls (median); x: against --drawn-cases 0 (the listed"
echo "cases only). The reference results of every case are computed once per task and run."
