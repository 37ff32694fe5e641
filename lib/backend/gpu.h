/* gpu.h - facts about this machine's NVIDIA GPUs: driver against runtime, arch, UUIDs, persistence. */
#ifndef LEAP_GPU_H
#define LEAP_GPU_H

#include <stddef.h>

/*
 * Every GPU fact leap acts on comes from here, each asked in one place:
 * - the driver's CUDA version (cuDriverGetVersion of libcuda.so.1, which needs no cuInit and
 *   touches no device), against the CUDA runtime leap's runner and artifacts link statically
 *   (LEAP_CUDART_VERSION, read from the toolkit's header at build time). A driver older than
 *   that runtime's major version makes every CUDA call fail with "driver version is
 *   insufficient", which would otherwise reach each record as no_device: a fact about the
 *   machine, said once, never a verdict on a candidate;
 * - the devices as nvidia-smi lists them (one query: name, compute capability, UUID,
 *   persistence mode, memory). nvidia-smi, not the driver API, so that the parent process never
 *   loads a CUDA context and a test can stand in for the GPU with a script on PATH.
 */

/* The architecture candidates build for when no GPU is visible and no --arch is given. */
#define LEAP_DEFAULT_ARCH "sm_90"

/* One device, in nvidia-smi's order. */
struct leap_gpu_dev {
	int index;
	char name[96];
	int cc_major, cc_minor; /* compute capability; 0.0 when unknown */
	char uuid[64];          /* "GPU-...", or "" */
	int persistence;        /* 1 on, 0 off, -1 unknown */
	long long memory_mib;   /* 0 when unknown */
};

/* The devices nvidia-smi lists (n = 0 without nvidia-smi or without a GPU). */
struct leap_gpu {
	int n;
	struct leap_gpu_dev *dev;
};

/* Runs `nvidia-smi --query-gpu=...` once (20 s at most) and fills *g. Never fails: a missing
 * or failing nvidia-smi, or lines it cannot parse, leave fewer devices. */
void leap_gpu_query(struct leap_gpu *g);
void leap_gpu_free(struct leap_gpu *g);

/* The device that CUDA's index `idx` names, or NULL: the idx-th entry of CUDA_VISIBLE_DEVICES
 * when it lists indices or UUIDs, else nvidia-smi's idx-th device. */
const struct leap_gpu_dev *leap_gpu_device(const struct leap_gpu *g, int idx);

/* The nvcc architecture of compute capability major.minor into buf: sm_90a for 9.0 and sm_100a
 * for 10.0 (the "a" targets: wgmma, TMA, setmaxnreg and tcgen05 exist only there), else
 * sm_XY. */
void leap_gpu_arch(int major, int minor, char *buf, size_t n);

/* nvcc's option for `arch` (new string): -arch=ARCH, except for the arch-specific targets
 * (sm_90a, sm_100a, sm_100f...): -gencode=arch=compute_90a,code=sm_90a, since -arch=sm_90a also
 * embeds plain compute_90 PTX, which ptxas checks, and wgmma does not assemble there. */
char *leap_gpu_arch_flag(const char *arch);

/* The CUDA version (1000 * major + 10 * minor) of the runtime leap links, 0 when built without
 * CUDA. */
int leap_gpu_runtime_version(void);

/* The minimum driver release (580 for CUDA 13) a runtime major version needs, 0 if unknown. */
int leap_gpu_min_driver(int runtime_version);

/* 0 when the driver can run leap's CUDA runtime or cannot be asked (no libcuda.so.1: the
 * runner says no_device then); 1 when it is too old, with one line saying both versions and the
 * fix in msg[0..n). */
int leap_gpu_driver_check(char *msg, size_t n);

/* leap_gpu_driver_check, once per *checked: a too old driver ends the program with its message
 * and LEAP_EXIT_FATAL. */
void leap_gpu_require_driver(int *checked);

/* The GPU facts of a program, gathered at its first use of the cuda backend. */
struct leap_gpu_once {
	int done;
	struct leap_gpu g;
};

/* On the first call: the driver check (a too old driver ends the program, see
 * leap_gpu_require_driver), the device query, and the persistence note on stderr. Returns the
 * devices (every call). */
const struct leap_gpu *leap_gpu_first_use(struct leap_gpu_once *o);

/* CUDA_VISIBLE_DEVICES for a child that runs on CUDA device `device` (decimal, as --device and
 * --devices give it) alone: the device's UUID when it is known, else the entry of the caller's
 * CUDA_VISIBLE_DEVICES, else the index. New string, or NULL when `device` is not an index (the
 * child then sees what the caller sees). The child's own device is then 0. */
char *leap_gpu_visible(const struct leap_gpu *g, const char *device);

/* Makes /dev/nvidia-uvm where an NVIDIA driver is (/dev/nvidiactl) and the node is not yet: the
 * driver makes it only at a process's first cuInit, after a sandbox's minimal root has taken
 * the device list without it, and CUDA cannot start without it. Runs `nvidia-modprobe -u -c=0`
 * (on PATH, 20 s at most), as the doctor does; best effort, never fails. */
void leap_gpu_uvm_node(void);

/* The note, for stderr, that persistence mode is off on some device (with how to enable it),
 * or NULL when it is on everywhere or unknown. New string. */
char *leap_gpu_persistence_note(const struct leap_gpu *g);

#endif
