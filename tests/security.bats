# security.bats - the limits SECURITY.md documents (what the sandbox does NOT stop), shown; a fix turns a test red: update SECURITY.md with it.
load helpers

F="$FIXTURES/security"

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	T="$BATS_TEST_TMPDIR"
}

teardown() {
	rm -f "/tmp/leap-security-probe.$BATS_ROOT_PID" "/dev/shm/leap-security-probe.$BATS_ROOT_PID"
}

# rec_file TASK BACKEND FILE: a record whose code is the text of FILE.
rec_file() {
	jq -nc --arg t "$1" --arg b "$2" --rawfile c "$3" '{task:$t,backend:$b,code:$c}'
}

@test "compile: an #include of a file outside the candidate quotes that file in the diagnostics and the log" {
	printf '#include "%s"\nvoid vector_add(const float *a, const float *b, float *c, int n) { }\n' \
		"$F/secret.txt" >"$T/k.c"
	rec_file vector_add cpu "$T/k.c" >"$T/in.jsonl"
	run -0 --separate-stderr leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	jq -e '.status == "compile_error"' "$T/out.json"
	# the compiler ran with our file access and quoted the file: its words reach the verdict
	jq -e '[.compile.diagnostics[] | select(.where == "secret.txt")] | length > 0' "$T/out.json"
	jq -e '.compile.log | contains("LEAP-SECRET-7f3a")' "$T/out.json"
	jq -e '[.compile.diagnostics[].message] | any(contains("LEAP") or contains("first"))' "$T/out.json"
}

@test "compile: a candidate that #includes the task's reference.c by its path passes (the compile step does not hide the suite)" {
	printf '#include "%s/softmax/reference.c"\n' "$LEAP_TASKS" >"$T/cheat.c"
	rec_file softmax cpu "$T/cheat.c" >"$T/in.jsonl"
	leap-compile "$T/in.jsonl" >"$T/c.jsonl"
	run -0 --separate-stderr leap-verify "$T/c.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
}

@test "verify: data the compiler embedded (.incbin) reaches verify.output" {
	sed "s|@FILE@|$F/secret.txt|" "$F/incbin.c.in" >"$T/incbin.c"
	rec_file vector_add cpu "$T/incbin.c" >"$T/in.jsonl"
	leap-compile "$T/in.jsonl" >"$T/c.jsonl"
	run -0 --separate-stderr leap-verify "$T/c.jsonl"
	echo "$output" >"$T/out.json"
	jq -e '.status == "pass"' "$T/out.json"
	jq -e '.verify.output | contains("LEAP-SECRET-7f3a")' "$T/out.json"
}

@test "verify: a candidate can leave files in world-writable host directories (/tmp, /dev/shm) that outlive it" {
	for p in "/tmp/leap-security-probe.$BATS_ROOT_PID" "/dev/shm/leap-security-probe.$BATS_ROOT_PID"; do
		[ -d "${p%/*}" ] || continue
		sed "s|@PATH@|$p|" "$F/leave_file.c.in" >"$T/leave.c"
		rec_file vector_add cpu "$T/leave.c" >"$T/in.jsonl"
		leap-compile "$T/in.jsonl" >"$T/c.jsonl"
		run -0 --separate-stderr leap-verify "$T/c.jsonl"
		[ "$(jq -r .status <<<"$output")" = pass ]
		[ "$(cat "$p")" = left ]
		rm -f "$p"
	done
}
