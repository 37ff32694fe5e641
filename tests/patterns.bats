# patterns.bats - each operator family's task draws its hard region: a kernel right only where
# the operator is easy (leap-task(5), families) fails leap-verify on the bundled task, and passes
# on a copy of it whose patterns leave that region out (as the task was before it had them); a
# kernel wrong at one remainder of a size fails the cases of every remainder ("residues").
load helpers
load artifact

setup_file() {
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
}

setup() {
	cd "$ROOT"
	W="$BATS_TEST_TMPDIR"
}

# narrowed TASK PATTERN...: a task root holding a copy of bundled TASK without PATTERN in any
# dist and without families; prints the root.
narrowed() {
	local id=$1 root="$W/narrow" dir
	shift
	for dir in tasks/"$id" tasks/*/"$id"; do # leap's own suite, or a suite folder
		[ -f "$dir/task.json" ] && break
	done
	mkdir -p "$root"
	cp -R "$dir" "$root/"
	jq --argjson drop "$(printf '%s\n' "$@" | jq -R . | jq -s .)" \
		'del(.families) | .params |= map(if .dist then .dist -= $drop else . end)' \
		"$dir/task.json" >"$root/$id/task.json"
	echo "$root"
}

# verdict_of TASK SOURCE [ROOT]: "status mismatch-kind" of SOURCE verified on TASK of ROOT.
verdict_of() {
	local id=$1 src=$2 root=${3:-$ROOT/tasks}
	LEAP_TASKS=$root build_artifact "$id" "$src" "$W/$id.so" || return 1
	compiled_record "$id" "$W/$id.so" | LEAP_TASKS=$root leap-verify --seed 42 |
		jq -r '"\(.status) \(.verify.mismatch.kind // "-")"'
}

@test "patterns: attention without the row maximum fails on large_int scores, passed on normal and uniform" {
	run -0 verdict_of attention "$FIXTURES/patterns/attention_nomax.c"
	assert_output --regexp "^mismatch (value|not_finite)$"
	old=$(narrowed attention large_int)
	run -0 verdict_of attention "$FIXTURES/patterns/attention_nomax.c" "$old"
	assert_output "pass -"
}

@test "patterns: swiglu with an exp that clamps no range fails on a large gate, passed on normal and uniform" {
	run -0 verdict_of swiglu "$FIXTURES/patterns/swiglu_noclamp.c"
	assert_output --regexp "^mismatch (value|not_finite)$"
	old=$(narrowed swiglu large)
	run -0 verdict_of swiglu "$FIXTURES/patterns/swiglu_noclamp.c" "$old"
	assert_output "pass -"
}

@test "patterns: layernorm's variance as E[x^2] - E[x]^2 in float fails on rows near one, passed on zero-mean rows" {
	run -0 verdict_of layernorm "$FIXTURES/patterns/layernorm_naive_var.c"
	assert_output "mismatch value"
	old=$(narrowed layernorm near_one)
	run -0 verdict_of layernorm "$FIXTURES/patterns/layernorm_naive_var.c" "$old"
	assert_output "pass -"
}

# retoled TASK FACTOR: a task root holding a copy of bundled TASK with its atol and rtol times
# FACTOR; prints the root.
retoled() {
	local root="$W/tol$2"
	mkdir -p "$root"
	cp -R "tasks/$1" "$root/"
	jq --argjson f "$2" '.atol *= $f | .rtol *= $f' "tasks/$1/task.json" >"$root/$1/task.json"
	echo "$root"
}

@test "patterns: layernorm's variance as E[x^2] - E[x]^2 in float fails rows near one at twice the tolerance too" {
	run -0 verdict_of layernorm "$FIXTURES/patterns/layernorm_naive_var.c" "$(retoled layernorm 2)"
	assert_output "mismatch value"
}

@test "patterns: layernorm and add_layernorm with Welford's running mean in float pass rows near one, within half the tolerance too" {
	for t in layernorm add_layernorm; do
		run -0 verdict_of $t "$FIXTURES/patterns/${t}_welford.c"
		assert_output "pass -"
		run -0 verdict_of $t "$FIXTURES/patterns/${t}_welford.c" "$(retoled $t 0.5)"
		assert_output "pass -"
	done
}

@test "patterns: an arg-max that breaks ties by lane fails on exact ties, passed on continuous patterns" {
	run -0 verdict_of argmax "$FIXTURES/patterns/argmax_lanes.c"
	assert_output "mismatch value"
	old=$(narrowed argmax ties)
	run -0 verdict_of argmax "$FIXTURES/patterns/argmax_lanes.c" "$old"
	assert_output "pass -"
}

@test "patterns: KernelBench's layernorm with E[x^2] - E[x]^2 in float fails on groups near one, passed on zero-mean groups" {
	run -0 verdict_of kb1_040_layernorm "$FIXTURES/patterns/kb_layernorm_naive_var.c"
	assert_output "mismatch value"
	old=$(narrowed kb1_040_layernorm near_one)
	run -0 verdict_of kb1_040_layernorm "$FIXTURES/patterns/kb_layernorm_naive_var.c" "$old"
	assert_output "pass -"
}

@test "patterns: KernelBench's arg-max over a dimension that breaks ties by lane fails on exact ties, passed on continuous patterns" {
	run -0 verdict_of kb1_051_argmax_dim "$FIXTURES/patterns/kb_argmax_lanes.c"
	assert_output "mismatch value"
	old=$(narrowed kb1_051_argmax_dim ties)
	run -0 verdict_of kb1_051_argmax_dim "$FIXTURES/patterns/kb_argmax_lanes.c" "$old"
	assert_output "pass -"
}

@test "patterns: KernelBench's linear, gelu and softmax without the row maximum fails on large_int inputs, passed on normal and uniform" {
	run -0 verdict_of kb2_099_linear_gelu_softmax "$FIXTURES/patterns/kb_linear_gelu_softmax_nomax.c"
	assert_output --regexp "^mismatch (value|not_finite)$"
	old=$(narrowed kb2_099_linear_gelu_softmax large_int)
	run -0 verdict_of kb2_099_linear_gelu_softmax "$FIXTURES/patterns/kb_linear_gelu_softmax_nomax.c" "$old"
	assert_output "pass -"
}

@test "patterns: a kernel wrong at one remainder of n modulo 32 fails every seed, passed most seeds' random sizes" {
	run -0 verdict_of vector_add "$FIXTURES/patterns/vector_add_residue13.c"
	assert_output "mismatch value"
	msg=$(compiled_record vector_add "$W/vector_add.so" | leap-verify --seed 7 | jq -r .verify.message)
	[[ "$msg" == *"(n=77; one of every remainder of a size, not a listed case)"* ]] || fail "$msg"
	# without "residues", three drawn cases reach 3 of the 32 remainders: seed 42 misses 13
	mkdir -p "$W/old"
	cp -R tasks/vector_add "$W/old/"
	jq 'del(.residues)' tasks/vector_add/task.json >"$W/old/vector_add/task.json"
	run -0 verdict_of vector_add "$FIXTURES/patterns/vector_add_residue13.c" "$W/old"
	assert_output "pass -"
}
