#!/usr/bin/env bats
# backends.bats - one backend interface (lib/backend.h): outside the backends' own files no code
# names a backend, and every backend of the table has its file, its runner and its make rule,
# as README's Internals ("Adding a backend") says a new one must.
load helpers

# The files that may name a backend: the interface and the rows of the table.
is_backend_file() {
	case $1 in
	lib/backend.h | lib/backend.c | lib/backend_*.c) return 0 ;;
	esac
	return 1
}

# Files that still name a backend while others change them (issue 40: the record classification
# shared by leap-verify and leap-bench); each goes through the table once that work is merged,
# and leaves this list then.
is_pending() {
	case $1 in
	cmd/leap-verify.c | cmd/leap-bench.c) return 0 ;;
	esac
	return 1
}

@test "no file of lib/ or cmd/ outside the backends' names LEAP_BACKEND_ or \"cuda\"" {
	cd "$ROOT"
	bad=
	for f in lib/*.c lib/*.h cmd/*.c; do
		is_backend_file "$f" && continue
		is_pending "$f" && continue
		hits=$(grep -nE 'LEAP_BACKEND_|"cuda"' "$f") || continue
		bad+="$f:"$'\n'"$hits"$'\n'
	done
	[ -z "$bad" ] || fail "these name a backend outside lib/backend*.[ch] (ask the table, backend.h):
$bad"
}

@test "the pending files still name a backend (else they leave the pending list)" {
	cd "$ROOT"
	for f in cmd/leap-verify.c cmd/leap-bench.c; do
		[ ! -e "$f" ] || grep -qE 'LEAP_BACKEND_|"cuda"' "$f" ||
			fail "$f names no backend any more: take it out of is_pending in tests/backends.bats"
	done
}

@test "every backend file is a row of the table, with a runner that mk/runners.mk builds" {
	cd "$ROOT"
	for f in lib/backend_*.c; do
		row=$(grep -oE '^const struct leap_backend_ops leap_backend_[a-z0-9_]+' "$f" | awk '{ print $4 }')
		[ -n "$row" ] || fail "$f defines no row (const struct leap_backend_ops leap_backend_NAME)"
		grep -qE "= &$row,?\$" lib/backend.c || fail "$row ($f) is not in the table of lib/backend.c"
		runner=$(grep -oE '\.runner = "[^"]+"' "$f" | sed 's/.*"\(.*\)"/\1/')
		[ -n "$runner" ] || fail "$f names no runner"
		grep -q "libexec/$runner:" mk/runners.mk || fail "mk/runners.mk has no rule for libexec/$runner ($f)"
	done
}

@test "every backend of the table: leap-task prints its shim, leap-record accepts its name" {
	for b in $(grep -ohE '^	\.name = "[^"]+"' "$ROOT"/lib/backend_*.c | sed 's/.*"\(.*\)"/\1/'); do
		run -0 leap-task --shim "$b" softmax
		assert_output --partial "leap shim for task softmax ($b)"
		run -0 leap-record <<<"{\"id\":\"x\",\"task\":\"softmax\",\"backend\":\"$b\"}"
	done
	run -1 leap-record <<<'{"id":"x","task":"softmax","backend":"tpu"}'
}
