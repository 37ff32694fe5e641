#!/usr/bin/env bats
# leap-task.bats - the task loader: validation messages, size expressions, prototypes, shims.
load helpers

F="$FIXTURES/leap-task"

check_error() { # check_error FIXTURE EXPECTED-MESSAGE-PART
	run --separate-stderr -1 leap-task --check "$F/$1"
	[[ "$stderr" == *"$2"* ]] || { echo "stderr: $stderr"; return 1; }
	[[ "$(jq -r .error.message <<<"$output")" == *"$2"* ]] || { echo "stdout: $output"; return 1; }
	[[ "$stderr" == "leap-task: $F/$1/"* ]] || { echo "stderr does not name the file: $stderr"; return 1; }
}

@test "the bundled tasks load and describe themselves" {
	expected="$(cd "$LEAP_TASKS" && ls -d */task.json | cut -d/ -f1 | LC_ALL=C sort)" # the suite's own tasks (not its suite folders)
	run -0 leap-task --all
	assert_equal "$(jq -r .id <<<"$output")" "$expected"
	run -0 leap-task --list --all
	assert_output "$expected"
}

@test "a missing field is named" {
	check_error missing_entry "task.json: entry: missing"
}

@test "an unknown name in a size expression is named with its column" {
	check_error bad_size "params[0] (x): size: unknown name 'm' at column 3"
}

@test "an unknown type is named with the accepted ones" {
	check_error bad_type "type: unknown type 'float16' (float, double, int, int64, half, bf16, uint8)"
}

@test "division by zero in a case's size is reported with the expression" {
	check_error div_zero "cases[1]: division by zero in 'n/(k-1)'"
}

@test "a case without a value for a scalar is rejected" {
	check_error missing_case_value "cases[1]: no value for 'n'"
}

@test "a task with nothing to check is rejected" {
	check_error no_output "no out or inout buffer"
}

@test "a misspelt field is an error, not ignored" {
	check_error typo_field "atoll: unknown field"
}

@test "the id must match the folder" {
	check_error wrong_name "id: 'other' differs from the folder name 'wrong_name'"
}

@test "a missing reference.c is reported" {
	run --separate-stderr -1 leap-task --check "$F/no_reference"
	[[ "$stderr" == *"no_reference/reference.c: No such file or directory"* ]]
}

@test "invalid JSON in task.json is reported with line and column" {
	run --separate-stderr -1 leap-task --check "$F/broken_json"
	[[ "$stderr" == *"broken_json/task.json:3:13: ':' expected"* ]]
}

@test "size expressions: precedence, min, max, cdiv, modulo, unary minus" {
	run -0 leap-task --check "$F/exprs"
	# n=33 k=5: (n+1)/2=17, cdiv(33,32)*32=64, max-min+1=29, 33%7+3=8
	assert_equal "$(jq -c '.cases[0].sizes' <<<"$output")" '{"a":17,"b":64,"c":29,"d":8}'
	assert_equal "$(jq -c '.cases[0] | [.bytes, .flops]' <<<"$output")" '[66,165]'
}

@test "prototypes for both backends, every type" {
	run -0 leap-task --check "$F/exprs"
	assert_equal "$(jq -r .prototype.cpu <<<"$output")" \
		'void f(const uint16_t *a, uint16_t *b, int64_t *c, const double *d, int64_t n, int k, float alpha);'
	assert_equal "$(jq -r .prototype.cuda <<<"$output")" \
		'extern "C" void f(const __half *a, __nv_bfloat16 *b, int64_t *c, const double *d, int64_t n, int k, float alpha);'
}

@test "one bad task does not stop the others" {
	run --separate-stderr -1 leap-task --check "$F/bad_type" "$F/exprs"
	assert_equal "$(jq -c '[.error != null, .id]' <<<"$output" | tr '\n' ' ')" '[true,null] [false,"exprs"] '
}

@test "an unknown task id is an error record naming the suite" {
	run --separate-stderr -1 leap-task no_such_task softmax
	[[ "$stderr" == "leap-task: task 'no_such_task' not found in "* ]]
	assert_equal "$(jq -r '.task // .id' <<<"$output" | tr '\n' ' ')" "no_such_task softmax "
}

@test "a path is a task folder, not an id of the suite; an id cannot reach outside the suite" {
	run -0 bash -c 'cd "$1/tasks/gelu" && leap-task ../softmax | jq -r .id' _ "$ROOT"
	assert_output softmax
	run --separate-stderr -2 leap-task ../tasks/softmax
	[[ "$stderr" == "leap-task: ../tasks/softmax: No such file or directory" ]]
	run --separate-stderr -1 leap-task 'soft*max'
	[[ "$stderr" == *"invalid task id 'soft*max'"* ]]
}

@test "every reference.c compiles with its shim and computes a known small case" {
	tmp="$BATS_TEST_TMPDIR"
	for t in vector_add softmax matmul; do
		leap-task --shim cpu "$t" | awk -v d="$tmp" '/---- shim/{f=1;next} /---- prelude/{next} {print > (d "/" (f ? "shim.c" : "pre.h"))}'
		cc -O2 -Wall -Werror -shared -fPIC -include "$tmp/pre.h" -o "$tmp/$t.so" "$LEAP_TASKS/$t/reference.c" "$tmp/shim.c" -lm
	done
	cc -O2 -Wall -Werror -o "$tmp/refcheck" "$F/refcheck.c" -ldl -lm
	run -0 "$tmp/refcheck" "$tmp"
	assert_output "vector_add ok
softmax ok
matmul ok"
}

@test "the CUDA shim and every baseline.cu compile with nvcc" {
	skip_unless_nvcc
	tmp="$BATS_TEST_TMPDIR"
	for t in vector_add softmax matmul; do
		leap-task --shim cuda "$t" | awk -v d="$tmp" '/---- shim/{f=1;next} /---- prelude/{next} {print > (d "/" (f ? "shim.cu" : "pre.h"))}'
		"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -c -arch=sm_90 -include "$tmp/pre.h" -o "$tmp/$t.o" "$LEAP_TASKS/$t/baseline.cu"
		"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -c -arch=sm_90 -o "$tmp/shim-$t.o" "$tmp/shim.cu"
	done
}

@test "ranges: a cycle, a listed case outside, an unusable smallest case, a buffer, a bad form and an int overflow are named" {
	check_error ranges_cycle "task.json: ranges: len: its bounds depend on its own value (directly or through other ranges)"
	check_error ranges_outside "task.json: ranges: len: cases[1] has len=40, outside [k, 39]"
	check_error ranges_smallest "task.json: ranges: the smallest case {\"len\":1,\"k\":3} cannot be used: size of 'y' (len-k+1) is -1"
	check_error ranges_not_scalar "task.json: ranges: 'y' is not an int or int64 scalar parameter"
	check_error ranges_bad_form 'task.json: ranges: len: must be [lo, hi] or {"range": [lo, hi], "multiple_of": m}'
	check_error ranges_int "task.json: ranges: len: hi 3000000000 does not fit an int"
	# the least int64 is no decimal literal of an expression: still an error naming the file
	check_error ranges_int64_min "task.json: ranges: len: lo: bad number '9223372036854775808'"
}

@test "ranges: declared (expressions, multiple_of) in drawing order, derived from the listed cases, or none" {
	run -0 leap-task --tasks "$F" --draw 4 --seed 3 ranges_ok ranges_derived ranges_empty
	assert_equal "$(jq -c '[.id, .ranges, .ranges_derived]' <<<"$output" | tr '\n' ' ')" \
		'["ranges_ok",{"k":{"range":[1,7],"multiple_of":1},"len":["k",40]},false] ["ranges_derived",{"len":[5,40],"k":[3,7]},true] ["ranges_empty",{},false] '
	# every drawn case within its ranges (len >= k), none drawn without ranges
	run -0 jq -c '[.id, (.drawn | length), ([.drawn[].values | .k >= 1 and .k <= 7 and .len >= .k and .len <= 40] | all)]' <<<"$output"
	assert_output '["ranges_ok",4,true]
["ranges_derived",4,true]
["ranges_empty",0,true]'
}

@test "drawing: the same seed draws the same cases, more cases keep the first ones, another seed others" {
	a=$(leap-task --draw 3 --seed 11 softmax conv2d | jq -c '[.drawn[].values]')
	b=$(leap-task --draw 6 --seed 11 softmax conv2d | jq -c '[.drawn[:3][].values]')
	c=$(leap-task --draw 3 --seed 12 softmax conv2d | jq -c '[.drawn[].values]')
	assert_equal "$a" "$b"
	[ "$a" != "$c" ]
}

@test "drawing, over the bundled suite and 20 seeds: within ranges and budget, no listed value, remainders step by one" {
	for seed in $(seq 1 20); do leap-task --all --draw 8 --seed "$seed"; done >"$BATS_TEST_TMPDIR/all.jsonl"
	# every constant range holds, no drawn case costs more bytes or flops than the dearest listed one
	run -0 jq -c '. as $t | [.drawn[] | .values as $v | ($t.ranges | to_entries[] | .key as $k |
			(.value | if type == "object" then .range else . end) as $r |
			select(($r[0] | type) == "number" and ($r[1] | type) == "number") |
			select($v[$k] < $r[0] or $v[$k] > $r[1]) | "\($t.id): \($k)=\($v[$k]) outside \($r)")] +
		[.drawn[] | select(.bytes > ([$t.cases[].bytes] | max) or .flops > ([$t.cases[].flops] | max)) |
			"\($t.id): \(.values) over budget"] | .[]' "$BATS_TEST_TMPDIR/all.jsonl"
	assert_output ""
	# a scalar whose range has room for 32 values takes k more than drawn case 0 modulo 32 in
	# case k (except a fallback to the smallest case, never seen here), and values a listed
	# case uses are avoided where the range has others: they stay rare
	run -0 jq -r '. as $t | .ranges | to_entries[] | .key as $k | (.value | if type == "object" then .range else . end) as $r |
			select(($r[0] | type) == "number" and ($r[1] | type) == "number" and $r[1] - $r[0] >= 31) |
			[$t.drawn[].values[$k]] as $d | range(1; $d | length) as $i |
			select((($d[$i] - $d[0]) % 32 + 32) % 32 != $i % 32) | "\($t.id) \($k): \($d)"' "$BATS_TEST_TMPDIR/all.jsonl"
	assert_output ""
	run -0 jq -s '[.[] | . as $t | .ranges | keys[] as $k | select(($t.ranges[$k] | type) == "array" and
			($t.ranges[$k][1] | type) == "number" and $t.ranges[$k][1] - ($t.ranges[$k][0] | numbers) > 64) |
			$t.drawn[].values[$k] as $v | [$t.cases[].values[$k]] | index([$v]) != null] |
		(map(select(.)) | length) / length' "$BATS_TEST_TMPDIR/all.jsonl"
	awk -v f="$output" 'BEGIN { exit !(f < 0.01) }' || fail "listed values drawn too often: $output"
}

@test "bad options: usage on stderr and exit 2" {
	run --separate-stderr -2 leap-task --all --check x
	[[ "$stderr" == *"usage: leap-task"* ]]
	run --separate-stderr -2 leap-task --shim gpu softmax
	[[ "$stderr" == *"--shim: 'gpu' is not cuda or cpu"* ]]
	run --separate-stderr -2 leap-task --draw -1 softmax
	[[ "$stderr" == *"--draw: '-1' is not an integer in [0, 1000]"* ]]
	run --separate-stderr -2 leap-task --draw 2 --seed 9007199254740992 softmax
	[[ "$stderr" == *"--seed: '9007199254740992' is not an integer in [0, 2^53)"* ]]
}

@test "a task's precision class, allowed libraries and baseline kind are described, defaults included" {
	run -0 leap-task matmul conv2d softmax
	assert_equal "$(jq -sc '[.[] | [.id, .precision, .libraries, .baseline_kind, .baseline_libraries]]' <<<"$output")" \
		'[["matmul","tf32",[],"vendor",["cublas"]],["conv2d","tf32",[],"vendor",["cudnn"]],["softmax","fp32",[],"kernel",[]]]'
	# absent fields are the defaults: fp32, no libraries, a kernel baseline
	mkdir -p "$BATS_TEST_TMPDIR/vector_add"
	cp "$LEAP_TASKS/vector_add/reference.c" "$BATS_TEST_TMPDIR/vector_add/"
	jq 'del(.precision, .baseline_kind)' "$LEAP_TASKS/vector_add/task.json" >"$BATS_TEST_TMPDIR/vector_add/task.json"
	run -0 leap-task "$BATS_TEST_TMPDIR/vector_add"
	assert_equal "$(jq -c '[.precision, .libraries, .baseline_kind, .baseline_libraries]' <<<"$output")" '["fp32",[],"kernel",[]]'
	# bad values name the field
	for bad in '.precision = "fp16"' '.libraries = ["mkl"]' '.baseline_kind = "vendor"' '.baseline_libraries = ["cublas"]'; do
		jq "$bad" "$LEAP_TASKS/vector_add/task.json" >"$BATS_TEST_TMPDIR/vector_add/task.json"
		run -1 --separate-stderr leap-task --check "$BATS_TEST_TMPDIR/vector_add"
		jq -e '.error.message | test("task.json: (precision|libraries|baseline_kind): ")' <<<"$output"
	done
}

@test "families: a family whose hard region no input reaches is refused, naming the patterns it needs" {
	check_error family_uncovered "task.json: families: exp: no input may be drawn in its hard region: exp, softmax, logsumexp, a sigmoid or tanh: large magnitudes, past exp's range (large, large_int)"
	check_error family_unknown "task.json: families: [0]: unknown family (exp, norm, tie)"
	# an integer input counts for tie only when its range holds at most 16 values
	check_error family_wide_range "task.json: families: tie: no input may be drawn in its hard region"
	run -0 leap-task --tasks "$F" family_ok
	assert_equal "$(jq -c '[.families, .params[0].dist]' <<<"$output")" '[["exp","norm","tie"],["near_one","large_int"]]'
}

@test "residues: a scalar with a range, a power of 2 up to 64, and a case of every remainder within the budget" {
	check_error residues_not_ranged "task.json: residues: 'm' is not a scalar with a range"
	check_error residues_bad_mod "task.json: residues: n: the modulus must be 2, 4, 8, 16, 32 or 64"
	check_error residues_narrow "task.json: residues: n: no case within the ranges and the budget is 0 modulo 64"
	run -0 leap-task --tasks "$F" residues_ok
	assert_equal "$(jq -c .residues <<<"$output")" '{"n":64}'
	# "ranges": {} checks the listed cases only: no residue cases either
	run -0 leap-task --tasks "$F" residues_no_ranges
	assert_equal "$(jq -c .residues <<<"$output")" null
}

@test "init: a parameter's runs, each drawn uniformly in center +- spread / sqrt(fan) at the case's sizes" {
	local t="$BATS_TEST_TMPDIR/vector_add"
	mkdir -p "$t"
	cp "$LEAP_TASKS/vector_add/reference.c" "$t/"
	init='.params[1] |= (del(.dist) | .init = [{"size": "n / 2", "center": 5, "spread": 1},
		{"center": -3, "spread": 8, "fan": "n"}])'
	jq "$init" "$LEAP_TASKS/vector_add/task.json" >"$t/task.json"
	run -0 leap-task "$t"
	assert_equal "$(jq -c '.params[1].init' <<<"$output")" \
		'[{"size":"n / 2","center":5,"spread":1},{"center":-3,"spread":8,"fan":"n"}]'
	# every element of every set, listed, drawn and residue cases, within its run; a candidate
	# that reads b out of its run's interval writes NaN
	run -0 leap-verify --tasks "$BATS_TEST_TMPDIR" --task vector_add "$F/init_check.c"
	assert_line --index 0 --partial ': pass (task vector_add, cpu'
	# and every set leap-bench derives: a state of several runs is never rotated across them
	cp "$LEAP_TASKS"/vector_add/baseline.* "$t/"
	run leap-bench --tasks "$BATS_TEST_TMPDIR" --no-progress --max-time 0.3 --min-runs 3 --task vector_add "$F/init_check.c"
	[ "$status" -le 1 ] # 1: noisy, which a loaded machine may give
	assert_line --index 0 --regexp ': (ok|noisy) \(task vector_add, cpu'
	# the same candidate against the patterns fails
	jq '.params[1].dist = ["normal"]' "$LEAP_TASKS/vector_add/task.json" >"$t/task.json"
	run -1 leap-verify --tasks "$BATS_TEST_TMPDIR" --task vector_add "$F/init_check.c"
	assert_line --index 0 --partial ': mismatch (task vector_add'
	# bad runs name the field
	for bad in '.params[1].init = []' '.params[1].init = [{"center": 0, "spread": 0}]' \
		'.params[1].init = [{"center": 0, "spread": 1, "size": "n"}]' \
		'.params[1].init = [{"center": 0, "spread": 1, "fan": "m"}]' \
		'.params[1].init = [{"center": 0, "spread": 1, "scale": 2}]' \
		'.params[1].init = [{"tril": "n", "center": 0}]' '.params[1].init = [{"tril": "m"}]' \
		'.params[2].init = [{"center": 0, "spread": 1}]'; do
		jq "$init | $bad" "$LEAP_TASKS/vector_add/task.json" >"$t/task.json"
		run -1 --separate-stderr leap-task --check "$t"
		jq -e '.error.message | test("params\\[[12]\\] \\([bc]\\): init")' <<<"$output"
	done
	jq "$init | .params[1].dist = [\"normal\"]" "$LEAP_TASKS/vector_add/task.json" >"$t/task.json"
	run -1 --separate-stderr leap-task --check "$t"
	jq -e '.error.message | test("init: a parameter drawn at its initialisation takes no dist")' <<<"$output"
}
