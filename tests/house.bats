#!/usr/bin/env bats
# house.bats - the shape of lib/ that lets a newcomer read it a file at a time (issue 40): no
# file too long to hold in one's head, and no circle between files, of calls or of includes.
# A circle makes its files one piece that cannot be read, tested or moved into its folder
# alone; whoever makes one is told which files and which symbols close it
# (tests/fixtures/house/circles.py), so that the circle is broken where it is made.

load helpers

# The files of lib/ at any depth: the folders README's Internals names may hold them.
lib_sources() {
	find "$ROOT/lib" -type f \( -name '*.c' -o -name '*.h' \) | sort
}

@test "house: no source file of lib/ is over 900 lines" {
	long=$(lib_sources | xargs wc -l | awk '$2 != "total" && $1 > 900 { print $2 ": " $1 " lines" }')
	[ -z "$long" ] || fail "split these by job (at most 900 lines a file):
${long//$ROOT\//}"
}

# The call graph comes from the archive the programs link, lib/libleap.a: file A uses file B
# when A's object takes a global symbol that B's defines. An archive older than a source
# would judge code that is no longer there, so the test says so instead.
@test "house: no call circle between the files of lib/" {
	archive="$ROOT/lib/libleap.a"
	[ -f "$archive" ] || fail "lib/libleap.a is missing: run make"
	newer=$(find "$ROOT/lib" -type f \( -name '*.c' -o -name '*.h' \) -newer "$archive" | head -n 3)
	[ -z "$newer" ] || fail "lib/libleap.a is older than ${newer//$ROOT\//}: run make"
	nm -A -g "$archive" >"$BATS_TEST_TMPDIR/symbols"
	# nm -A prints `archive:member.o:address TYPE symbol`, and U (undefined) for a use.
	awk '
	{ split($1, at, ":"); file = at[2]; sub(/\.o$/, ".c", file); type = $(NF - 1); sym = $NF }
	type == "U" { user[++n] = file; used[n] = sym; next }
	{ owner[sym] = file }
	END { for (i = 1; i <= n; i++) if (used[i] in owner) print user[i], owner[used[i]], used[i] }
	' "$BATS_TEST_TMPDIR/symbols" >"$BATS_TEST_TMPDIR/edges"
	[ -s "$BATS_TEST_TMPDIR/edges" ] || fail "no file of lib/libleap.a uses another: nm read nothing"
	run python3 "$FIXTURES/house/circles.py" <"$BATS_TEST_TMPDIR/edges"
	[ "$status" -eq 0 ] || fail "files of lib/ call each other round a circle (file -> file it calls):
$output"
}

# A quoted include names a header by its path from lib/ (or the including file's folder); the
# graph joins headers by base name, which is one file each in lib/.
@test "house: no include circle between the headers of lib/" {
	while read -r h; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h" |
			while read -r inc; do echo "${h##*/} ${inc##*/}"; done
	done < <(lib_sources | grep '\.h$') >"$BATS_TEST_TMPDIR/edges"
	[ -s "$BATS_TEST_TMPDIR/edges" ] || fail "no header of lib/ includes another: the reading is wrong"
	run python3 "$FIXTURES/house/circles.py" <"$BATS_TEST_TMPDIR/edges"
	[ "$status" -eq 0 ] || fail "headers of lib/ include each other round a circle:
$output"
}

# The two checks above pass only if the finder can see a circle at all: shown one, it names
# its files and nothing outside it.
@test "house: the circle finder names a circle's files and the edges that close it" {
	run -1 python3 "$FIXTURES/house/circles.py" <<-'EOF'
	a.c b.c f
	b.c c.c g
	c.c a.c h
	c.c d.c i
	d.c d.c j
	EOF
	assert_output "circle: a.c b.c c.c
  a.c -> b.c (f)
  b.c -> c.c (g)
  c.c -> a.c (h)"
	run -0 python3 "$FIXTURES/house/circles.py" <<<"a.c b.c f"
	assert_output ""
}
