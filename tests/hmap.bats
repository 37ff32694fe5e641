#!/usr/bin/env bats
# hmap.bats - lib/hmap.c, the one hash table: removal and the iterator against a plain array.

load helpers

@test "hmap: put, get, del, the iterator and free_with agree with a plain array over 200 000 operations" {
	# linked like the programs (sanitized when the build is: make check SANITIZE=1)
	san=$(grep -o -- '-fsanitize=[a-z,]*' "$ROOT/build/flags" | head -n 1 || true)
	cc -std=c11 -D_GNU_SOURCE $san -I"$ROOT/lib" -o "$BATS_TEST_TMPDIR/hmap" "$FIXTURES/hmap/hmap_check.c" \
		"$ROOT/lib/libleap.a" -ljansson -lcrypto -lm -ldl
	run -0 "$BATS_TEST_TMPDIR/hmap" 200000
	assert_output "ok 200000 operations"
}
