#!/usr/bin/env bash
# fresh-root.sh - `make demo` and `make check` in a fresh Debian 12 minbase root, run as README.md
# says, and the counts: what a new user's machine lacks and this one has (a package no test set
# names, a toolkit, a readable checkout) shows here and nowhere else (issue 25).
#
# usage: bash tests/fresh-root.sh [DIR]   (as root; DIR: where the root is made, default a new
#                                         directory under /var/tmp, removed at the end unless
#                                         KEEP=1; MIRROR, default http://deb.debian.org/debian)
#        bash tests/fresh-root.sh --in DIR COMMAND
#                                         (as root) runs the bash COMMAND in a root kept with
#                                         KEEP=1, in DIR/root/leap with the mounts and the
#                                         login of step 3 and 4, its output here, its exit
#                                         status the script's: a failure of the full run shown
#                                         again with its stderr, e.g. --in DIR 'bats
#                                         --print-output-on-failure -f NAME tests/FILE.bats'
#
# 1. debootstrap --variant=minbase bookworm DIR, DIR mode 755 as a / is (tests/deps.sh
#    fresh-root installs debootstrap);
# 2. the committed tree of this checkout (HEAD; uncommitted changes are not in it) cloned to
#    DIR/root/leap, under /root (mode 700) as a new user's clone would be;
# 3. in a mount namespace of its own, so that nothing is mounted on the host and everything goes
#    when it ends: DIR bound on itself (the sandbox's pivot_root needs the root it leaves to be
#    a mount point, as it is on a real machine), a new proc (programs read /proc/self; the
#    sandbox mounts a proc of its own, which the kernel allows only beside a full one), /sys
#    with its cgroup hierarchies (leap-bench freezes candidates with a cgroup freezer, cgroup2
#    or v1, and both give every sandbox a memory cgroup), /dev with /dev/pts (the
#    device nodes the sandbox binds into its minimal root; script(1) needs a pseudo-terminal),
#    a tmpfs of its own on /dev/shm and on /run (tests write into /dev/shm and /run, which a
#    booted machine has empty), and the host's resolv.conf (apt-get reaches the mirror);
# 4. there, as root in /root/leap: `apt-get update && apt-get install -y make` (README: what a
#    minimal image needs first), `make demo`, `make check`; their output goes to
#    tests/.tmp/fresh-root/{make,demo,check}.log of this checkout.
# Prints each step's time, the demo's last line, make check's counts and its failing tests.
# Exit status: 0 when both passed, 1 otherwise, 2 when the root could not be made. Slow: the
# packages and the whole suite (about 45 minutes on 2 cores).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
mirror=${MIRROR:-http://deb.debian.org/debian}
say() { echo "fresh-root: $*"; }
die() {
	say "$*" >&2
	exit 2
}
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot and mounts need it)"
# The steps in the root, in a mount namespace of its own (step 3 above says why each mount);
# with --in COMMAND, COMMAND alone, its output not redirected.
inside='set -u
r=$1
mount --bind "$r" "$r"
mount -t proc proc "$r/proc"
mount --rbind /sys "$r/sys" && mount --make-rslave "$r/sys"
mount --rbind /dev "$r/dev" && mount --make-rslave "$r/dev"
mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
mount -t tmpfs -o mode=755 tmpfs "$r/run"
cp /etc/resolv.conf "$r/etc/resolv.conf"
login() { # login COMMAND: runs COMMAND in the root, as a new login of root would
	chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "cd /root/leap || exit 2; $1" # not &&: a COMMAND that starts with a job
}
if [ "${2:-}" = --in ]; then
	login "$3"
	exit
fi
step() { # step NAME COMMAND: runs COMMAND as login does, its output in /root/NAME.log
	local t=$SECONDS rc
	login "$2" >"$r/root/$1.log" 2>&1
	rc=$?
	echo "fresh-root: $1: exit $rc ($((SECONDS - t)) s)"
	return $rc
}
step make "apt-get update && apt-get install -y make" || exit 2
step demo "make demo"
demo=$?
step check "make check"
check=$?
echo "fresh-root: demo: $(tail -n 1 "$r/root/demo.log")"
echo "fresh-root: make check: $(grep -E "^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped\$" "$r/root/check.log" | tail -n 1)"
grep -E "^not ok " "$r/root/check.log" | sed "s/^/fresh-root:   /"
[ "$demo" -eq 0 ] && [ "$check" -eq 0 ]'
if [ "${1:-}" = --in ]; then
	[ $# -eq 3 ] || die "usage: bash tests/fresh-root.sh --in DIR COMMAND"
	[ -d "$2/root/leap" ] || die "$2/root/leap is missing: make the root with KEEP=1 first"
	unshare --mount --propagation private bash -c "$inside" - "$(cd "$2" && pwd)" --in "$3"
	exit
fi
sh "$src/tests/deps.sh" fresh-root || die "tests/deps.sh fresh-root could not install debootstrap"
root=${1:-$(mktemp -d /var/tmp/leap-fresh-root.XXXXXX)}
mkdir -p "$root" || die "cannot make $root"
root=$(cd "$root" && pwd)
[ -z "$(ls -A "$root")" ] || die "$root is not empty"
# a machine's / is 755, and debootstrap keeps DIR's mode: from mktemp -d, 700, where no user
# but root gets through / (apt's _apt, nobody, the sandbox's users) and every test that runs a
# program as another user without a root of its own fails, loading no library (issue 44)
chmod 755 "$root" || die "cannot chmod 755 $root"
if [ "${KEEP:-}" != 1 ]; then
	trap 'rm -rf --one-file-system "$root"' EXIT
fi
t0=$SECONDS

say "debootstrap --variant=minbase bookworm $root ($mirror)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
	die "debootstrap failed: $(tail -n 3 "$root.debootstrap.log")"
rm -f "$root.debootstrap.log"
say "root made ($((SECONDS - t0)) s)"

git clone -q "$src" "$root/root/leap" && git -C "$root/root/leap" checkout -q --detach "$(git -C "$src" rev-parse HEAD)" ||
	die "cannot clone $src"
say "/root/leap: $(git -C "$src" log -1 --format='%h %s')"

unshare --mount --propagation private bash -c "$inside" - "$root"
rc=$?
mkdir -p "$src/tests/.tmp/fresh-root"
cp "$root"/root/*.log "$src/tests/.tmp/fresh-root/" 2>/dev/null
say "$((SECONDS - t0)) s in all; the logs are in tests/.tmp/fresh-root/"
exit $rc
