#!/usr/bin/env bats
# docs.bats - every program has a man page whose SYNOPSIS is its usage, pages render cleanly,
# and every EXAMPLES command in them runs; the options, environment and programs the pages name
# exist, the FIELDS of leap-task(5) and leap-record(5) are the field tables, doc/internals.md
# walks the source files there are, every test SECURITY.md cites exists, the documents read
# first stay short, and test names cite no issue.
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

@test "docs cannot drift: every option a man page names exists" {
	# The truth is each program's option table (lib/core/opts.h), as its --help lists it (the list
	# is built from the table; the test below checks it against the page's OPTIONS). Each
	# option a man page names is taken by the page's program or, named next to another leap
	# program or tool, by that one.
	python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
sys.path.insert(0, f"{root}/tests/fixtures/docs")
from helpopts import NAME, names
opts = {f[:-2]: names(root, f[:-2]) for f in sorted(os.listdir(f"{root}/cmd"))}
# options of other tools that the pages quote, with the word that must be near them
EXTERNAL = {"query-gpu": "nvidia-smi", "use_fast_math": "nvcc", "defsym": "linked", "rawfile": "jq", "pipe": "parallel"}
bad = [f"{prog}: --help lists no option" for prog, own in opts.items() if not own]
# every page: an option named is the page's program's, or that of the leap program or tool
# named just before it
for f in sorted(os.listdir(f"{root}/man")):
    prog = f.rsplit(".", 1)[0]
    text = open(f"{root}/man/{f}").read().replace("\\-", "-")
    for m in re.finditer(r"(?<![a-z0-9_-])--(" + NAME + ")", text):
        o, before = m.group(1), text[max(0, m.start() - 200):m.start()]
        if o in opts.get(prog, set()):
            continue
        named = re.findall(r"\b(leap-[a-z]+)\b", before)
        if named and named[-1] in opts and o in opts[named[-1]]:
            continue
        if not f.endswith(".1") and any(o in s for s in opts.values()):
            continue  # leap(7), leap-record(5), leap-task(5) describe every program
        if o in EXTERNAL and EXTERNAL[o] in before:
            continue
        bad.append(f"man/{f}: names --{o}, which no program it could mean takes")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
PY
}

@test "docs cannot drift: the options of every --help are the OPTIONS of its man page" {
	# --help's option list is built from the program's option table (lib/core/opts.h); the man
	# page's OPTIONS are its .TP tags. Both must list the same entries, each once, with the
	# same short letter and argument name: "-s, --seed N", "--expand-slow[=S]",
	# "--progress, --no-progress".
	python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
sys.path.insert(0, f"{root}/tests/fixtures/docs")
from helpopts import entries
from roff import roff_text
bad = []
for f in sorted(os.listdir(f"{root}/cmd")):
    prog, page = f[:-2], f"man/{f[:-2]}.1"
    listed = entries(root, prog)
    sect = re.search(r"^\.SH OPTIONS\n(.*?)(?=^\.SH )", open(f"{root}/{page}").read(), re.M | re.S)
    if not sect:
        bad.append(f"{page}: no OPTIONS section")
        continue
    lines = sect.group(1).splitlines()
    tags = [roff_text(lines[i + 1]) for i, l in enumerate(lines[:-1]) if l == ".TP"]
    documented = [t for t in tags if t.startswith("-")]
    for what, got in (("--help", listed), (page, documented)):
        bad += [f"{prog}: {what} lists '{e}' twice" for e in sorted({e for e in got if got.count(e) > 1})]
    bad += [f"{prog}: --help lists '{e}', the OPTIONS of {page} do not" for e in listed if e not in documented]
    bad += [f"{prog}: {page} documents '{e}', --help does not list it" for e in documented if e not in listed]
    if not listed:
        bad.append(f"{prog}: --help lists no option")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
PY
}

# leap-bench's timing defaults are written once, in lib/referee/verdict.h: its --help states them from
# there (LEAP_BENCH_STR), and this checks that leap-bench(1) states the same, so that a default
# changed in the table and not in the page (or the other way) fails here.
@test "docs cannot drift: every default leap-bench --help states is the one leap-bench(1) states" {
	python3 - "$ROOT" <<'PY'
import re, subprocess, sys
root = sys.argv[1]
sys.path.insert(0, f"{root}/tests/fixtures/docs")
from helpopts import ENTRY
out = subprocess.run([f"{root}/bin/leap-bench", "--help"], capture_output=True, text=True).stdout
# --help: each entry's help text, its continuation lines joined
helps, cur = {}, None
for line in out.splitlines():
    m = ENTRY.match(line)
    if m:
        cur = re.findall(r"--([a-z0-9-]+)", m.group(1))[0]
        helps[cur] = line[len(m.group(0)):].strip()
    elif cur and line.startswith(" " * 8):
        helps[cur] += " " + line.strip()
    else:
        cur = None
# the man page: the text of each OPTIONS entry (.TP, its tag, its body), roff undone
page = open(f"{root}/man/leap-bench.1").read()
def plain(t):
    t = re.sub(r"\\f[BIRP]|\\&|\\\(..", "", t).replace("\\-", "-").replace("\\e", "\\")
    t = re.sub(r"^\.[A-Z]{1,2} ?", "", t, flags=re.M)
    return re.sub(r'"|\s+', " ", t.replace('""', "")).strip()
opts = re.search(r"^\.SH OPTIONS\n(.*?)(?=^\.SH )", page, re.M | re.S).group(1)
man = {}
for item in opts.split(".TP\n")[1:]:
    tag, _, body = item.partition("\n")
    for name in re.findall(r"--([a-z0-9-]+)", tag.replace("\\-", "-"))[:1]:
        man[name] = plain(body)
bad, n = [], 0
for name, text in helps.items():
    # a default that is a number, with its unit ("512M", "4G") or its form ("max-time + 30",
    # "0.05 on cpu, 0.02 on cuda"); words ("auto", "random per run") are the page's to explain
    for m in re.finditer(r"\(default:? ((?:max-time \+ )?[0-9][^;)]*)", text):
        n += 1
        want = m.group(1).strip()
        if name not in man:
            bad.append(f"--{name}: --help says default {want}; leap-bench(1) OPTIONS has no entry")
        elif not re.search(r"default:? " + re.escape(want) + r"(?![0-9.])", man[name]):
            bad.append(f"--{name}: --help says default {want}; leap-bench(1) says: {man[name][:160]}")
# the defaults the page's prose states: the targets in TARGET, the pools kept in --pool-memory
target = plain(re.search(r"^\.SS TARGET\n(.*?)(?=^\.S[SH] )", page, re.M | re.S).group(1))
m = re.search(r"default ([0-9.]+) on cpu, ([0-9.]+) on cuda", helps.get("target-ci", ""))
for backend, v in zip(("cpu", "cuda"), m.groups() if m else ()):
    n += 1
    if f"({v})" not in target and f"default is {v}" not in target:
        bad.append(f"--target-ci: --help says {v} on {backend}; leap-bench(1) TARGET does not")
words = {2: "twice", 3: "three times", 4: "four times", 5: "five times", 6: "six times", 8: "eight times"}
m = re.search(r"kept within ([0-9]+) times", helps.get("pool-memory", ""))
if m:
    n += 1
    if f"at most {words.get(int(m.group(1)), m.group(1) + ' times')} this" not in man.get("pool-memory", ""):
        bad.append(f"--pool-memory: --help keeps pools within {m.group(1)} times; leap-bench(1) does not")
if n < 8:
    bad.append(f"only {n} defaults found in leap-bench --help: the parse above no longer fits it")
print("\n".join(bad) or f"ok: {n} defaults")
sys.exit(1 if bad else 0)
PY
}

@test "docs cannot drift: every environment variable a program reads is in leap(7), the cache's in --help" {
	cd "$ROOT"
	env=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' man/leap.7)
	for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' lib cmd | sed -E 's/getenv\("(.*)"\)/\1/' | sort -u); do
		grep -qw "$v" <<<"$env" || fail "leap.7 ENVIRONMENT does not name $v"
	done
	# every program with --cache says where the cache is without it, in --help as in its page
	for p in $(programs); do
		"$p" --help | grep -qE '^      --cache DIR ' || continue
		for v in LEAP_CACHE XDG_CACHE_HOME '~/.cache/leap'; do
			"$p" --help | grep -qF "$v" || fail "$p --help does not name $v"
			grep -qF "$v" "man/$p.1" || fail "man/$p.1 does not name $v"
		done
	done
}

@test "docs cannot drift: leap(7) lists every program under PROGRAMS and in SEE ALSO" {
	cd "$ROOT"
	progs=$(sed -n '/^\.SH PROGRAMS/,/^\.SH /p' man/leap.7)
	also=$(sed -n '/^\.SH SEE ALSO/,$p' man/leap.7)
	for c in cmd/leap-*.c; do
		p=$(basename "$c" .c)
		grep -qF ".BR $p (1)" <<<"$progs" || fail "leap.7 PROGRAMS does not list $p"
		grep -qF ".BR $p (1)" <<<"$also" || fail "leap.7 SEE ALSO does not name $p"
	done
}

# field_tables: prints the field tables of task.json and of the record (tests/fixtures/docs/
# fields.c, linked with lib/libleap.a) as the tab-separated lines that fields.c describes.
field_tables() {
	link_with_lib "$FIXTURES/docs/fields.c" "$BATS_TEST_TMPDIR/fields" || return 1
	"$BATS_TEST_TMPDIR/fields"
}

@test "docs cannot drift: leap-task(5)'s FIELDS are task.json's field table, a parameter's too" {
	# The loader's one table (lib/task/taskfields.c) says which fields task.json may have and which
	# are required; the page's FIELDS are its outer .TP entries ("atol, rtol" names two), a
	# parameter's fields the entries nested under params. An optional field's paragraph starts
	# with "Optional", a required one's does not.
	field_tables >"$BATS_TEST_TMPDIR/tables"
	python3 - "$ROOT" "$BATS_TEST_TMPDIR/tables" <<'PY'
import sys
root, tables = sys.argv[1], sys.argv[2]
sys.path.insert(0, f"{root}/tests/fixtures/docs")
from roff import entries, nested, section
rows = [line.rstrip("\n").split("\t") for line in open(tables)]
task = {r[1]: r[3] for r in rows if r[0] == "task"}
param = [r[1] for r in rows if r[0] == "param"]
page = "man/leap-task.5"
lines = section(f"{root}/{page}", "FIELDS")
bad = [] if lines else [f"{page}: no FIELDS section"]
documented, params_body = [], []
for tag, body in entries(lines or []):
    names = tag.split(", ")
    documented += names
    first = next((line for line in body[1:] if not line.startswith(".")), "")
    for n in names:
        if n in task and (task[n] == "optional") != first.startswith("Optional"):
            bad.append(f"{page}: {n} is {task[n]} in the table; its paragraph should "
                       f"{'' if task[n] == 'optional' else 'not '}start with 'Optional'")
    if "params" in names:
        params_body = body
bad += [f"{page}: FIELDS documents '{n}' twice" for n in sorted({n for n in documented if documented.count(n) > 1})]
bad += [f"{page}: FIELDS does not document '{n}', a field of the table" for n in task if n not in documented]
bad += [f"{page}: FIELDS documents '{n}', which the table does not have" for n in documented if n not in task]
pdoc = [tag for tag, _ in entries(nested(params_body))]
bad += [f"{page}: params does not document '{n}', a parameter field of the table" for n in param if n not in pdoc]
bad += [f"{page}: params documents '{n}', which the parameters' table does not have" for n in pdoc if n not in param]
if not task or not param:
    bad.append("the field tables printed no task or parameter field")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
PY
}

@test "docs cannot drift: leap-record(5)'s FIELDS are the record's field table, with its statuses" {
	# leap-record checks records by one table (lib/core/record.c), which also gives each field's
	# type and writer as the page's entry says them, "NAME (TYPE; WRITER)"; the status values
	# are named in ranking order in the entry of status.
	field_tables >"$BATS_TEST_TMPDIR/tables"
	python3 - "$ROOT" "$BATS_TEST_TMPDIR/tables" <<'PY'
import re, sys
root, tables = sys.argv[1], sys.argv[2]
sys.path.insert(0, f"{root}/tests/fixtures/docs")
from roff import entries, roff_text, section
rows = [line.rstrip("\n").split("\t") for line in open(tables)]
want = {r[1]: f"{r[1]} ({r[2]}; {r[3]})" for r in rows if r[0] == "record"}
statuses = [r[1] for r in rows if r[0] == "status"]
page = "man/leap-record.5"
lines = section(f"{root}/{page}", "FIELDS")
bad = [] if lines else [f"{page}: no FIELDS section"]
got = {}
for tag, body in entries(lines or []):
    name = tag.split(" ")[0]
    if name in got:
        bad.append(f"{page}: FIELDS documents '{name}' twice")
    got[name] = (tag, body)
for name, tag in want.items():
    if name not in got:
        bad.append(f"{page}: FIELDS does not document '{name}', a field of the table")
    elif got[name][0] != tag:
        bad.append(f"{page}: FIELDS says '{got[name][0]}', the table '{tag}'")
bad += [f"{page}: FIELDS documents '{n}', which the table does not have" for n in got if n not in want]
if "status" in got:
    text = " ".join(roff_text(line) for line in got["status"][1])
    named = [s for s in re.findall(r"[a-z_]+", text) if s in statuses]
    if [s for i, s in enumerate(named) if s not in named[:i]] != statuses:
        bad.append(f"{page}: the entry of status does not name {', '.join(statuses)} in that order")
if not want or not statuses:
    bad.append("the field tables printed no record field or status")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
PY
}

# doc/internals.md's Internals walks the source in reading order: a file it names must be
# there, and a source file of lib/ it leaves out is one a reader never meets. A bare name is a
# file of lib/, of a folder of lib/, of runner/ or of cmd/; a name with a slash is a path from
# the root; reference.c and baseline.cu are a task's files, not leap's.
@test "docs cannot drift: the internals walk names every lib/*.c, and only files that exist" {
	cd "$ROOT"
	doc=doc/internals.md
	internals=$(awk '/^## Internals/ { on = 1; next } /^## / { on = 0 } on' "$doc")
	[ -n "$internals" ] || fail "$doc has no Internals section"
	names=$(grep -oE '[A-Za-z0-9_./-]+\.(c|h|cu)\b' <<<"$internals" | sort -u)
	[ -n "$names" ] || fail "$doc's Internals names no source file"
	shopt -s nullglob
	for n in $names; do
		case $n in
		reference.c | baseline.cu) ;;
		*/*) [ -e "$n" ] || fail "$doc's Internals names $n, which does not exist" ;;
		*)
			found=
			for f in lib/"$n" lib/*/"$n" runner/"$n" cmd/"$n"; do
				if [ -e "$f" ]; then found=$f; fi
			done
			[ -n "$found" ] ||
				fail "$doc's Internals names $n, which is in none of lib/, lib/*/, runner/ and cmd/"
			;;
		esac
	done
	for f in lib/*.c lib/*/*.c; do
		b=$(basename "$f")
		grep -qE "(^|[^A-Za-z0-9_./-])(${f%/*}/)?${b//./\\.}\b" <<<"$internals" ||
			fail "$doc's Internals does not name $f"
	done
}

# SECURITY.md names the test that proves each claim, as FILE.bats "NAME" or check-gpu "NAME": a
# test renamed or removed must take its citation with it, or the claim is left without proof.
@test "docs cannot drift: every test SECURITY.md cites exists, by its exact name" {
	python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
text = open(f"{root}/SECURITY.md").read()
gpu = open(f"{root}/tests/gpu/check-gpu.sh").read()
bad, n = [], 0
for m in re.finditer(r'(?<![\w./-])([a-z0-9-]+\.bats|check-gpu) "((?:[^"\\]|\\.)*)"', text):
    where, name = m.groups()
    n += 1
    if where == "check-gpu":
        ok = f'check "{name}"' in gpu
    else:
        path = f"{root}/tests/{where}"
        ok = os.path.exists(path) and f'@test "{name}" {{' in open(path).read()
    if not ok:
        bad.append(f'SECURITY.md cites {where} "{name}", which is no test there')
if n < 50:
    bad.append(f"SECURITY.md cites {n} tests as FILE.bats \"NAME\"; the layers' rows cite more")
print("\n".join(bad) or f"{n} citations, each a test")
sys.exit(1 if bad else 0)
PY
}

# The documents a newcomer reads first stay readable in one sitting: README.md says what leap
# is and points on (doc/ holds the rest), SECURITY.md gives one row per layer (the detail is in
# each layer's file), bench/README.md the current figure of each benchmark (git keeps the runs).
@test "docs stay short: README.md under 300 lines, SECURITY.md under 250, bench/README.md under 400" {
	cd "$ROOT"
	for limit in README.md:300 SECURITY.md:250 bench/README.md:400; do
		f=${limit%:*} max=${limit#*:}
		n=$(wc -l <"$f")
		[ "$n" -lt "$max" ] || fail "$f has $n lines, $max or more: move the detail where its reader looks for it"
	done
}

# A test's name is what a failure prints: it says the behaviour, not the issue it was written
# for, since the tracker is not in the tree.
@test "test names say the behaviour: none cites an issue or an attack class" {
	cd "$ROOT"
	run grep -rnE --include='*.bats' '^@test "[^"]*\b([Ii]ssue|[Cc]lass) [0-9]+' tests
	[ "$status" -eq 1 ] || fail "test names that cite an issue: $output"
}

# lib/ is laid out in folders that are the groups the walk describes: each paragraph of
# doc/internals.md's Internals names its folder ("**Tasks: lib/task/.**"), and every source
# file of a folder is named in that folder's paragraph, so a file filed in the wrong folder, or
# a folder the walk does not describe, fails here.
@test "lib/ is laid out in the walk's groups: each folder has its paragraph, naming its files" {
	cd "$ROOT"
	for d in lib/*/; do
		g=${d%/}
		para=$(awk -v g="$g/" '/^\*\*/ { on = index($0, g) > 0 } /^## / { on = 0 } on' doc/internals.md)
		[ -n "$para" ] || fail "doc/internals.md's Internals has no paragraph for $g/"
		for f in "$g"/*.c; do
			b=$(basename "$f")
			grep -q "\`$b\`" <<<"$para" || fail "$f is not named in the paragraph of $g/ in doc/internals.md"
		done
	done
	[ -z "$(find lib -maxdepth 1 -name '*.[ch]')" ] || fail "lib/ holds sources outside its folders: $(find lib -maxdepth 1 -name '*.[ch]')"
}
