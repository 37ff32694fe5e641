# artifact.bash - build cpu artifacts of candidate sources for tests, as leap-compile would.
# (Switch compiled_record to leap-compile once it lands; the record contract stays the same.)

# build_artifact TASK SOURCE OUT [CC_FLAG]...: compiles SOURCE with the task's cpu prelude and
# shim into the shared object OUT (the artifact ABI of lib/compile/abi.h), with the extra flags given.
build_artifact() {
	local task=$1 src=$2 out=$3 dir
	shift 3
	dir=$(mktemp -d)
	leap-task --shim cpu "$task" >"$dir/both" || return 1
	awk -v pre="$dir/pre.h" -v shim="$dir/shim.c" '
		/^\/\* ---- prelude ---- \*\/$/ { f = pre; next }
		/^\/\* ---- shim ---- \*\/$/ { f = shim; next }
		f { print > f }' "$dir/both"
	cc -O2 -shared -fPIC -include "$dir/pre.h" "$@" -o "$out" "$src" "$dir/shim.c" -lm -lpthread
	local rc=$?
	rm -rf "$dir"
	return $rc
}

# compiled_record TASK ARTIFACT [EXTRA_JSON]: prints a record as leap-compile writes it.
compiled_record() {
	jq -nc --arg t "$1" --arg a "$2" --argjson x "${3:-{\}}" \
		'{task: $t, group: $t, sample: 0, turn: 1, backend: "cpu", compile: {status: "ok", artifact: $a}} + $x'
}
