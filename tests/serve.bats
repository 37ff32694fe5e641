# serve.bats - leap-serve on loopback, with real clients: curl, OpenEnv's own client, an
# OpenRLHF-shaped reward request (retried), the Ray pool, and a load test across a SIGTERM.
# The clients of PyPI (openenv-core, ray) come from the environment tests/serve/venv.sh makes:
# LEAP_SERVE_VENV=DIR; without it those tests skip and say so. Every assertion is a count, a
# status or a field: none depends on how fast the machine is.
load helpers

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	SERVE_PID=
}

teardown() {
	if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$SERVE_PID" 2>/dev/null || true
	fi
}

# serve [OPTION]...: starts leap-serve on a free loopback port (cpu backend); sets URL and
# SERVE_PID, its log in $BATS_TEST_TMPDIR/serve.log.
serve() {
	serve_on --port 0 "$@"
}

# serve_on [OPTION]...: serve with no port of its own (the options say where).
serve_on() {
	rm -f "$BATS_TEST_TMPDIR/url"
	${SERVE_WRAP:-} leap-serve --url-file "$BATS_TEST_TMPDIR/url" --backend cpu "$@" 2>"$BATS_TEST_TMPDIR/serve.log" &
	SERVE_PID=$!
	for _ in $(seq 300); do
		[ -s "$BATS_TEST_TMPDIR/url" ] && break
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$BATS_TEST_TMPDIR/serve.log"; return 1; }
		sleep 0.1
	done
	URL=$(cat "$BATS_TEST_TMPDIR/url")
}

# record NAME GROUP SAMPLE: a vector_add record whose completion is fixtures/leap-serve/NAME.c.
record() {
	jq -cn --rawfile c "$FIXTURES/leap-serve/$1.c" --arg g "$2" --argjson s "$3" \
		'{task: "vector_add", group: $g, sample: $s, turn: 1, backend: "cpu", completion: ("```c\n" + $c + "```")}'
}

# venv_python: the Python of tests/serve/venv.sh's environment, or skip.
venv_python() {
	[ -n "${LEAP_SERVE_VENV:-}" ] && [ -x "$LEAP_SERVE_VENV/bin/python" ] ||
		skip "LEAP_SERVE_VENV is not set (sh tests/serve/venv.sh makes the environment with openenv-core and ray)"
	PY="$LEAP_SERVE_VENV/bin/python"
}

@test "serve: curl: a batch through /v1/evaluate gets the filters' own verdicts, each record once" {
	{ record correct a 0; record wrong a 1; record correct b 0; record wrong b 1; } >"$BATS_TEST_TMPDIR/in.jsonl"
	leap-compile --no-progress <"$BATS_TEST_TMPDIR/in.jsonl" | leap-verify --no-progress |
		jq -c '[.group, .sample, .status, .verify.status]' | sort >"$BATS_TEST_TMPDIR/direct"
	serve --no-bench
	run -0 curl -sf "$URL/healthz"
	assert_output '{"status":"ok"}'
	curl -sfN --data-binary @"$BATS_TEST_TMPDIR/in.jsonl" "$URL/v1/evaluate" >"$BATS_TEST_TMPDIR/out.jsonl"
	run -0 jq -c '[.group, .sample, .status, .verify.status]' "$BATS_TEST_TMPDIR/out.jsonl"
	diff <(sort <<<"$output") "$BATS_TEST_TMPDIR/direct"
	# fields the server does not own come back as they were sent; its tag does not
	run -0 jq -r 'select(.completion | test("wrong.c")) | .sample' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_output $'1\n1'
	run -1 grep -c leap_serve_tag "$BATS_TEST_TMPDIR/out.jsonl"
}

@test "serve: a record's own compile.artifact is never loaded: leap-compile rebuilds it or the record is an error" {
	serve --no-bench
	{
		echo '{"task":"vector_add","group":"x","sample":0,"compile":{"status":"ok","artifact":"/nonexistent/evil.so"}}'
		record correct x 1 | jq -c '.compile = {status: "ok", artifact: "/nonexistent/evil.so"}'
	} | curl -sf --data-binary @- "$URL/v1/evaluate" >"$BATS_TEST_TMPDIR/out.jsonl"
	run -0 jq -c 'select(.sample == 0) | [.error.program, (.verify == null)]' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_output '["leap-compile",true]'
	run -0 jq -r 'select(.sample == 1) | .status, (.compile.artifact | startswith(env.LEAP_CACHE))' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_output $'pass\ntrue'
}

@test "serve: a malformed request gets a clear 4xx, a malformed record an error record in its place" {
	serve --no-bench --max-request 64K --max-line 2K
	run -0 curl -s -o /dev/null -w '%{http_code}' "$URL/nope"
	assert_output 404
	run -0 curl -s -o /dev/null -w '%{http_code}' "$URL/v1/evaluate"
	assert_output 405
	head -c 100000 /dev/zero | tr '\0' x >"$BATS_TEST_TMPDIR/big"
	run -0 curl -s -w ' %{http_code}' --data-binary @"$BATS_TEST_TMPDIR/big" "$URL/v1/evaluate"
	assert_output --partial '"status":413'
	assert_output --partial '--max-request'
	run -0 curl -s -w ' %{http_code}' --data-binary '{}' "$URL/v1/turn?group_size=zero"
	assert_output --partial ' 400'
	run -0 curl -s -w ' %{http_code}' -d '{"query":"x"}' "$URL/v1/reward"
	assert_output --partial ' 400'
	run -0 curl -s -w ' %{http_code}' -d '{"nothing":1}' "$URL/step"
	assert_output --partial '"detail"'
	assert_output --partial ' 422'
	# the request is served; each bad line becomes an error record naming its line
	{ echo 'not json'; echo '[1,2]'; record correct a 0; printf '{"task":"vector_add","pad":"%03000d"}\n' 0; } |
		curl -sf --data-binary @- "$URL/v1/evaluate" >"$BATS_TEST_TMPDIR/out.jsonl"
	run -0 jq -c 'if .error then [.error.line, .error.message] else .status end' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_line '[1,"'"'"'['"'"' or '"'"'{'"'"' expected near '"'"'not'"'"'"]'
	assert_line '[2,"not a JSON object"]'
	assert_line --partial '[4,"the record holds'
	assert_line '"pass"'
	[ "${#lines[@]}" -eq 4 ]
}

@test "serve: /v1/turn: leap-prune decides each whole group, as it does on the same records" {
	{ record correct t 0; record wrong t 1; record wrong t 2; record correct t 3; record wrong u 0; } \
		>"$BATS_TEST_TMPDIR/in.jsonl"
	serve --no-bench --devices 0-1
	curl -sf --data-binary @"$BATS_TEST_TMPDIR/in.jsonl" "$URL/v1/turn?group_size=4" >"$BATS_TEST_TMPDIR/out.jsonl"
	# decided records carry prune; the next-turn records (the failures of an expanded group) do not
	run -0 jq -c 'select(.prune) | [.group, .sample, .prune.decision, .prune.reason, .prune.complete]' \
		"$BATS_TEST_TMPDIR/out.jsonl"
	assert_line '["t",1,"expand","failed",true]'
	assert_line '["t",2,"expand","failed",true]'
	assert_line '["t",0,"final","solved",true]'
	assert_line '["u",0,"final","hopeless",false]'
	[ "${#lines[@]}" -eq 5 ]
	run -0 jq -c 'select(.prune | not) | [.group, .sample, .turn, (.feedback | length > 0)]' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_output $'["t",1,2,true]\n["t",2,2,true]'
	# the same decisions as leap-prune on the evaluated records of each group
	jq -c 'select(.prune) | del(.prune)' "$BATS_TEST_TMPDIR/out.jsonl" | jq -c 'select(.group == "t")' |
		leap-prune --no-progress --group-size 4 --annotate | jq -c '[.sample, .prune.decision]' | sort >"$BATS_TEST_TMPDIR/want"
	diff <(jq -c 'select(.prune and .group == "t") | [.sample, .prune.decision]' "$BATS_TEST_TMPDIR/out.jsonl" | sort) \
		"$BATS_TEST_TMPDIR/want"
}

@test "serve: a full queue answers 429 with Retry-After; a request past its deadline gets error records" {
	serve --no-bench --queue 1 --inflight 1
	record slow q 0 >"$BATS_TEST_TMPDIR/slow.jsonl"
	curl -s --data-binary @"$BATS_TEST_TMPDIR/slow.jsonl" "$URL/v1/evaluate" >"$BATS_TEST_TMPDIR/first" &
	first=$!
	for _ in $(seq 100); do
		curl -s "$URL/metrics" | grep -q '^leap_serve_queue_depth{device="0"} 1$' && break
		sleep 0.1
	done
	run -0 curl -s -D - -o /dev/null --data-binary @"$BATS_TEST_TMPDIR/slow.jsonl" "$URL/v1/evaluate"
	assert_line --partial '429'
	assert_line --regexp '^[Rr]etry-[Aa]fter: [0-9]+'
	wait "$first"
	run -0 jq -r .status "$BATS_TEST_TMPDIR/first"
	assert_output pass
	# a deadline shorter than the candidate's 3 s: the record is answered with an error and the
	# device is free again for the next request
	run -0 curl -sf --data-binary @"$BATS_TEST_TMPDIR/slow.jsonl" "$URL/v1/evaluate?timeout=1"
	# the record comes back with its own fields and the error, once
	run -0 jq -c '[.group, .sample, .error.line, .error.message, .verify]' <<<"$output"
	assert_output '["q",0,1,"the request'"'"'s deadline (1 s) passed before this record was answered",null]'
	record correct q 1 | curl -sf --data-binary @- "$URL/v1/evaluate" | jq -r .status >"$BATS_TEST_TMPDIR/after"
	run -0 cat "$BATS_TEST_TMPDIR/after"
	assert_output pass
	run -0 curl -s "$URL/metrics"
	assert_line 'leap_serve_rejected_total 1'
	assert_line 'leap_serve_cancelled_records_total 1'
	# in /v1/turn too, where a group waits for all its records: the answered one comes back
	# with the error as well, and leap-prune's decision never comes
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || true
	serve --no-bench
	{ record correct t 0; record slow t 1; } | curl -sf --data-binary @- "$URL/v1/turn?timeout=2" >"$BATS_TEST_TMPDIR/turn"
	run -0 jq -c '[.sample, (.error.message | test("deadline")), .prune]' "$BATS_TEST_TMPDIR/turn"
	assert_line '[0,true,null]'
	assert_line '[1,true,null]'
	[ "${#lines[@]}" -eq 2 ]
	# sample 0 was answered by then on any machine but the most loaded (its verdict is kept)
	run -0 jq -r 'select(.sample == 0) | .status // "unanswered"' "$BATS_TEST_TMPDIR/turn"
	assert_output --regexp '^(pass|unanswered)$'
}

@test "serve: a client that disconnects cancels its work and leaves no process behind" {
	serve --no-bench
	# calls of 1.5 s each: within leap-verify's bound on one call (2 s and more), 27 s in all
	jq -cn --rawfile c "$FIXTURES/stall/slow_call.c" \
		'{task: "vector_add", group: "s", sample: 0, backend: "cpu", completion: ("```c\n#define STALL_MS 1500\n" + $c + "```")}' |
		curl -s --data-binary @- "$URL/v1/evaluate" >/dev/null &
	client=$!
	# the processes working for it: the pipeline and the sandbox that runs the candidate
	desc() { local p; for p in $(pgrep -P "$1"); do echo "$p"; desc "$p"; done; }
	for _ in $(seq 600); do
		pids=$(desc "$SERVE_PID")
		for p in $pids; do grep -q leap-run-cpu "/proc/$p/cmdline" 2>/dev/null && break 2; done
		sleep 0.1
	done
	grep -l leap-run-cpu $(printf '/proc/%s/cmdline ' $pids) 2>/dev/null | grep -q . ||
		fail "the candidate's sandbox never started: $(cat "$BATS_TEST_TMPDIR/serve.log")"
	# the client leaves while its candidate runs
	kill "$client"
	wait "$client" || true
	# the candidate would run for most of leap-verify's timeout (30 s): its pipeline is ended
	# instead, and the record is dropped
	for _ in $(seq 300); do
		curl -s "$URL/metrics" | grep -q '^leap_serve_cancelled_records_total 1$' && break
		sleep 0.1
	done
	run -0 curl -s "$URL/metrics"
	assert_line 'leap_serve_cancelled_records_total 1'
	assert_line 'leap_serve_pipeline_restarts_total 1'
	assert_line 'leap_serve_queue_depth{device="0"} 0'
	# nothing of it is left, the sandbox included; the server has no child until the next record
	for p in $pids; do
		! kill -0 "$p" 2>/dev/null || fail "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline")) outlived the cancel"
	done
	run -1 pgrep -P "$SERVE_PID"
	record correct s 1 | curl -sf --data-binary @- "$URL/v1/evaluate" | jq -r .status >"$BATS_TEST_TMPDIR/after"
	run -0 cat "$BATS_TEST_TMPDIR/after"
	assert_output pass
}

@test "serve: off loopback a token file is required; with a token every request must carry it" {
	run -2 leap-serve --listen 0.0.0.0 --port 0
	assert_output --partial 'give --token-file FILE'
	printf 'short\n' >"$BATS_TEST_TMPDIR/short"
	run -2 leap-serve --listen 0.0.0.0 --token-file "$BATS_TEST_TMPDIR/short"
	assert_output --partial 'fewer than 16 characters'
	head -c 24 /dev/urandom | base64 >"$BATS_TEST_TMPDIR/token"
	serve --no-bench --token-file "$BATS_TEST_TMPDIR/token"
	tok=$(cat "$BATS_TEST_TMPDIR/token")
	run -0 curl -s -o /dev/null -w '%{http_code}' "$URL/metrics"
	assert_output 401
	run -0 curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${tok}x" "$URL/metrics"
	assert_output 401
	run -0 curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$URL/metrics"
	assert_output 200
	run -0 curl -s -o /dev/null -w '%{http_code}' "$URL/healthz"
	assert_output 200
	# the token is never on the command line
	run -0 ps -o args= -p "$SERVE_PID"
	refute_output --partial "$tok"
}

# Most servers take HOST:PORT; libwebsockets read "127.0.0.1:8080" as a network interface not up
# yet and served on no socket, saying it listened on http://[127.0.0.1:8080]:8750.
@test "serve: --listen takes HOST:PORT and [IPV6]:PORT; a bad address or a failed bind is exit 2, saying why" {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	serve_on --no-bench --listen "127.0.0.1:$port"
	assert_equal "$URL" "http://127.0.0.1:$port"
	run -0 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz"
	assert_output 200
	# the port is taken now: binding it again is fatal, with the reason. The address is numeric:
	# Debian's /etc/hosts gives localhost ::1 as well, where the port is free (a fresh root's
	# leap-serve served there and this test waited for it forever); timeout: a server that
	# starts fails here, not later
	run -2 timeout 30 leap-serve --backend cpu --listen "127.0.0.1:$port"
	assert_output --partial "cannot listen on 127.0.0.1 port $port: Address already in use"
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || true
	if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
		serve_on --no-bench --listen '[::1]:0'
		[[ "$URL" =~ ^http://\[::1\]:[0-9]+$ ]] || fail "URL $URL"
		run -0 curl -gs -o /dev/null -w '%{http_code}' "$URL/healthz"
		assert_output 200
	fi
	for bad in '127.0.0.1:8080:1' '[::1' '[::1]8080' ':8080' '127.0.0.1:65536'; do
		run -2 leap-serve --backend cpu --listen "$bad"
		assert_output --partial "leap-serve: --listen: '$bad'"
	done
	run -2 leap-serve --backend cpu --listen 127.0.0.1:8080 --port 8081
	assert_output --partial 'give the port once'
	# an address of no interface here, a name that resolves to nothing: fatal, never a server
	# without a socket
	head -c 24 /dev/urandom | base64 >"$BATS_TEST_TMPDIR/token"
	run -2 leap-serve --backend cpu --listen 192.0.2.1 --port 0 --token-file "$BATS_TEST_TMPDIR/token"
	assert_output --partial 'cannot listen on 192.0.2.1 port 0: Cannot assign requested address'
	run -2 leap-serve --backend cpu --listen no-such-host.invalid --token-file "$BATS_TEST_TMPDIR/token"
	assert_output --partial 'cannot listen on no-such-host.invalid:'
}

# A name is checked as written ("127." looks like loopback), then by what it resolves to.
@test "serve: --listen with a name that resolves beyond this machine needs a token" {
	unshare --user --map-root-user --mount true 2>/dev/null || skip "no user and mount namespaces here"
	printf '10.9.9.9 127.example.test\n' >"$BATS_TEST_TMPDIR/hosts"
	run -2 unshare --user --map-root-user --mount sh -c 'mount --bind "$1" /etc/hosts && exec leap-serve --backend cpu --listen 127.example.test --port 0' _ "$BATS_TEST_TMPDIR/hosts"
	assert_output --partial '--listen 127.example.test resolves to an address beyond this machine: give --token-file FILE'
}

@test "serve: SIGTERM drains: the request in progress is answered in full, then the server ends by the signal" {
	serve --no-bench
	{ record slow d 0; record correct d 1; } >"$BATS_TEST_TMPDIR/in.jsonl"
	curl -s --data-binary @"$BATS_TEST_TMPDIR/in.jsonl" "$URL/v1/evaluate" >"$BATS_TEST_TMPDIR/out" &
	client=$!
	for _ in $(seq 100); do
		curl -s "$URL/metrics" | grep -q '^leap_serve_requests_in_progress 1$' && break
		sleep 0.1
	done
	kill -TERM "$SERVE_PID"
	for _ in $(seq 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" = 503 ] && break
		sleep 0.1
	done
	run -0 curl -s -o /dev/null -w '%{http_code}' "$URL/healthz"
	assert_output 503
	run -0 curl -s -w ' %{http_code}' --data-binary @"$BATS_TEST_TMPDIR/in.jsonl" "$URL/v1/evaluate"
	assert_output --partial 'shutting down'
	assert_output --partial ' 503'
	wait "$client"
	run -0 jq -r .status "$BATS_TEST_TMPDIR/out"
	assert_output $'pass\npass'
	# waited for here, not through `run`: run's subshell is no parent of the server, and while
	# the server still drains, its wait fails at once with 255 (a loaded machine's race)
	local rc=0
	wait "$SERVE_PID" || rc=$?
	[ "$rc" -eq 143 ] || { echo "leap-serve ended with $rc, not 143 (SIGTERM)"; false; }
	run -0 grep -c 'finishing the 1 request in progress' "$BATS_TEST_TMPDIR/serve.log"
}

@test "serve: load: 300 requests, 32 at once, every record answered exactly once across a SIGTERM" {
	# the records verify (no timing): the test counts answers, never times them
	run -0 python3 "$ROOT/tests/serve/load.py" \
		"exec leap-serve --port 0 --url-file $BATS_TEST_TMPDIR/lurl --backend cpu --no-bench --devices 0-1 --queue 64 2>>$BATS_TEST_TMPDIR/serve.log" \
		"$BATS_TEST_TMPDIR/lurl" 300 32 --sigterm-after 100
	echo "$output"
	assert_output --partial '"requests": 300'
	refute_output --partial FAIL
}

@test "serve: /metrics is Prometheus text: records by verdict, queue depth, busy devices, latency histograms" {
	serve --no-bench --devices 0-1
	{ record correct m 0; record wrong m 1; } | curl -sf --data-binary @- "$URL/v1/evaluate" >/dev/null
	curl -sf "$URL/metrics" >"$BATS_TEST_TMPDIR/metrics"
	run -0 cat "$BATS_TEST_TMPDIR/metrics"
	assert_line 'leap_serve_records_total{status="pass"} 1'
	assert_line 'leap_serve_records_total{status="mismatch"} 1'
	assert_line 'leap_serve_queue_depth{device="0"} 0'
	assert_line 'leap_serve_queue_depth{device="1"} 0'
	assert_line 'leap_serve_devices_busy 0'
	assert_line 'leap_serve_record_seconds_count 2'
	assert_line 'leap_serve_record_seconds_bucket{le="+Inf"} 2'
	assert_line 'leap_serve_requests_total{endpoint="evaluate",code="2xx"} 1'
	# the exposition format: every sample line is NAME{LABELS} VALUE of a family declared by TYPE
	python3 - "$BATS_TEST_TMPDIR/metrics" <<'PY'
import re, sys
types = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ")
        assert kind in ("counter", "gauge", "histogram"), line
        types[name] = kind
        continue
    if line.startswith("# HELP "):
        continue
    m = re.fullmatch(r'([a-z_]+)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? (-?[0-9.e+]+)', line)
    assert m, line
    base = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
    assert m.group(1) in types or base in types, line
PY
}

@test "serve: OpenEnv's own client: a WebSocket session per trajectory, and stateless HTTP reset/step" {
	venv_python
	serve --no-bench --max-turns 3
	run -0 "$PY" - "$URL" "$FIXTURES/leap-serve" <<'PY'
import sys, threading
from openenv.core.generic_client import GenericEnvClient
url, fix = sys.argv[1], sys.argv[2]
code = lambda n: "```c\n" + open(f"{fix}/{n}.c").read() + "```"
# a session per trajectory, several at once: wrong, then right; the feedback turn comes from leap-prune
out = {}
def trajectory(i):
    with GenericEnvClient(base_url=url).sync() as env:
        r = env.reset(task="vector_add", episode_id=f"ep{i}", sample=i)
        assert not r.done and r.observation["record"]["turn"] == 1, r
        assert "vector_add" in r.observation["messages"][-1]["content"]
        r1 = env.step({"completion": code("wrong")})
        r2 = env.step({"completion": code("correct")})
        out[i] = (r1.reward, r1.done, r1.observation["status"], r1.observation["next"]["turn"],
                  "wrong" in r1.observation["feedback"].lower() or "mismatch" in r1.observation["feedback"].lower(),
                  r2.reward, r2.done, r2.observation["status"], env.state()["step_count"])
ts = [threading.Thread(target=trajectory, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
for i in range(4):
    print(out[i])
# stateless: the action carries the record (observation.next of reset)
import requests
r = requests.post(url + "/reset", json={"task": "vector_add"}).json()
nxt = r["observation"]["next"]
s = requests.post(url + "/step", json={"action": {"record": nxt, "completion": code("correct")}}).json()
print("http", s["reward"], s["done"], s["observation"]["status"])
print("health", requests.get(url + "/health").json())
PY
	echo "$output"
	assert_line '(0.0, False, '"'"'mismatch'"'"', 2, True, 1.0, True, '"'"'pass'"'"', 2)'
	[ "$(grep -c "^(0.0, False, 'mismatch', 2, True, 1.0, True, 'pass', 2)" <<<"$output")" -eq 4 ]
	assert_line 'http 1.0 True pass'
	assert_line "health {'status': 'healthy'}"
}

@test "serve: the WebSocket stream: records in as they come, each answered as ready, reading paused while queues are full" {
	venv_python
	serve --no-bench --queue 2 --inflight 1 --devices 0-1
	run -0 "$PY" - "$URL" "$FIXTURES/leap-serve" <<'PY'
import asyncio, json, sys
from websockets.asyncio.client import connect
url, fix = sys.argv[1], sys.argv[2]
code = lambda n: "```c\n" + open(f"{fix}/{n}.c").read() + "```"
rec = lambda g, s, n: json.dumps({"task": "vector_add", "group": g, "sample": s, "backend": "cpu", "completion": code(n)})
async def main():
    # 12 records, one message each (the sixth with a malformed line), on queues of 2: the
    # server stops reading until there is room, and loses nothing
    async with connect(url.replace("http", "ws") + "/v1/stream", max_size=None) as ws:
        for i in range(12):
            await ws.send(rec(f"g{i % 4}", i // 4, "correct" if i % 2 else "wrong") + ("\nnot json" if i == 5 else ""))
        await ws.send("")  # the end of the records: the server closes once all are answered
        out = [json.loads(m) async for m in ws]
    print(len(out), sum(1 for r in out if "error" in r))
    print(sorted((r["group"], r["sample"], r["status"]) for r in out if "error" not in r) ==
          sorted((f"g{i % 4}", i // 4, "pass" if i % 2 else "mismatch") for i in range(12)))
asyncio.run(main())
PY
	echo "$output"
	assert_line '13 1'
	assert_line 'True'
	run -0 curl -s "$URL/metrics"
	assert_line 'leap_serve_requests_total{endpoint="stream",code="2xx"} 1'
	assert_line 'leap_serve_requests_in_progress 0'
}

@test "serve: an OpenRLHF-shaped reward request, retried after a client timeout, is evaluated once" {
	serve --no-bench
	python3 - "$URL" "$FIXTURES/leap-serve" <<'PY' >"$BATS_TEST_TMPDIR/out"
import json, sys, time, urllib.request, urllib.error
url, fix = sys.argv[1], sys.argv[2]
code = lambda n: "```c\n" + open(f"{fix}/{n}.c").read() + "```"
p = "Write vector_add.\n"
data = {"query": [p + code("slow"), p + code("wrong"), p + "no code at all"], "prompts": [p] * 3,
        "labels": ["vector_add"] * 3}
body = json.dumps(data).encode()
# as OpenRLHF's request_api_wrapper: POST JSON, retry on any error after 1 s, 5 tries
def post(timeout):
    req = urllib.request.Request(url + "/v1/reward", data=body, headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=timeout))
answers = []
for attempt, timeout in enumerate([1, 180, 180]):
    try:
        answers.append(post(timeout))
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        print("attempt", attempt, "failed:", type(exc).__name__)
        time.sleep(1)
        continue
print(json.dumps(answers[0]))
print("same", all(a == answers[0] for a in answers), len(answers))
PY
	run -0 cat "$BATS_TEST_TMPDIR/out"
	assert_line 'attempt 0 failed: TimeoutError'
	assert_line 'same True 2'
	run -0 jq -c '[.rewards, .scores, .extra_logs.pass]' < <(grep '^{' "$BATS_TEST_TMPDIR/out")
	assert_output '[[1,-0.5,-0.5],[1,0,0],[1,0,0]]'
	# three records evaluated once: the retries joined the first evaluation or got its answer
	run -0 curl -s "$URL/metrics"
	assert_line 'leap_serve_records_total{status="pass"} 1'
	assert_line 'leap_serve_records_total{status="mismatch"} 1'
	assert_line 'leap_serve_records_total{status="no_code"} 1'
	assert_line 'leap_serve_retries_served_total 2'
	# with X-Request-Id the id is the caller's: the same id is the same request
	for q in '"def f"' '"def g"'; do
		curl -sf -H 'X-Request-Id: step-7/batch-3' -d '{"query":['"$q"'],"prompts":[""],"labels":["vector_add"]}' \
			"$URL/v1/reward" >>"$BATS_TEST_TMPDIR/ids"
	done
	run -0 curl -s "$URL/metrics"
	assert_line 'leap_serve_records_total{status="no_code"} 2'
	assert_line 'leap_serve_retries_served_total 3'
}

@test "serve: leap.Server, the Python client: evaluate in input order, stream, turn, prompts, a refusal raises ServerError" {
	run -0 env PYTHONPATH="$ROOT/python" python3 - "$ROOT" "$FIXTURES/leap-serve" <<'PY'
import sys
import leap, leap.serve
root, fix = sys.argv[1], sys.argv[2]
code = lambda n: "```c\n" + open(f"{fix}/{n}.c").read() + "```"
recs = [{"task": "vector_add", "group": f"g{i % 3}", "sample": i // 3, "turn": 1, "backend": "cpu",
         "completion": code("correct" if i % 2 else "wrong"), "i": i} for i in range(9)]
with leap.serve.start(["--backend", "cpu", "--no-bench", "--devices", "0-1"], prefix=root) as srv:
    out = srv.evaluate(recs, errors="keep")
    assert [r["i"] for r in out] == list(range(9)), "not in input order"
    assert [r["status"] for r in out] == ["pass" if i % 2 else "mismatch" for i in range(9)]
    assert all("leap_row" not in r for r in out)
    local = leap.Leap(root, backend="cpu", bench=False).evaluate(recs, errors="keep")
    assert [r["status"] for r in local] == [r["status"] for r in out]
    assert sorted(r["i"] for r in srv.evaluate_stream(recs, errors="keep")) == list(range(9))
    turn = srv.turn(out, group_size=3)
    assert len(turn.done) == 9 and all("prune" in r for r in turn.done), turn
    assert all(r["turn"] == 2 and r["feedback"] for r in turn.next), turn.next
    p = srv.prompts("vector_add", group_size=2)
    assert [r["sample"] for r in p] == [0, 1] and p[0]["messages"], p
    try:
        srv.evaluate([{"task": "vector_add", "completion": "x", "group": "big", "sample": i} for i in range(300)])
        raise AssertionError("a group larger than the queue was taken")
    except leap.ServerError as e:
        assert e.status == 413, e
    print("ok")
PY
	echo "$output"
	assert_line ok
}

@test "serve: the Ray pool starts a server per worker and routes every group to one of them" {
	venv_python
	run -0 env PYTHONPATH="$ROOT/python" LEAP_PREFIX="$ROOT" "$PY" "$ROOT/tests/serve/test_ray_pool.py"
	echo "$output"
	assert_line 'ok'
}
