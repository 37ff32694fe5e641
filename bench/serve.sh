#!/usr/bin/env bash
# serve.sh - leap-serve's overhead per record and its throughput, against the filters called
# directly (issue 33): the same records (a correct vector_add, cpu backend, compile cache warm,
# no leap-bench) through `leap-compile | leap-verify` in a shell pipe, then through one
# leap-serve with one device (the same two filters, kept running) as one batch request, and as
# one request per record from 8 clients at once. The server's own CPU (its threads: HTTP, the
# tags, the matching; not the filters') is read from /proc before and after. The shell pipe runs
# before and after the server, and its faster run is the base: on a shared machine the load
# moves between the two.
# usage: bench/serve.sh [RECORDS]   (default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
. bench/lib.sh
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
for i in $(seq 0 $((n - 1))); do
	jq -cn --rawfile c tests/fixtures/leap-serve/correct.c --argjson s "$i" \
		'{task: "vector_add", group: ("g" + ($s / 8 | floor | tostring)), sample: ($s % 8), turn: 1, backend: "cpu", completion: ("```c\n" + $c + "```")}'
done >"$work/in.jsonl"
leap-compile --no-progress <(head -1 "$work/in.jsonl") | leap-verify --no-progress >/dev/null # warm caches

bench_header "leap-serve's overhead per record against the filters called directly (cpu, vector_add, no leap-bench)" \
	"bench/serve.sh $n"
# cpu_of PID: user + sys seconds of the process (all its threads, not its children)
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
printf '    %-50s %7s %9s %10s %13s %15s\n' way records "wall s" "records/s" "+ms/record" "server cpu ms/r"
row() { # row NAME WALL SERVER_CPU_S
	awk -v name="$1" -v n="$n" -v w="$2" -v base="$base" -v c="$3" \
		'BEGIN { printf "    %-50s %7d %9.2f %10.1f %13.3f %15s\n", name, n, w, n / w, (w - base) * 1000 / n, (c == "" ? "-" : sprintf("%.3f", c * 1000 / n)) }'
}
# direct: the shell pipe; sets base to the faster of its runs
direct() {
	timed "$work/direct.jsonl" bash -c "leap-compile --no-progress '$work/in.jsonl' | leap-verify --no-progress"
	[ "$(jq -r .status "$work/direct.jsonl" | sort -u)" = pass ] || { echo "serve.sh: the direct pipe failed a record" >&2; exit 1; }
	direct_runs="${direct_runs:+$direct_runs, }$T_EL"
	base=$(awk -v a="${base:-$T_EL}" -v b="$T_EL" 'BEGIN { print (b < a ? b : a) }')
}
direct

leap-serve --port 0 --url-file "$work/url" --backend cpu --no-bench --queue $((n + 8)) --inflight 64 2>"$work/serve.log" &
server=$!
until [ -s "$work/url" ]; do sleep 0.1; done
url=$(cat "$work/url")
python3 bench/serve-client.py "$url" <(head -8 "$work/in.jsonl") 1 --batch >/dev/null # starts the pipeline
c0=$(cpu_of "$server")
w=$(python3 bench/serve-client.py "$url" "$work/in.jsonl" 1 --batch)
c1=$(cpu_of "$server")
row "leap-serve, one request of $n records" "$w" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')"
c0=$(cpu_of "$server")
w=$(python3 bench/serve-client.py "$url" "$work/in.jsonl" 8)
c1=$(cpu_of "$server")
row "leap-serve, $n requests of 1 record, 8 at once" "$w" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')"
kill -TERM "$server"
wait "$server" || true
server=
direct
echo
row "leap-compile | leap-verify (a shell pipe; base)" "$base" ""
echo
echo "    the shell pipe's runs: $direct_runs s (before and after the server; the faster is the base)"
echo "    +ms/record: wall time per record beyond the base; server cpu: leap-serve's own threads"
