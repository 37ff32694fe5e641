/* torchaot.h - the torch-compile baseline's module, compiled ahead of time outside any sandbox
 * and kept in the cache by content. */
#ifndef LEAP_TORCHAOT_H
#define LEAP_TORCHAOT_H

#include "task/task.h"

/* The longest one compile may take (torch.export and AOTInductor's C++ build: a ReLU took 30 s
 * on an idle machine, 60 to 90 s on a loaded 2-core one). */
#define LEAP_TORCH_AOT_TIMEOUT_S 1800.0

/* What the compile step is given: the Python and its torch, the sources it runs, and where the
 * result goes. */
struct leap_torch_aot {
	const char *python;  /* $LEAP_TORCH_PYTHON */
	const char *torch;   /* torch's version (its distribution's; part of the key) */
	const char *libexec; /* leap-torchbase.py and leap-torchref.py */
	const char *cache;   /* the result goes under CACHE/torch-compile/ */
	const char *device;  /* torch's device name: cpu or cuda */
	const char *values;  /* the bench case's sizes, a JSON object */
	int threads;         /* the baseline runner's cores: inductor writes its OpenMP threads
			      * into the code it generates */
	const char *gpu;     /* cuda: the device's name and compute capability (triton builds
			      * for it), "" on cpu */
	const char *visible; /* cuda: CUDA_VISIBLE_DEVICES for the step, the baseline's device
			      * alone (NULL: as leap's) */
};

/* The shared object AOTInductor made of module task t's module at a->values on a->device, with
 * its parameters and buffers as inputs (runner/torchbase.py compile_aoti): found in the cache
 * (CACHE/torch-compile/KEY.so, KEY the SHA-256 of the module file, task.json's parameters (their
 * types: the precision), the sizes, the device and on cuda its GPU, the threads, this CPU's
 * model and flags (the code is built -march=native), torch's version, the Python and the two
 * scripts), else compiled now and stored there.
 * Returns its path (new), or NULL with a new message in *err; *refused is 1 when torch cannot
 * export or compile the module (kept as CACHE/torch-compile/KEY.refused: a second record of the
 * task is refused at once), 0 when the step itself failed (no Python, a crash, its deadline). */
char *leap_torch_aot(const struct leap_torch_aot *a, const struct leap_task *t, int *refused, char **err);

#endif
