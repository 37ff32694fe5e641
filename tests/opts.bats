#!/usr/bin/env bats
# opts.bats - lib/core/opts.c, the option tables: the --help list, getopt_long's arrays, bad tables.

load helpers

setup() {
	link_with_lib "$FIXTURES/opts/opts_check.c" "$BATS_TEST_TMPDIR/opts"
}

@test "opts: the help of each entry starts at the column, two spaces after longer names; --x, --y share a line" {
	run -0 "$BATS_TEST_TMPDIR/opts" help
	# the column is 25: 2 + 23, as in every program's --help
	assert_output "$(cat <<'TXT'
  -n, --count N          how many
      --quiet, --loud    say less
      --level[=L]        a level (default 1)
                         second line
                         third line
      --exactly-this ARG names end at column 24
  -x, --much-longer-name FILE  names past the column
                         then at it
  -v, --verbose[=K]      short and optional
TXT
)"
}

@test "opts: getopt_long takes the table's letters, long names and arguments" {
	run -0 "$BATS_TEST_TMPDIR/opts" short
	assert_output "n:x:v::"
	run -0 "$BATS_TEST_TMPDIR/opts" parse -n 3 --quiet --loud --level --level=2 -x f -v -vk --verbose=z
	assert_output "$(printf '%s\n' '0x6e 3' '0x1100 -' '0x1101 -' '0x1102 -' '0x1102 2' '0x78 f' '0x76 -' '0x76 k' '0x76 z')"
}

@test "opts: a table getopt_long could not serve as meant is an internal error, exit 2" {
	while IFS=: read -r t said; do
		run -2 --separate-stderr "$BATS_TEST_TMPDIR/opts" "$t"
		[[ "$stderr" == "opts: internal error: "*"$said"* && -z "$output" ]] || { echo "$t: $stderr $output"; return 1; }
	done <<'TXT'
dup-name:option --a is in the table twice
dup-letter:option -q is in the table twice
dup-val:options --a and --b return the same value
bad-val:-q returns 114
no-val:no value for getopt_long
no-argname:an argument needs a name
stray-argname:an argument needs a name
no-help-first:no help and no entry before it
TXT
}

@test "opts: every option a program's --help lists is one its code handles" {
	# The table gives getopt_long the option; the program's switch must have a case for it, or
	# the option is a usage error "unhandled option" (or "unknown option"). Each option is
	# given once, with an argument "x" where it takes one (most are then a usage error naming
	# the option, which is handled), on an empty input in an empty directory.
	cd "$BATS_TEST_TMPDIR"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	n=0
	for f in "$ROOT"/cmd/*.c; do
		p=$(basename "$f" .c)
		while read -r o; do
			n=$((n + 1))
			# leap-serve serves until a signal (on a free port here): still serving after 5 s
			# (timeout's 124) is an option handled
			if [ "$p" = leap-serve ]; then
				run --separate-stderr timeout 5 "$p" "$o" --port 0 </dev/null
				[ "$status" -ne 124 ] || status=0
			else
				run --separate-stderr timeout 60 "$p" "$o" </dev/null
			fi
			[[ "$status" -le 2 && "$stderr" != *"unhandled option"* && "$stderr" != *"unknown option"* ]] ||
				{ echo "$p $o: status $status: $stderr"; return 1; }
		done < <("$p" --help | grep -oE '^  (-[A-Za-z0-9], |    )--[a-z0-9-]+( [A-Z]|\[=[A-Z]|, --[a-z0-9-]+)?' |
			sed -E 's/^  (-[A-Za-z0-9], |    )//; s/ [A-Z]$/=x/; s/\[=[A-Z]$//; s/, /\n/')
	done
	echo "$n options given"
	[ "$n" -gt 100 ]
}
