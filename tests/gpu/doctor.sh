#!/usr/bin/env bash
# doctor.sh - make doctor: what leap will and will not enforce on this node, and why. One line
# per finding, "STATUS NAME: DETAIL" and, where something is missing, "-> FALLBACK": what leap
# does instead (an option such as --no-namespaces, or what happens by itself) or what to do.
# STATUS: ok; fallback (missing, leap goes on with less); FAIL (missing, and what needs it
# cannot work here); skip (not tried, and why). Then what leap enforces here and what not, the
# options the fallbacks call for, and a count.
#
# Every answer is tried, not read off a version: the toolchain (nvcc as leap finds it: $NVCC,
# $CUDA_HOME/bin/nvcc, PATH; the CUDA, cuBLAS and cuDNN headers and libraries; the libraries
# leap builds with and the ones its programs load), the kernel's part of the sandbox through
# build/gpu/probe (tests/gpu/probe.c: namespaces, the /sys bind, memfd seals, seccomp, the
# cgroup freezer, leap's own sandbox probe), a cpu candidate through leap-compile and
# leap-verify, and on a GPU node the driver, /dev/nvidia-uvm (made with nvidia-modprobe before
# anything takes the device list), the compute mode, libcuda's place against the runner's
# minimal root, and device memory passed between two processes as a file descriptor.
#
# usage: tests/gpu/doctor.sh   (make doctor builds the probes first)
# env: DOCTOR_JSON=FILE also writes each finding as a JSON line {name, status, detail,
#      fallback, option}; LEAP_LIBEXEC as for leap's programs; LEAP_TEST_DEVICE, a test seam:
#      the device probe's answer ("gpu NAME" or "none REASON") instead of asking the machine.
# Exit status 1 when something FAILs, else 0.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export LC_ALL=C
. tests/gpu/lib.sh
LIBEXEC=${LEAP_LIBEXEC:-$PWD/libexec}
nok=0 nfb=0 nfail=0 nskip=0
enforced=() not_enforced=() options=()
json=${DOCTOR_JSON:-}
[ -n "$json" ] && : >"$json"

# say STATUS NAME DETAIL [FALLBACK]: one finding (and its JSON line).
say() {
	local st=$1 name=$2 detail=$3 fb=${4:-} opt=""
	case "$st" in
	ok) nok=$((nok + 1)) ;;
	fallback) nfb=$((nfb + 1)) ;;
	fail) nfail=$((nfail + 1)) ;;
	*) nskip=$((nskip + 1)) ;;
	esac
	if [[ "$fb" == --* ]]; then # "--option [word] (why)" or "--option, or ..."
		opt=${fb%% (*}
		opt=${opt%%,*}
		local o
		for o in "${options[@]}"; do [ "$o" = "$opt" ] && opt=""; done
		[ -n "$opt" ] && options+=("$opt")
	fi
	printf '%-9s %s: %s\n' "$([ "$st" = fail ] && echo FAIL || echo "$st")" "$name" "$detail"
	[ -n "$fb" ] && printf '%-9s -> %s\n' "" "$fb"
	if [ -n "$json" ] && jq -n 1 >/dev/null 2>&1; then
		jq -nc --arg n "$name" --arg s "$st" --arg d "$detail" --arg f "$fb" --arg o "${fb:+$opt}" \
			'{name: $n, status: $s, detail: $d, fallback: (if $f == "" then null else $f end), option: (if $o == "" then null else $o end)}' >>"$json"
	fi
}

# enforces NAME PHRASE: adds PHRASE to what leap enforces here when NAME's finding was ok.
enforces() {
	local st=$1 phrase=$2
	if [ "$st" = ok ]; then enforced+=("$phrase"); else not_enforced+=("$phrase"); fi
}

# ---- the toolchain ----

# has_header HEADER [-I DIR]: the C compiler finds HEADER.
has_header() {
	local h=$1
	shift
	printf '#include <%s>\n' "$h" | cc "$@" -E -x c - >/dev/null 2>&1
}

# has_lib SONAME [DIR]: the dynamic loader's cache, or DIR, has SONAME.
has_lib() {
	# grep without -q: under pipefail, grep -q quitting early would SIGPIPE a long cache listing
	{ command -v ldconfig >/dev/null && ldconfig -p 2>/dev/null | grep "^[[:space:]]*$1 " >/dev/null; } ||
		{ [ -n "${2:-}" ] && [ -e "$2/$1" ]; }
}

toolchain() {
	local nvcc inc rel missing=fail
	# a tree built elsewhere that runs here needs no compiler nor headers to run, only to rebuild
	bin/leap-verify --version >/dev/null 2>&1 && missing=fallback
	nvcc=$(gpu_nvcc_name)
	if [ -n "$nvcc" ]; then
		rel=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
		say ok nvcc "$nvcc (release ${rel:-?})"
		inc=$(cd "$(dirname "$(readlink -f "$nvcc")")/../include" 2>/dev/null && pwd)
	else
		say fallback nvcc "not found (NVCC unset or not there, no ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc, none on PATH)" \
			"no cuda candidate compiles here and no cuda runner is built; the cpu backend works; a GPU run needs a tree built elsewhere (make gpu-prepare; bench/README.md section 4)"
	fi
	if ! command -v cc >/dev/null; then
		say $missing "C compiler" "cc not found" "leap cannot be built here, nor a cpu candidate or a reference compiled (a prepared tree needs neither: make gpu-prepare)"
	else
		say ok "C compiler" "$(command -v cc) ($(cc --version 2>/dev/null | head -1))"
		local spec h lib what
		for spec in "jansson.h libjansson.so.4 jansson (JSON)" "elfutils/libdw.h libdw.so.1 libdw (crash lines)" \
			"libelf.h libelf.so.1 libelf" "openssl/evp.h libcrypto.so.3 libcrypto (cache keys)" \
			"seccomp.h - libseccomp (the runner's filter, made at build time)"; do
			read -r h lib what <<<"$spec"
			if ! has_header "$h"; then
				say $missing "build library" "$what: $h missing" "leap cannot be built here: install its -dev package (sh tests/deps.sh check), or build elsewhere and bring the tree (bench/README.md section 4)"
			elif [ "$lib" != - ] && ! has_lib "$lib"; then
				say $missing "build library" "$what: $h present, $lib not in the loader's cache" "install the runtime package"
			else
				say ok "build library" "$what"
			fi
		done
		if [ -n "${inc:-}" ]; then
			local rt
			rt=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$inc/cuda_runtime_api.h" 2>/dev/null)
			say ok "CUDA headers" "$inc (CUDART_VERSION ${rt:-?})"
			for spec in "cublas_v2.h libcublas.so cuBLAS" "cudnn.h libcudnn.so cuDNN"; do
				read -r h lib what <<<"$spec"
				local libdir
				libdir=$(cd "$inc/../lib64" 2>/dev/null && pwd)
				if has_header "$h" -I "$inc" && { has_lib "$lib" "$libdir" || ls "$libdir/$lib".* >/dev/null 2>&1; }; then
					say ok "$what" "$h and $lib found"
				else
					say fallback "$what" "$h or $lib not found" \
						"the tasks whose baseline calls $what (baseline_libraries) cannot be timed here; the others can"
				fi
			done
		fi
	fi
	if [ -z "${inc:-}" ]; then vendor_libs; fi
}

# vendor_libs: cuBLAS and cuDNN where there is no nvcc (a GPU machine running a tree built
# elsewhere): the tasks whose baselines call them need their libraries, not their headers, and
# check-gpu does not carry them. The loader's cache, then LD_LIBRARY_PATH.
vendor_libs() {
	local spec so what d p llp=${LD_LIBRARY_PATH:-}
	for spec in "libcublas.so cuBLAS" "libcudnn.so cuDNN"; do
		read -r so what <<<"$spec"
		p=$({ ldconfig -p 2>/dev/null || true; } | awk -v s="$so." 'index($1, s) == 1 { print $NF; exit }')
		if [ -z "$p" ]; then
			for d in ${llp//:/ }; do
				p=$(ls "$d/$so".* 2>/dev/null | head -1)
				[ -n "$p" ] && break
			done
		fi
		if [ -n "$p" ]; then
			say ok "$what" "$p (no nvcc here: the library alone, which is all a prepared run needs)"
		else
			say fallback "$what" "no $so.* where the loader looks (its cache, LD_LIBRARY_PATH)" \
				"the tasks whose baseline calls $what (baseline_libraries) cannot be timed here unless it is installed; check-gpu looks further before its steps"
		fi
	done
}

# The built programs load here (the machine that runs a tree built elsewhere may lack their
# libraries): each program's --version, and ldd's "not found" for the runners.
built_programs() {
	local p miss=()
	if [ ! -x bin/leap-verify ]; then
		say skip "leap's programs" "bin/ is not built (make)"
		return
	fi
	for p in bin/leap-compile bin/leap-verify bin/leap-bench; do
		"$p" --version >/dev/null 2>&1 || miss+=("$p: $(ldd "$p" 2>/dev/null | awk '/not found/ { printf "%s ", $1 }')")
	done
	for p in "$LIBEXEC"/leap-run-cpu "$LIBEXEC"/leap-run-cuda; do
		[ -x "$p" ] || continue
		ldd "$p" 2>/dev/null | grep -q 'not found' && miss+=("$p: $(ldd "$p" | awk '/not found/ { printf "%s ", $1 }')")
	done
	if [ ${#miss[@]} -eq 0 ]; then
		say ok "leap's programs" "bin/ and the runners load their libraries"
	else
		say fail "leap's programs" "missing libraries: ${miss[*]}" \
			"bring them from the machine that built leap (make gpu-prepare copies them into build/gpu/prep/rt; tests/gpu/check-gpu.sh adds the missing ones to LD_LIBRARY_PATH)"
	fi
}

# ---- the kernel (build/gpu/probe) ----

# probe NAME...: runs the probes, one `say` per line they print.
probe() {
	local st name detail fb err
	err=$(mktemp)
	while IFS=$'\t' read -r st name detail fb; do
		say "$st" "$name" "$detail" "$fb"
		case "$name" in
		"sandbox namespaces") enforces "$st" "network, PID and mount isolation" ;;
		"sandbox minimal root") enforces "$st" "a minimal file system for candidates" ;;
		seccomp) enforces "$st" "the runner's system-call filter" ;;
		"cgroup freezer") enforces "$st" "freezing a candidate's whole tree between timed blocks (cgroup)" ;;
		"memory cgroup") enforces "$st" "--memory on a sandbox's processes together (a memory cgroup)" ;;
		"memfd seals") enforces "$st" "sealed inputs in leap-bench" ;;
		"device memory by fd") [ "$st" = skip ] || enforces "$st" "device memory shared by descriptor between leap-bench's owner and client" ;;
		esac
	done < <(build/gpu/probe "$@" 2>"$err")
	[ -s "$err" ] && say ok "probe notes" "$(tr '\n' ' ' <"$err" | sed 's/ *$//')"
	rm -f "$err"
}

kernel() {
	if [ ! -x build/gpu/probe ]; then
		say skip sandbox "build/gpu/probe is not built (make gpu-tools)"
		return
	fi
	probe userns pidns mountns netns sysbind memfd seccomp freezer sandbox
}

# A cpu candidate through leap-compile and leap-verify, in the real sandbox: the record's status
# (JSON) and whatever leap warned.
cpu_pipeline() {
	if [ ! -x bin/leap-verify ] || ! jq -n 1 >/dev/null 2>&1 || ! command -v cc >/dev/null; then
		say skip "cpu pipeline" "needs bin/ built, jq and cc"
		return
	fi
	local d st warn
	d=$(mktemp -d)
	jq -nc --rawfile c tasks/vector_add/reference.c '{task: "vector_add", backend: "cpu", code: $c}' |
		LEAP_CACHE="$d/cache" timeout 120 bin/leap-compile --no-progress 2>"$d/err" |
		LEAP_CACHE="$d/cache" timeout 120 bin/leap-verify --no-progress --seed 1 2>>"$d/err" >"$d/out"
	st=$(jq -r '.status // .error.message // "no status"' "$d/out" 2>/dev/null | head -1)
	warn=$(sed 's/^leap-[a-z]*: //' "$d/err" | sort -u | tr '\n' ' ' | sed 's/ *$//')
	if [ "$st" = pass ]; then
		say ok "cpu pipeline" "a correct cpu candidate: leap-compile, then leap-verify in its sandbox: pass${warn:+ (they warned: $warn)}"
	else
		say fail "cpu pipeline" "a correct cpu candidate through leap-compile and leap-verify: ${st:-no record}${warn:+ ($warn)}" \
			"leap cannot verify here: see the findings above"
	fi
	rm -rf "$d"
}

# ---- the GPU ----

gpu() {
	local dev
	dev=$(gpu_device)
	if [ "${dev%% *}" != gpu ]; then
		say skip GPU "${dev#* }"
		return
	fi
	say ok GPU "${dev#gpu }"
	if [ -x "$LIBEXEC/leap-run-cuda" ]; then
		say ok "cuda runner" "$LIBEXEC/leap-run-cuda"
	else
		say fail "cuda runner" "a GPU is visible, but $LIBEXEC/leap-run-cuda is not built (nvcc was not found when leap was built)" \
			"build where nvcc is found (NVCC, CUDA_HOME or PATH) and bring libexec/ with the tree"
	fi
	if command -v nvidia-smi >/dev/null 2>&1; then
		local drv pm cc cm
		drv=$(gpu_smi driver_version) pm=$(gpu_smi persistence_mode) cc=$(gpu_smi compute_cap) cm=$(gpu_smi compute_mode)
		say ok "nvidia-smi" "driver ${drv:-?}, compute capability ${cc:-?}, compute mode ${cm:-?}"
		if [ "$pm" = Enabled ]; then
			say ok "persistence mode" "enabled"
		else
			say fallback "persistence mode" "${pm:-unknown}" "automatic: every runner pays a full GPU initialisation (seconds); sudo nvidia-smi -pm 1"
		fi
	fi
	# /dev/nvidia-uvm may appear only at the first cuInit, after a sandbox has copied the device
	# list: make it now (nvidia-modprobe), else let the probe's cuInit make it, and look again
	local uvm=""
	if [ -c /dev/nvidia-uvm ]; then
		uvm="present"
	elif command -v nvidia-modprobe >/dev/null && timeout 20 nvidia-modprobe -u -c=0 2>/dev/null && [ -c /dev/nvidia-uvm ]; then
		uvm="created by nvidia-modprobe -u -c=0"
	fi
	if [ -x build/gpu/probe ]; then
		probe libcuda cuda
		[ -z "$uvm" ] && [ -c /dev/nvidia-uvm ] && uvm="appeared at the first cuInit (the probe's, before leap's runners take the device list)"
		probe fdshare
	else
		say skip "cuda driver" "build/gpu/probe is not built (make gpu-tools)"
	fi
	if [ -n "$uvm" ]; then
		say ok "/dev/nvidia-uvm" "$uvm"
	else
		say fail "/dev/nvidia-uvm" "missing, and neither nvidia-modprobe nor a cuInit made it" "load the module: sudo modprobe nvidia-uvm (CUDA cannot start without it)"
	fi
}

echo "doctor: leap $(bin/leap-verify --version 2>/dev/null | head -1 | awk '{ print $NF }') on $(uname -n), $(uname -sr) ($(uname -m)), as $(id -un 2>/dev/null || id -u), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
toolchain
built_programs
kernel
cpu_pipeline
gpu
if [ ${#enforced[@]} -gt 0 ]; then
	printf 'doctor: leap enforces here: %s\n' "$(printf '%s; ' "${enforced[@]}" | sed 's/; $//')"
fi
if [ ${#not_enforced[@]} -gt 0 ]; then
	printf 'doctor: leap does NOT enforce here: %s\n' "$(printf '%s; ' "${not_enforced[@]}" | sed 's/; $//')"
fi
echo "doctor: options the fallbacks call for: ${options[*]:-none}"
echo "doctor: $nok ok, $nfb fallback, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
