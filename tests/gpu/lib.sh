# shellcheck shell=bash
# lib.sh - what doctor.sh and check-gpu.sh both ask of the machine, asked one way: is a GPU
# there, an nvidia-smi field, and nvcc as leap finds it. Sourced from the repository root.

# gpu_device: "gpu NAME" when a CUDA GPU is visible, else "none REASON". LEAP_TEST_DEVICE, a
# test seam, replaces the answer (tests/gpu.bats: "GPU visible, runner missing" on a machine
# without one); nothing else reads it.
gpu_device() {
	if [ -n "${LEAP_TEST_DEVICE:-}" ]; then
		echo "$LEAP_TEST_DEVICE"
	elif command -v nvidia-smi >/dev/null 2>&1 && timeout 20 nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
		echo "gpu $(timeout 20 nvidia-smi -L 2>/dev/null | head -1)"
	elif ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
		echo "gpu /dev/nvidia0 (nvidia-smi does not list it)"
	elif command -v nvidia-smi >/dev/null 2>&1; then
		echo "none no CUDA GPU visible (nvidia-smi -L lists none)"
	else
		echo "none no NVIDIA driver here (no nvidia-smi, no /dev/nvidia0)"
	fi
}

# gpu_smi FIELD: the first GPU's value of an nvidia-smi query field ("" when there is none).
gpu_smi() {
	timeout 20 nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -1 | sed 's/ *$//'
}

# gpu_nvcc_name: nvcc as leap names it (lib/compile/toolchain.c leap_nvcc_name, the Makefile's NVCC):
# $NVCC, else $CUDA_HOME/bin/nvcc when it runs, else the nvcc on PATH (its real path); "" when
# there is none. The name enters the cache keys of the baselines' builds (lib/task/build.c).
gpu_nvcc_name() {
	local home=${CUDA_HOME:-/usr/local/cuda} p
	if [ -n "${NVCC:-}" ]; then
		command -v "$NVCC" >/dev/null 2>&1 && echo "$NVCC"
	elif [ -x "$home/bin/nvcc" ]; then
		echo "$home/bin/nvcc"
	elif p=$(command -v nvcc 2>/dev/null); then
		readlink -f "$p"
	fi
}

# gpu_arch_of CC: the arch leap-compile picks for compute capability CC (lib/backend/gpu.c
# leap_gpu_arch: the arch-specific sm_90a and sm_100a where they exist).
gpu_arch_of() {
	case "$1" in
	9.0) echo sm_90a ;;
	10.0) echo sm_100a ;;
	*.*) echo "sm_${1/./}" ;;
	*) echo "" ;;
	esac
}
