#!/usr/bin/env bats
# backends.bats - one backend interface (lib/backend/backend.h): outside the backends' own files no code
# names a backend, and every backend of the table has its file, its runner and its make rule,
# as doc/internals.md ("Adding a backend") says a new one must. Files are found by name
# anywhere under lib/, so that moving them into folders changes nothing here.
load helpers

# The sources of lib/ and cmd/, one per line.
sources() {
	find lib cmd -name '*.[ch]' | sort
}

# The backend files: the interface, the table and its rows (backend.h, backend.c, backend_*.c).
backend_files() {
	find lib -name 'backend.[ch]' -o -name 'backend_*.c' | sort
}

@test "no file of lib/ or cmd/ outside the backends' names LEAP_BACKEND_ or \"cuda\"" {
	cd "$ROOT"
	[ "$(backend_files | wc -l)" -ge 4 ] || fail "backend.h, backend.c and two rows not found under lib/"
	bad=
	for f in $(sources); do
		case $(basename "$f") in backend.[ch] | backend_*.c) continue ;; esac
		hits=$(grep -nE 'LEAP_BACKEND_|"cuda"' "$f") || continue
		bad+="$f:"$'\n'"$hits"$'\n'
	done
	[ -z "$bad" ] || fail "these name a backend outside the backend files (ask the table, backend.h):
$bad"
}

@test "every backend file is a row of the table, with a runner that mk/runners.mk builds" {
	cd "$ROOT"
	table=$(find lib -name backend.c)
	for f in $(find lib -name 'backend_*.c'); do
		row=$(grep -oE '^const struct leap_backend_ops leap_backend_[a-z0-9_]+' "$f" | awk '{ print $4 }')
		[ -n "$row" ] || fail "$f defines no row (const struct leap_backend_ops leap_backend_NAME)"
		grep -qE "= &$row,?\$" "$table" || fail "$row ($f) is not in the table of $table"
		runner=$(grep -oE '\.runner = "[^"]+"' "$f" | sed 's/.*"\(.*\)"/\1/')
		[ -n "$runner" ] || fail "$f names no runner"
		grep -q "libexec/$runner:" mk/runners.mk || fail "mk/runners.mk has no rule for libexec/$runner ($f)"
	done
}

@test "every backend of the table: leap-task prints its shim, leap-record accepts its name" {
	names=$(find "$ROOT/lib" -name 'backend_*.c' -exec grep -ohE '^	\.name = "[^"]+"' {} + | sed 's/.*"\(.*\)"/\1/')
	[ "$(wc -w <<<"$names")" -ge 2 ] || fail "fewer than two backends found: $names"
	for b in $names; do
		run -0 leap-task --shim "$b" softmax
		assert_output --partial "leap shim for task softmax ($b)"
		run -0 leap-record <<<"{\"id\":\"x\",\"task\":\"softmax\",\"backend\":\"$b\"}"
	done
	run -1 leap-record <<<'{"id":"x","task":"softmax","backend":"tpu"}'
}
