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

# gpu_driver_version: the NVIDIA driver's version ("580.65.06"): nvidia-smi's, else the kernel
# module's (/proc/driver/nvidia/version, where nvidia-smi is missing); "" when neither says.
gpu_driver_version() {
	local v
	v=$(gpu_smi driver_version)
	[ -z "$v" ] && [ -r /proc/driver/nvidia/version ] &&
		v=$(sed -n 's/.*Kernel Module *\([0-9][0-9.]*\).*/\1/p' /proc/driver/nvidia/version | head -1)
	echo "$v"
}

# gpu_min_driver CUDART_VERSION: the oldest driver branch that runs that CUDA runtime (NVIDIA's
# minor version compatibility table, as lib/backend/gpu.c leap_gpu_min_driver has it); "" when
# unknown.
gpu_min_driver() {
	case $(($1 / 1000)) in
	11) echo 450 ;;
	12) echo 525 ;;
	13) echo 580 ;;
	*) echo "" ;;
	esac
}

# gpu_driver_cuda DRIVER: the newest CUDA major version a driver branch runs (the same table).
gpu_driver_cuda() {
	local m=${1%%.*}
	if [ "$m" -ge 580 ]; then echo 13; elif [ "$m" -ge 525 ]; then echo 12; elif [ "$m" -ge 450 ]; then echo 11; else echo 10; fi
}
