# sampler-openai.bats - the OpenAI-compatible sampler example against a local fake server.
load helpers

SAMPLER="$ROOT/examples/sampler-openai"

setup() {
	command -v python3 >/dev/null || skip "python3 is needed for the fake server"
	cd "$BATS_TEST_TMPDIR"
	SERVER_PID=
	export LEAP_BACKOFF=0.05
}

teardown() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
}

# start_server [ARGS]: starts the fake server on a free port; sets PORT and URL.
start_server() {
	rm -f port requests.jsonl
	python3 "$FIXTURES/sampler-openai/fake_server.py" port requests.jsonl "$@" &
	SERVER_PID=$!
	# it writes its port once it listens (a loaded machine may take a while to start python)
	for _ in $(seq 2400); do
		[ -s port ] || ! kill -0 "$SERVER_PID" 2>/dev/null && break
		sleep 0.05
	done
	[ -s port ] || fail "the fake server did not start"
	PORT=$(cat port)
	URL="http://127.0.0.1:$PORT/v1"
}

# record SAMPLE CONTENT: one turn-1 record asking CONTENT.
record() {
	printf '{"task":"softmax","group":"softmax","sample":%s,"turn":1,"messages":[{"role":"user","content":"%s"}]}\n' "$1" "$2"
}

@test "sampler-openai: --help, --version and usage errors" {
	run -0 "$SAMPLER" --help
	assert_line --index 0 "usage: sampler-openai [OPTION]... [FILE]..."
	assert_output --partial "--concurrency N"
	run -0 "$SAMPLER" --version
	assert_output "sampler-openai 0.1.0"
	run -2 "$SAMPLER" --frobnicate
	assert_output --partial "unknown option '--frobnicate'"
	run -2 "$SAMPLER" --concurrency 0
	assert_output --partial "concurrency must be an integer"
	run -2 "$SAMPLER" --temperature hot
	run -2 "$SAMPLER" --max-tokens
	assert_output --partial "requires an argument"
	run -2 "$SAMPLER" --extra '[1]'
	run -2 "$SAMPLER" --url ftp://x
}

@test "sampler-openai: adds completion and tokens, keeps every other byte and the input order" {
	start_server
	{
		printf '{"task":"softmax","sample":0,"turn":1,"note":1.50,"messages":[{"role":"user","content":"first answer"}]}\n'
		for i in $(seq 1 19); do record "$i" "question $i"; done
	} >in.jsonl
	run -0 bash -c '"$1" --url "$2" --concurrency 5 <in.jsonl >out.jsonl' _ "$SAMPLER" "$URL"
	[ "$(wc -l <out.jsonl)" -eq 20 ]
	run -0 head -1 out.jsonl
	assert_output '{"task":"softmax","sample":0,"turn":1,"note":1.50,"messages":[{"role":"user","content":"first answer"}],"completion":"echo: first answer","tokens":3}'
	run -0 jq -r '.sample' out.jsonl
	[ "$output" = "$(seq 0 19)" ]
	run -0 jq -r 'select(.sample == 7) | .completion' out.jsonl
	assert_output "echo: question 7"
}

@test "sampler-openai: model, temperature, max tokens and extra fields reach the server, from flags or environment" {
	start_server
	record 0 hi >in.jsonl
	run -0 "$SAMPLER" --url "$URL" -m qwen-coder -t 0.7 -n 321 -x '{"top_p":0.9}' in.jsonl
	run -0 jq -c '.body | [.model, .temperature, .max_tokens, .top_p, .messages[0].content]' requests.jsonl
	assert_output '["qwen-coder",0.7,321,0.9,"hi"]'
	rm requests.jsonl
	LEAP_OPENAI_URL=$URL LEAP_MODEL=from-env LEAP_TEMPERATURE=0 LEAP_MAX_TOKENS=99 run -0 "$SAMPLER" in.jsonl
	run -0 jq -c '.body | [.model, .temperature, .max_tokens]' requests.jsonl
	assert_output '["from-env",0,99]'
}

@test "sampler-openai: server errors are retried with backoff until the call succeeds" {
	start_server --fail 2
	record 0 hello >in.jsonl
	run -0 "$SAMPLER" --url "$URL" --retries 3 in.jsonl
	assert_output --partial '"completion":"echo: hello"'
	[ "$(wc -l <requests.jsonl)" -eq 3 ]
}

@test "sampler-openai: HTTP 429 is retried too" {
	start_server --fail 1 --fail-status 429
	record 0 hello >in.jsonl
	run -0 "$SAMPLER" --url "$URL" in.jsonl
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
}

@test "sampler-openai: a call that keeps failing becomes an error record, the others go on" {
	start_server --fail 3
	{ record 0 a; record 1 b; } >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --url "$URL" --retries 1 --concurrency 1 in.jsonl
	assert_equal "$stderr" "sampler-openai: 1 of 2 records carry an error"
	[ "${#lines[@]}" -eq 2 ]
	echo "$output" >out.jsonl
	run -0 jq -r 'select(.sample == 0) | .error.message' out.jsonl
	assert_output --partial "HTTP 503"
	assert_output --partial "(after 2 attempts)"
	run -0 jq -r 'select(.sample == 1) | .completion' out.jsonl
	assert_output "echo: b"
	[ "$(wc -l <requests.jsonl)" -eq 4 ]
}

@test "sampler-openai: a client error (400) fails at once without retries" {
	start_server
	record 0 FAIL400 >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --url "$URL" --retries 5 in.jsonl
	run -0 jq -r '.error | "\(.program) \(.file) \(.line) \(.message)"' <<<"$output"
	assert_output --partial "sampler-openai in.jsonl 1 HTTP 400:"
	assert_output --partial "context length exceeded"
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
	assert_equal "$stderr" "sampler-openai: 1 of 1 records carry an error"
}

@test "sampler-openai: a call past the timeout becomes an error record" {
	start_server
	{ record 0 SLOW; record 1 fast; } >in.jsonl
	# SLOW is answered after 60 s; 5 s is far more than the fast call needs, loaded or not
	run -1 --separate-stderr "$SAMPLER" --url "$URL" --timeout 5 --retries 0 in.jsonl
	run -0 jq -r '.error.message // .completion' <<<"$output"
	assert_line --index 0 --partial "call failed: curl: (28)"
	assert_line --index 1 "echo: fast"
}

@test "sampler-openai: no server listening: every record comes out with an error" {
	start_server
	kill "$SERVER_PID"
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=
	{ record 0 a; record 1 b; record 2 c; } >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --url "$URL" --retries 1 in.jsonl
	[ "${#lines[@]}" -eq 3 ]
	run -0 jq -r '.error.message' <<<"$output"
	assert_line --index 0 --partial "call failed: curl: (7)"
}

@test "sampler-openai: malformed lines, records without messages and error records are never dropped" {
	start_server
	{
		record 0 ok
		echo 'not json at all'
		echo ''
		echo '{"task":"softmax","sample":2}'
		echo '{"task":"softmax","sample":3,"error":{"program":"leap-compile","message":"earlier"}}'
		printf '{"task":"softmax","sample":4,"turn":1,"messages":[{"role":"user","content":"crlf"}]}\r\n'
	} >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --url "$URL" in.jsonl
	[ "${#lines[@]}" -eq 5 ]
	assert_line --index 1 '{"error":{"program":"sampler-openai","file":"in.jsonl","line":2,"message":"invalid JSON: not one object"},"raw":"not json at all"}'
	assert_line --index 2 --partial '"message":"no messages array: nothing to send"'
	assert_line --index 3 '{"task":"softmax","sample":3,"error":{"program":"leap-compile","message":"earlier"}}'
	assert_line --index 4 --partial '"completion":"echo: crlf"'
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
}

@test "sampler-openai: the API key goes in the Authorization header, never on the command line" {
	start_server
	record 0 hi >in.jsonl
	OPENAI_API_KEY=sk-test-123 run -0 "$SAMPLER" --url "$URL" in.jsonl
	run -0 jq -r '.auth' requests.jsonl
	assert_output "Bearer sk-test-123"
	run -2 "$SAMPLER" --api-key sk-test-123
}

@test "sampler-openai: a 200 answer without content is an error record" {
	start_server
	record 0 NOCONTENT >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --url "$URL" in.jsonl
	assert_output --partial '"message":"HTTP 200: the response has no choices[0].message.content"'
}
