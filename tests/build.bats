#!/usr/bin/env bats
# build.bats - installation: programs, man pages and the task suite land under PREFIX and the
# installed programs find the installed suite.
load helpers

@test "make install PREFIX=... installs programs, man pages and the suite; they find the suite" {
	prefix="$BATS_TEST_TMPDIR/prefix"
	run -0 make -C "$ROOT" -s install PREFIX="$prefix"
	[ -x "$prefix/bin/leap-prompt" ]
	[ -f "$prefix/share/man/man1/leap-prompt.1" ]
	[ -f "$prefix/share/man/man5/leap-record.5" ]
	[ -f "$prefix/share/man/man7/leap.7" ]
	[ -f "$prefix/share/leap/tasks/softmax/task.json" ]
	# tasks/kernelbench is the KernelBench suites' generator (it writes fixture solutions): not installed
	[ -f "$prefix/share/leap/tasks/kernelbench-l1/kb1_019_relu/task.json" ]
	[ ! -e "$prefix/share/leap/tasks/kernelbench" ]
	# a copy elsewhere: nothing may point back into the build tree
	mv "$prefix" "$BATS_TEST_TMPDIR/moved"
	unset LEAP_TASKS
	run -0 "$BATS_TEST_TMPDIR/moved/bin/leap-task" --all --list
	assert_output "$(cd "$ROOT/tasks" && ls -d */task.json | cut -d/ -f1 | LC_ALL=C sort)"
	run -0 "$BATS_TEST_TMPDIR/moved/bin/leap-task" softmax
	assert_equal "$(jq -r .dir <<<"$output")" "$BATS_TEST_TMPDIR/moved/share/leap/tasks/softmax"
	# the suite folders come along, found by id
	run -0 "$BATS_TEST_TMPDIR/moved/bin/leap-task" kb1_019_relu
	assert_equal "$(jq -r .dir <<<"$output")" "$BATS_TEST_TMPDIR/moved/share/leap/tasks/kernelbench-l1/kb1_019_relu"
	run -0 make -C "$ROOT" -s uninstall PREFIX="$BATS_TEST_TMPDIR/moved"
	[ ! -e "$BATS_TEST_TMPDIR/moved/bin/leap-prompt" ]
	[ ! -e "$BATS_TEST_TMPDIR/moved/share/leap" ]
}

@test "make install rebuilds nothing, neither does the build after it; the samplers are installed" {
	cd "$ROOT"
	make -s all
	touch "$BATS_TEST_TMPDIR/stamp"
	sleep 1
	run -0 make -s install PREFIX="$BATS_TEST_TMPDIR/prefix"
	run -0 make -s all
	run -0 find build bin libexec lib/libleap.a -newer "$BATS_TEST_TMPDIR/stamp" -type f
	assert_output ""
	# the samplers, the replay one with its recordings, work from the installed tree
	export PATH="$BATS_TEST_TMPDIR/prefix/bin:$PATH"
	unset LEAP_TASKS
	run -0 leap-sampler-openai --help
	run -0 bash -c 'leap-prompt --backend cpu -g 2 vector_add | leap-sampler-replay | jq -r ".completion | length > 0"'
	assert_output $'true\ntrue'
	run -0 make -s uninstall PREFIX="$BATS_TEST_TMPDIR/prefix"
	[ ! -e "$BATS_TEST_TMPDIR/prefix/bin/leap-sampler-replay" ]
}

@test "make demo and make check take the dependency step first, the demo only what it needs" {
	cd "$ROOT"
	# the step comes before any compiler runs (the build is a sub-make after it); run as a
	# top-level make even under `make check`
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -n demo
	assert_line --index 0 "sh tests/deps.sh demo"
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -n check
	assert_line --index 0 "sh tests/deps.sh check"
	# the demo set: a compiler, make, jansson, libcrypto, jq; no clang, no test tools
	run -0 sh tests/deps.sh --list demo
	for p in gcc make libjansson-dev libssl-dev jq; do assert_line "$p"; done
	for p in clang libclang-rt-dev bats python3; do refute_line "$p"; done
	# the check set is the demo set and more
	run -0 sh tests/deps.sh --list check
	for p in $(sh tests/deps.sh --list demo) clang libclang-rt-dev bats bats-assert python3 man-db; do assert_line "$p"; done
	# commands the tests call, by their packages (issue 25: curl was missing on a fresh root)
	for p in curl procps binutils util-linux; do assert_line "$p"; done
	run -0 sh tests/deps.sh --list fresh-root
	assert_output debootstrap
	run -2 sh tests/deps.sh --list nope
}

@test "sources include banned.h last and open with a one-line purpose" {
	cd "$ROOT"
	for f in lib/*/*.c cmd/*.c; do
		last_include="$(grep '^#include' "$f" | tail -n 1)"
		case $last_include in '#include "banned.h"' | '#include "core/banned.h"') ;; *) echo "$f: banned.h is not the last include"; return 1 ;; esac
	done
	for f in lib/*/*.[ch] cmd/*.c; do
		head -n 1 "$f" | grep -Eq '^(/\*|//) [^ ]+ - .+' || { echo "$f: no purpose line"; return 1; }
	done
}
