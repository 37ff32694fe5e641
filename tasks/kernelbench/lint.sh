#!/usr/bin/env bash
# lint.sh - the fairness lint (tests/fixtures/tasks/check-task.sh) of KernelBench tasks, under the
# task's own tolerance and KernelBench's, two at a time.
# usage: tasks/kernelbench/lint.sh WORKDIR ID...
# Run from the repository root with bin/ and lib/libleap.a built. Prints "ok ID MODE" or
# "FAIL ID MODE" and the first broken rules per task and mode; exit 0 when every task is fair.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: tasks/kernelbench/lint.sh WORKDIR ID..." >&2; exit 2; }
work=$1
shift
mkdir -p "$work"
# one checker for all (check-task.sh builds it when missing or stale)
bash tests/fixtures/tasks/check-task.sh --drawn 0 --checker "$work/check" "$1" "$work" >/dev/null 2>&1
export work
printf '%s\n' "$@" | xargs -P "${LINT_JOBS:-2}" -I{} bash -c '
	for mode in task kernelbench; do
		if bash tests/fixtures/tasks/check-task.sh --tolerance $mode --checker "$work/check" {} "$work" \
			>"$work/{}.$mode.log" 2>&1; then
			echo "ok {} $mode"
		else
			echo "FAIL {} $mode"
			grep -E "FAIL|error" "$work/{}.$mode.log" | head -3
		fi
	done' | tee "$work/lint.out"
! grep -q "^FAIL" "$work/lint.out"
