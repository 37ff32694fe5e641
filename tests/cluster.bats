# cluster.bats - compile, verify and bench split over processes with GNU parallel give the single-process records.
# stream: bench
load helpers

# The fields that differ between runs of the same record: wall-clock times (compile.compiled_ms
# is that of the first build), cache hits and measured speeds (bench keeps only status, device,
# case and seed).
NORMALIZE='del(.compile.ms, .compile.compiled_ms, .compile.cached, .verify.ms, .verify.run_ms)
	| if .bench then .bench |= with_entries(select(.key | IN("status", "device", "case", "seed"))) else . end'

setup() {
	command -v parallel >/dev/null || skip "GNU parallel is not installed (tests/deps.sh installs it)"
	parallel --version 2>/dev/null | grep -q "GNU parallel" || skip "parallel is not GNU parallel"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	# three tasks, three samples each: passes, mismatches and compile errors from the replay
	leap-prompt -b cpu -g 3 softmax vector_add gelu | "$ROOT/examples/sampler-replay" >"$BATS_TEST_TMPDIR/in.jsonl"
	STAGES='leap-compile | leap-verify --seed 7 | leap-bench --seed 7 --max-time 0.05 --min-runs 2 --max-runs 4 --target-ci 0.5'
	export STAGES
}

@test "cluster: parallel --pipe -j 2 --keep-order gives the single-process output, record for record" {
	cd "$BATS_TEST_TMPDIR"
	# two records per job: five jobs over two local job slots, as over --sshlogin hosts
	run -0 bash -c 'parallel --pipe -N 2 -j 2 --keep-order --joblog jobs.log "$STAGES" <in.jsonl >par.jsonl'
	run -0 bash -c 'eval "$STAGES" <in.jsonl >one.jsonl'
	[ "$(wc -l <in.jsonl)" -eq 9 ]
	[ "$(wc -l <par.jsonl)" -eq 9 ]
	[ "$(tail -n +2 jobs.log | wc -l)" -eq 5 ] # the stream was really split
	jq -c "$NORMALIZE" one.jsonl >one.norm
	jq -c "$NORMALIZE" par.jsonl >par.norm
	diff -u one.norm par.norm # not `run`: a failure shows the lines that differ
	# the comparison is not vacuous: every outcome is there, and passing records were timed
	run -0 jq -rs '[.[].status] | unique | join(" ")' par.jsonl
	assert_output "compile_error mismatch pass"
	run -0 jq -s '[.[] | select((.bench.status | IN("ok", "noisy")) and (.bench.median_ms | type) == "number")] | length' par.jsonl
	[ "$output" -ge 4 ]
}

@test "cluster: the gathered stream of per-device workers equals the single-process one" {
	cd "$BATS_TEST_TMPDIR"
	run -0 bash -c 'leap-compile <in.jsonl | leap-verify --seed 7 >one.jsonl'
	run -0 bash -c 'leap-compile <in.jsonl | leap-verify --seed 7 --devices 0,1 >dev.jsonl'
	jq -c "$NORMALIZE" one.jsonl >one.norm
	jq -c "$NORMALIZE | del(.verify.device_index)" dev.jsonl >dev.norm
	diff -u one.norm dev.norm # not `run`: a failure shows the lines that differ
	run -0 jq -rs '[.[].verify.device_index // empty] | unique | join(" ")' dev.jsonl
	assert_output "0 1"
}

@test "cluster: the per-host recipe (one chain per sshlogin, --devices) and the Slurm piece recipe give the same records" {
	cd "$BATS_TEST_TMPDIR"
	run -0 bash -c 'eval "$STAGES" <in.jsonl >one.jsonl'
	jq -c "$NORMALIZE" one.jsonl >one.norm
	# examples/cluster.md, many hosts: ':' is this machine, as gpu01,gpu02 would be remote ones
	run -0 bash -c 'parallel --pipe --keep-order -N 4 -j 1 --sshlogin : \
		"leap-compile | leap-verify --seed 7 --devices 0-1 | leap-bench --seed 7 --devices 0-1 --max-time 0.05 --min-runs 2 --max-runs 4 --target-ci 0.5" \
		<in.jsonl >host.jsonl'
	jq -c "$NORMALIZE | del(.verify.device_index, .bench.device_index)" host.jsonl >host.norm
	diff -u one.norm host.norm # not `run`: a failure shows the lines that differ
	# examples/cluster.md, Slurm: whole-line pieces, one process each (srun left out), joined in order
	split -n l/3 -d -a 4 in.jsonl piece.
	for p in piece.*; do bash -c "$STAGES" <"$p" >"$p.out" 2>/dev/null & done
	wait
	cat piece.*.out >slurm.jsonl
	jq -c "$NORMALIZE" slurm.jsonl >slurm.norm
	diff -u one.norm slurm.norm # not `run`: a failure shows the lines that differ
}
