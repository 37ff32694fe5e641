#!/usr/bin/env bats
# docs.bats - every program has a man page whose SYNOPSIS is its usage, pages render cleanly,
# and every EXAMPLES command in them runs.
load helpers

programs() {
	for f in "$ROOT"/cmd/*.c; do basename "$f" .c; done
}

# synopsis_of_man PAGE: the SYNOPSIS lines of a man page as plain text.
synopsis_of_man() {
	sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$1" | sed -e '1d;$d' -e '/^\.nf/d;/^\.fi/d' |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g'
}

# synopsis_of_usage PROGRAM: the usage lines of --help without "usage: " / "   or: ".
synopsis_of_usage() {
	"$1" --help | sed -n '1,/^$/p' | sed -e '/^$/d' -e 's/^usage: //' -e 's/^   or: //'
}

@test "every program has a man page whose SYNOPSIS equals its usage lines" {
	for p in $(programs); do
		[ -f "$ROOT/man/$p.1" ] || { echo "no man/$p.1"; return 1; }
		diff <(synopsis_of_man "$ROOT/man/$p.1") <(synopsis_of_usage "$p") ||
			{ echo "SYNOPSIS of man/$p.1 differs from $p --help"; return 1; }
	done
}

@test "every program: --help on stdout exit 0, --version, unknown option exit 2 with usage" {
	for p in $(programs); do
		run --separate-stderr -0 "$p" --help
		[[ "$output" == "usage: $p "* ]] || { echo "$p --help: $output"; return 1; }
		run --separate-stderr -0 "$p" --version
		[[ "$output" == "$p (leap) "* ]] || { echo "$p --version: $output"; return 1; }
		run --separate-stderr -2 "$p" --no-such-option
		[[ "$stderr" == *"usage: $p "* && -z "$output" ]] || { echo "$p bad option: $stderr"; return 1; }
	done
}

@test "every man page renders without warnings" {
	for page in "$ROOT"/man/*.[1-9]; do
		warnings="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)"
		[ -z "$warnings" ] || { echo "$page: $warnings"; return 1; }
	done
}

@test "every EXAMPLES command of every man page runs" {
	cd "$ROOT"
	n=0
	for page in man/*.[1-9]; do
		# lines "$ cmd" between .EX and .EE in the EXAMPLES section, roff escapes undone
		while IFS= read -r cmd; do
			n=$((n + 1))
			out="$(bash -c "$cmd"'
				codes=("${PIPESTATUS[@]}")
				for c in "${codes[@]}"; do
					case $c in 0|1|141) ;; *) echo "exit statuses: ${codes[*]}" >&2; exit 9 ;; esac
				done' 2>&1)" || { echo "$page: \$ $cmd"; echo "$out"; return 1; }
		done < <(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$page" | sed -n '/^\.EX/,/^\.EE/p' |
			sed -n 's/^\$ //p' | sed -e 's/\\-/-/g' -e 's/\\e/\\/g')
	done
	echo "$n examples ran"
	[ "$n" -gt 0 ]
}
