#!/usr/bin/env bash
# verify-ab.sh - leap-verify's CPU per candidate in two builds, run interleaved, so that a
# machine whose load changes (other tenants) weighs on both alike: the way to tell whether a
# change made verification cheaper. The records are verify-overhead.sh's (trivial_records in
# bench/lib.sh: a correct vector_add); each round verifies them once with each build, each
# with its own tree's tasks (a newer tree's task.json may hold fields an older one refuses).
# usage: bench/verify-ab.sh OLD_TREE [ROUNDS] [RECORDS]   (OLD_TREE: another built checkout;
#        AB_TASKS=DIR: both builds read DIR's tasks, to time the code alone where the trees'
#        tasks differ, e.g. AB_TASKS=OLD_TREE/tasks)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(cd "${1:?usage: bench/verify-ab.sh OLD_TREE [ROUNDS] [RECORDS]}" && pwd)
rounds=${2:-10}
n=${3:-300}
[ -x "$old/bin/leap-verify" ] || { echo "verify-ab: $old/bin/leap-verify: not built" >&2; exit 2; }
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
. bench/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
trivial_records "$work" "$n"
for b in "$old" "$PWD"; do LEAP_TASKS="${AB_TASKS:-$b/tasks}" "$b/bin/leap-verify" --seed 1 <(head -1 "$work/in.jsonl") >/dev/null; done
echo "leap-verify CPU (user + sys, children included) per candidate, ms; $rounds rounds of $n records"
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
	for side in old new; do
		b=$PWD
		[ $side = old ] && b=$old
		LEAP_TASKS="${AB_TASKS:-$b/tasks}" /usr/bin/time -f "$side %U %S" -o "$work/t" "$b/bin/leap-verify" --seed 1 "$work/in.jsonl" >"$work/out.jsonl"
		[ "$(jq -r .status "$work/out.jsonl" | sort -u)" = pass ] || { echo "verify-ab: $side failed a candidate" >&2; exit 1; }
		awk -v n="$n" '{ printf "%s %.3f\n", $1, ($2 + $3) * 1000 / n }' "$work/t"
	done
done | sort -k1,1 -k2,2n | awk '
	{ v[$1] = v[$1] " " $2; x[$1, ++c[$1]] = $2 }
	END {
		for (s in c) {
			k = c[s]
			med = k % 2 ? x[s, (k + 1) / 2] : (x[s, k / 2] + x[s, k / 2 + 1]) / 2
			printf "%-4s %s   median %.2f\n", s, v[s], med
		}
	}' | sort -r
