# manpage.bash - checks of a program's man page: the SYNOPSIS is the --help synopsis, the EXAMPLES run.

# man_synopsis PAGE: prints the lines between .nf and .fi of the SYNOPSIS section.
man_synopsis() {
	awk '/^\.SH SYNOPSIS/{s=1; next} s && /^\.nf/{n=1; next} s && /^\.fi/{exit} n{print}' "$1"
}

# help_synopsis PROG: prints the --help lines up to the first blank one.
help_synopsis() {
	"$1" --help | awk '/^$/{exit} {print}'
}

# man_examples PAGE: prints the commands ("$ " lines inside .EX/.EE), one per line, unescaped.
man_examples() {
	awk '/^\.EX/{e=1; next} /^\.EE/{e=0; next} e && /^\$ /{sub(/^\$ /, ""); gsub(/\\e/, "\\"); gsub(/\\-/, "-"); print}' "$1"
}

# run_man_examples PAGE: runs every example from the repository root; fails naming the first
# one that does not exit 0.
run_man_examples() {
	local page=$1 cmd n=0
	while IFS= read -r cmd; do
		n=$((n + 1))
		(cd "$ROOT" && bash -o pipefail -c "$cmd") >/dev/null 2>&1 || {
			echo "example failed: $cmd" >&2
			return 1
		}
	done < <(man_examples "$page")
	[ "$n" -gt 0 ] || { echo "no examples in $page" >&2; return 1; }
}
