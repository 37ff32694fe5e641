#!/usr/bin/env bats
# hmap.bats - lib/core/hmap.c, the one hash table: removal and the iterator against a plain array.

load helpers

@test "hmap: put, get, del, the iterator and free_with agree with a plain array over 200 000 operations" {
	link_with_lib "$FIXTURES/hmap/hmap_check.c" "$BATS_TEST_TMPDIR/hmap"
	run -0 "$BATS_TEST_TMPDIR/hmap" 200000
	assert_output "ok 200000 operations"
}
