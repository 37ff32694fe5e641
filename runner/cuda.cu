/* cuda.cu - the runner's cuda backend: device regions (its own, or an owner's shared by file
 * descriptor), the owner's data moves, the device probe. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "backend.h"
#include "sandbox/runplan.h"

/*
 * Three roles (argv[2]):
 * - copy (leap-verify): the runner allocates device copies of the two regions once per
 *   session and moves each call's slots, guard ranges included, to the device before the call
 *   and, of what the candidate may write, back after it (lib/sandbox/runplan.c decides which).
 *   Verification does not time, so copies in the candidate's process are harmless there: the
 *   referee checks what comes back, canaries included.
 * - owner (leap-bench's baseline runner: trusted code only): allocates its own regions, a
 *   client's regions (filled with the canary, sent as file descriptors before the hello) and a
 *   pool of input sets, all before the baseline is loaded, so that running out of device
 *   memory is the machine's fault, never a candidate's. It performs the referee's data moves
 *   (LEAP_RUN_OP_XFER): uploads of input sets to the pool, staging of a block's inputs into
 *   slots, poisoning outputs, clearing a client's regions, fetching outputs (with their
 *   guards) into the host region the referee reads, and L2 flushes.
 * - client (leap-bench's candidate runner): imports the owner's client regions from the
 *   descriptors it inherited; the candidate's pointers point there. It only makes calls and
 *   waits for the device before "done"; the referee times it from outside, and the owner reads
 *   its outputs after it is frozen.
 * Guards are LEAP_RUN_CANARY (0xFF: a NaN in every floating-point type) on both sides of each
 * slot: a read past a buffer yields NaN, a write past it is found by the referee. The host
 * regions are staging here, never the candidate's: their guards stay accessible
 * (rb_host_pointers), since a copy from or to pageable memory is made by the CPU.
 *
 * Why file descriptors for the client's regions: owner and client each run as PID 2 of a PID
 * namespace of their own, and legacy CUDA IPC handles (cudaIpcGetMemHandle) do not open there;
 * they also share the whole block a cudaMalloc allocation was carved from (CUDA Programming
 * Guide, "IPC using the Legacy Interprocess Communication API"), which could hold the owner's
 * pool. An allocation made with cuMemCreate for CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR is
 * exactly what is shared (Programming Guide, "Virtual Memory Management": allocate and export,
 * share and import, reserve and map, access rights). The driver API is reached through
 * cudaGetDriverEntryPointByVersion, so that the runner does not link libcuda: without a driver
 * it still starts and says "no device".
 */

enum role { ROLE_COPY, ROLE_CLIENT, ROLE_OWNER };

/* The driver API entry points the runner calls (types: cudaTypedefs.h). */
struct drv {
	PFN_cuCtxGetCurrent_v4000 ctx_get;
	PFN_cuCtxSetCurrent_v4000 ctx_set;
	PFN_cuCtxPopCurrent_v4000 ctx_pop;
	PFN_cuCtxSynchronize_v2000 ctx_sync;
	PFN_cuCtxGetDevice_v2000 ctx_device;
	PFN_cuDeviceGetAttribute_v2000 attribute;
	PFN_cuMemGetAllocationGranularity_v10020 granularity;
	PFN_cuMemCreate_v10020 create;
	PFN_cuMemAddressReserve_v10020 reserve;
	PFN_cuMemMap_v10020 map;
	PFN_cuMemSetAccess_v10020 set_access;
	PFN_cuMemExportToShareableHandle_v10020 export_fd;
	PFN_cuMemImportFromShareableHandle_v10020 import_fd;
	PFN_cuMemRelease_v10020 release;
	PFN_cuGetErrorName_v6000 error_name;
};

/* The backend's device state; lives for the runner's lifetime (one process, one device). */
struct rb {
	enum role role;
	int dev;                 /* the runtime's device */
	CUdevice cudev;          /* the driver's, for the allocation properties */
	CUcontext primary;       /* the runtime's context: the one the runner's own calls use */
	struct drv drv;
	cudaEvent_t e0, e1;
	cudaStream_t xs;         /* the owner's stream for data moves */
	void *flush;             /* a buffer of twice the L2 size, written to evict the cache */
	size_t flush_bytes;
	unsigned char *hin, *hout; /* the host regions */
	uint64_t in_len, out_len;
	int in_writable;         /* the host IN is mapped writable (not sealed) */
	unsigned char *din, *dout; /* the regions the candidate's pointers point into */
	unsigned char *cin, *cout; /* owner: the client's regions */
	uint64_t cin_len, cout_len; /* owner: their allocations' sizes (granularity multiples) */
	unsigned char *pool;     /* owner: input sets */
	uint64_t pool_len;
	unsigned registered;     /* the host regions page-locked: bit LEAP_RUN_R_IN, LEAP_RUN_R_OUT */
};

/* Writes "what: CUDA error text (name)" into msg and returns status. */
static int fail(char *msg, int status, const char *what, cudaError_t e)
{
	snprintf(msg, LEAP_RUN_MSG, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
	return status;
}

/* The same for a driver API result. */
static int fail_cu(const struct rb *b, char *msg, int status, const char *what, CUresult r)
{
	const char *name = NULL;
	if (!b->drv.error_name || b->drv.error_name(r, &name) != CUDA_SUCCESS || !name)
		name = "unknown error";
	snprintf(msg, LEAP_RUN_MSG, "%s: %s (%d)", what, name, (int)r);
	return status;
}

/* The words of a compute mode. */
static const char *mode_name(int mode)
{
	switch (mode) {
	case cudaComputeModeDefault: return "DEFAULT";
	case cudaComputeModeProhibited: return "PROHIBITED";
	case cudaComputeModeExclusiveProcess: return "EXCLUSIVE_PROCESS";
	default: return "EXCLUSIVE_THREAD";
	}
}

/* The failure of a device that refuses this process a context (cudaErrorDevicesUnavailable):
 * its compute mode lets no other process in, or none at all. A fact about the machine, said as
 * a set-up failure (leap's error record), never as "no device" on every record. */
static int busy(struct rb *s, char *msg, cudaError_t e)
{
	int mode = -1;
	cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, s->dev);
	cudaGetLastError();
	snprintf(msg, LEAP_RUN_MSG, "the GPU refuses this process a context (%s): its compute mode is %s%s",
		 cudaGetErrorName(e), mode_name(mode),
		 mode == cudaComputeModeExclusiveProcess ? ", and another process holds it (nvidia-smi -c DEFAULT lets "
							   "several in)" : "");
	return LEAP_RUN_DEVICE;
}

/* Selects the device named by `device` ("-": 0) and makes its context current. */
static int pick_device(struct rb *s, const char *device, char *msg)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		snprintf(msg, LEAP_RUN_MSG, "no CUDA device available (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "zero devices");
		return LEAP_RUN_NO_DEVICE;
	}
	s->dev = 0;
	if (device && strcmp(device, "-")) {
		char *end;
		long v = strtol(device, &end, 10);
		if (*end || v < 0 || v >= count) {
			snprintf(msg, LEAP_RUN_MSG, "no CUDA device %s (%d present)", device, count);
			return LEAP_RUN_NO_DEVICE;
		}
		s->dev = (int)v;
	}
	/* leap-bench's owner and client hold a context each on this device at once: a device in
	 * EXCLUSIVE_PROCESS mode takes the owner and refuses every client, so the owner says so
	 * before it takes the device */
	int mode = cudaComputeModeDefault;
	if (s->role == ROLE_OWNER && cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, s->dev) == cudaSuccess &&
	    mode == cudaComputeModeExclusiveProcess) {
		snprintf(msg, LEAP_RUN_MSG, "the GPU is in compute mode EXCLUSIVE_PROCESS: leap-bench runs the baseline and the "
			 "candidate as two processes on it at once, which that mode forbids (nvidia-smi -c DEFAULT)");
		return LEAP_RUN_DEVICE;
	}
	cudaGetLastError();
	/* since CUDA 12.0 cudaSetDevice makes the primary context; cudaFree(0) makes sure of it,
	 * outside any timing */
	if ((e = cudaSetDevice(s->dev)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess)
		return e == cudaErrorDevicesUnavailable ? busy(s, msg, e) : fail(msg, LEAP_RUN_NO_DEVICE, "creating the CUDA context", e);
	return LEAP_RUN_OK;
}

/* Looks up the driver API entry points (after the runtime made its context), each as CUDA 12.0
 * defines it: cudaGetDriverEntryPointByVersion returns the newest version of a symbol not newer
 * than the version asked, and at 12000 that is the one each member's type names (the _v2 of
 * cuCtxSynchronize and cuCtxGetDevice, which take a context, came with 13.0). */
static int load_driver(struct rb *s, char *msg)
{
	struct {
		void **fn;
		const char *name;
	} t[] = {
		{(void **)&s->drv.ctx_get, "cuCtxGetCurrent"},
		{(void **)&s->drv.ctx_set, "cuCtxSetCurrent"},
		{(void **)&s->drv.ctx_pop, "cuCtxPopCurrent"},
		{(void **)&s->drv.ctx_sync, "cuCtxSynchronize"},
		{(void **)&s->drv.ctx_device, "cuCtxGetDevice"},
		{(void **)&s->drv.attribute, "cuDeviceGetAttribute"},
		{(void **)&s->drv.granularity, "cuMemGetAllocationGranularity"},
		{(void **)&s->drv.create, "cuMemCreate"},
		{(void **)&s->drv.reserve, "cuMemAddressReserve"},
		{(void **)&s->drv.map, "cuMemMap"},
		{(void **)&s->drv.set_access, "cuMemSetAccess"},
		{(void **)&s->drv.export_fd, "cuMemExportToShareableHandle"},
		{(void **)&s->drv.import_fd, "cuMemImportFromShareableHandle"},
		{(void **)&s->drv.release, "cuMemRelease"},
		{(void **)&s->drv.error_name, "cuGetErrorName"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
		cudaError_t e = cudaGetDriverEntryPointByVersion(t[i].name, t[i].fn, 12000, cudaEnableDefault, &q);
		if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*t[i].fn) {
			snprintf(msg, LEAP_RUN_MSG, "the CUDA driver has no %s (%s)", t[i].name,
				 e != cudaSuccess ? cudaGetErrorName(e) : "not found");
			return LEAP_RUN_DEVICE;
		}
	}
	CUresult r;
	if ((r = s->drv.ctx_get(&s->primary)) != CUDA_SUCCESS || !s->primary)
		return fail_cu(s, msg, LEAP_RUN_DEVICE, "the runtime's context", r);
	if ((r = s->drv.ctx_device(&s->cudev)) != CUDA_SUCCESS)
		return fail_cu(s, msg, LEAP_RUN_DEVICE, "cuCtxGetDevice", r);
	return LEAP_RUN_OK;
}

extern "C" int rb_init(struct rb **b, const char *device, const char *role, char *msg, uint8_t uuid[16])
{
	struct rb *s = (struct rb *)calloc(1, sizeof *s);
	if (!s) {
		snprintf(msg, LEAP_RUN_MSG, "out of host memory");
		return LEAP_RUN_NOMEM;
	}
	*b = s;
	s->role = role && !strcmp(role, "owner") ? ROLE_OWNER : role && !strcmp(role, "client") ? ROLE_CLIENT : ROLE_COPY;
	int st = pick_device(s, device, msg);
	if (st || (st = load_driver(s, msg)))
		return st;
	cudaError_t e;
	if ((e = cudaEventCreate(&s->e0)) != cudaSuccess || (e = cudaEventCreate(&s->e1)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventCreate", e);
	cudaDeviceProp prop;
	if ((e = cudaGetDeviceProperties(&prop, s->dev)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaGetDeviceProperties", e);
	memcpy(uuid, prop.uuid.bytes, 16);
	if (s->role == ROLE_OWNER) {
		if ((e = cudaStreamCreateWithFlags(&s->xs, cudaStreamNonBlocking)) != cudaSuccess)
			return fail(msg, LEAP_RUN_DEVICE, "cudaStreamCreate", e);
		s->flush_bytes = prop.l2CacheSize > 0 ? 2 * (size_t)prop.l2CacheSize : 0;
		if (s->flush_bytes && (e = cudaMalloc(&s->flush, s->flush_bytes)) != cudaSuccess)
			return fail(msg, LEAP_RUN_NOMEM, "allocating the L2 flush buffer", e);
	}
	snprintf(msg, LEAP_RUN_MSG, "%.200s", prop.name);
	return LEAP_RUN_OK;
}

extern "C" int rb_host_pointers(const struct rb *b)
{
	(void)b;
	return 0; /* the candidate's pointers are device memory */
}

/* Allocates n bytes of device memory filled with the canary into *p. */
static int alloc_canary(unsigned char **p, uint64_t n, const char *what, char *msg)
{
	cudaError_t e = cudaMalloc((void **)p, n ? n : 1);
	if (e == cudaSuccess)
		e = cudaMemset(*p, LEAP_RUN_CANARY, n);
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_NOMEM, what, e);
}

/* The properties of device memory shareable as a POSIX file descriptor on this device (the
 * exporter's and the importer's must agree: the granularity depends on them). */
static CUmemAllocationProp fd_prop(const struct rb *b)
{
	CUmemAllocationProp p;
	memset(&p, 0, sizeof p);
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = b->cudev;
	return p;
}

/* Maps allocation h (len bytes) into a new address range of this process and lets the device
 * read and write it: cuMemMap maps but grants no access, cuMemSetAccess does (Driver API,
 * cuMemMap: "does not make the address accessible"). */
static CUresult map_handle(const struct rb *b, CUmemGenericAllocationHandle h, size_t len, CUdeviceptr *ptr)
{
	CUresult r = b->drv.reserve(ptr, len, 0, 0, 0);
	if (r == CUDA_SUCCESS)
		r = b->drv.map(*ptr, len, 0, h, 0);
	if (r != CUDA_SUCCESS)
		return r;
	CUmemAccessDesc acc;
	memset(&acc, 0, sizeof acc);
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = b->cudev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	return b->drv.set_access(*ptr, len, &acc, 1);
}

/* The allocation granularity of prop, which owner and client both round to: 0, or -1 with
 * msg filled. */
static int fd_granularity(const struct rb *b, const CUmemAllocationProp *prop, size_t *gran, char *msg)
{
	CUresult r = b->drv.granularity(gran, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS || !*gran) {
		fail_cu(b, msg, LEAP_RUN_DEVICE, "cuMemGetAllocationGranularity", r);
		return -1;
	}
	return 0;
}

/* The owner: n bytes of device memory a client can import, filled with the canary: *p its
 * address here, *len the allocation's size (n rounded up to the granularity, which
 * cuMemCreate and cuMemMap require), *fd its POSIX file descriptor. */
static int alloc_shared(const struct rb *b, uint64_t n, unsigned char **p, uint64_t *len, int *fd, const char *what,
			char *msg)
{
	CUmemAllocationProp prop = fd_prop(b);
	size_t gran = 0;
	CUresult r;
	if (fd_granularity(b, &prop, &gran, msg))
		return LEAP_RUN_DEVICE;
	uint64_t size = ((n ? n : 1) + gran - 1) / gran * gran;
	CUmemGenericAllocationHandle h;
	CUdeviceptr ptr = 0;
	if ((r = b->drv.create(&h, (size_t)size, &prop, 0)) != CUDA_SUCCESS)
		return fail_cu(b, msg, r == CUDA_ERROR_OUT_OF_MEMORY ? LEAP_RUN_NOMEM : LEAP_RUN_DEVICE, what, r);
	if ((r = map_handle(b, h, (size_t)size, &ptr)) != CUDA_SUCCESS)
		return fail_cu(b, msg, LEAP_RUN_DEVICE, what, r);
	/* for a POSIX file descriptor the shareable handle is an int (cuda.h,
	 * CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) */
	if ((r = b->drv.export_fd(fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS)
		return fail_cu(b, msg, LEAP_RUN_DEVICE, "cuMemExportToShareableHandle(POSIX file descriptor)", r);
	/* the mapping and the descriptor keep the memory: the handle can go (cuMemRelease) */
	b->drv.release(h);
	cudaError_t e = cudaMemset((void *)ptr, LEAP_RUN_CANARY, (size_t)size);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, what, e);
	*p = (unsigned char *)ptr;
	*len = size;
	return LEAP_RUN_OK;
}

/* The client: maps the owner's allocation behind descriptor fd (len bytes, of which the region
 * needs `need`) into *p. Every failure is a set-up failure: the harness's or the machine's. */
static int import_shared(const struct rb *b, int fd, uint64_t len, uint64_t need, unsigned char **p, const char *what,
			 char *msg)
{
	CUmemAllocationProp prop = fd_prop(b);
	size_t gran = 0;
	CUresult r;
	if (fd_granularity(b, &prop, &gran, msg))
		return LEAP_RUN_DEVICE;
	if (fd < 0 || len < need || !len || len % gran || len > SIZE_MAX) {
		snprintf(msg, LEAP_RUN_MSG, "%s: no descriptor, or %llu bytes for a region of %llu (granularity %zu)", what,
			 (unsigned long long)len, (unsigned long long)need, gran);
		return LEAP_RUN_DEVICE;
	}
	CUmemGenericAllocationHandle h;
	CUdeviceptr ptr = 0;
	/* the descriptor itself is the handle, passed by value (cuda.h: "(int)"); the
	 * Programming Guide's fabric handle is the one passed by address */
	if ((r = b->drv.import_fd(&h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != CUDA_SUCCESS)
		return fail_cu(b, msg, LEAP_RUN_DEVICE, what, r);
	r = map_handle(b, h, (size_t)len, &ptr);
	/* "each time a recipient process imports a shareable handle, it needs to pair it with
	 * cuMemRelease" (cuMemRelease); the mapping keeps the memory */
	b->drv.release(h);
	if (r != CUDA_SUCCESS)
		return fail_cu(b, msg, LEAP_RUN_DEVICE, what, r);
	*p = (unsigned char *)ptr;
	return LEAP_RUN_OK;
}

/* cudaHostRegister as lib/sandbox/runplan.c's leap_run_register asks it. */
static int host_register(void *arg, void *p, size_t len, enum leap_run_reg how)
{
	(void)arg;
	cudaError_t e = cudaHostRegister(p, len, how == LEAP_RUN_REG_READONLY ? cudaHostRegisterReadOnly : cudaHostRegisterDefault);
	cudaGetLastError(); /* a refusal is not an error of the runner's */
	return e == cudaSuccess ? 0 : -1;
}

/* The owner's own regions, the client's (shared: their descriptors and sizes into dm), the
 * pool, and the host regions page-locked where the device allows. */
static int owner_regions(struct rb *b, const struct leap_run_ctl *ctl, struct rb_devmem *dm, char *msg)
{
	int vmm = 0, posix = 0;
	b->drv.attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, b->cudev);
	b->drv.attribute(&posix, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, b->cudev);
	if (!vmm || !posix) {
		snprintf(msg, LEAP_RUN_MSG, "this GPU cannot share device memory as a file descriptor (virtual memory "
			 "management %s, POSIX file descriptor handles %s): leap-bench's client cannot reach the owner's memory",
			 vmm ? "yes" : "no", posix ? "yes" : "no");
		return LEAP_RUN_DEVICE;
	}
	int st = alloc_shared(b, b->in_len, &b->cin, &b->cin_len, &dm->exp[0], "allocating the client's input region", msg);
	if (!st)
		st = alloc_shared(b, b->out_len, &b->cout, &b->cout_len, &dm->exp[1], "allocating the client's output region",
				  msg);
	if (st)
		return st;
	dm->exp_len[0] = b->cin_len;
	dm->exp_len[1] = b->cout_len;
	cudaError_t e;
	b->pool_len = ctl->pool_len;
	if (b->pool_len && (e = cudaMalloc((void **)&b->pool, b->pool_len)) != cudaSuccess)
		return fail(msg, LEAP_RUN_NOMEM, "allocating the device pool of input sets", e);
	/* Page-locked host regions make the owner's moves asynchronous and fast; not required. */
	int reg = 0, ro = 0;
	cudaDeviceGetAttribute(&reg, cudaDevAttrHostRegisterSupported, b->dev);
	cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, b->dev);
	cudaGetLastError();
	if (reg)
		b->registered = leap_run_register(b->hin, b->in_len, b->in_writable, b->hout, b->out_len, ro, host_register, NULL);
	return LEAP_RUN_OK;
}

extern "C" int rb_regions(struct rb *b, unsigned char *in, uint64_t in_len, unsigned char *out, uint64_t out_len,
			  const struct leap_run_ctl *ctl, struct rb_devmem *dm, char *msg)
{
	b->hin = in;
	b->hout = out;
	b->in_len = in_len;
	b->out_len = out_len;
	b->in_writable = !(ctl->flags & LEAP_RUN_CTL_SEALED);
	if (b->role == ROLE_CLIENT) {
		int st = import_shared(b, dm->imp[0], dm->imp_len[0], in_len, &b->din, "importing the owner's input region", msg);
		return st ? st : import_shared(b, dm->imp[1], dm->imp_len[1], out_len, &b->dout, "importing the owner's output region", msg);
	}
	int st = alloc_canary(&b->din, in_len, "allocating the device input region", msg);
	if (!st)
		st = alloc_canary(&b->dout, out_len, "allocating the device output region", msg);
	if (st || b->role != ROLE_OWNER)
		return st;
	return owner_regions(b, ctl, dm, msg);
}

extern "C" unsigned char *rb_base(struct rb *b, int r)
{
	return r == LEAP_RUN_R_IN ? b->din : b->dout;
}

/* After the candidate's code ran: every context it left current on this thread is waited for
 * and popped, and the runtime's own context is current again. cudaDeviceSynchronize waits for
 * the context current to the thread (the primary, with its green contexts: cuCtxSynchronize),
 * not for a context the candidate made with cuCtxCreate; and the runner's own calls after this
 * (the copies, the events) must go to the context its buffers and events belong to. A context
 * the candidate made and popped again is out of any runner's reach (SECURITY.md). Returns
 * LEAP_RUN_OK, or LEAP_RUN_DEVICE with *code when work there failed. */
static int own_context(struct rb *b, int *code, char *msg)
{
	int st = LEAP_RUN_OK;
	for (int i = 0; i < 64; i++) {
		CUcontext c = NULL;
		if (b->drv.ctx_get(&c) != CUDA_SUCCESS || !c || c == b->primary)
			break;
		CUresult r = b->drv.ctx_sync();
		if (r != CUDA_SUCCESS && st == LEAP_RUN_OK) {
			*code = (int)r;
			st = fail_cu(b, msg, LEAP_RUN_DEVICE, "error in a CUDA context the code created", r);
		}
		if (b->drv.ctx_pop(&c) != CUDA_SUCCESS)
			break;
	}
	CUcontext c = NULL;
	if (b->drv.ctx_get(&c) != CUDA_SUCCESS || c != b->primary)
		b->drv.ctx_set(b->primary);
	return st;
}

extern "C" int rb_block_begin(struct rb *b, char *msg)
{
	cudaError_t e;
	if ((e = cudaDeviceSynchronize()) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "before the block", e);
	if ((e = cudaEventRecord(b->e0, 0)) != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "cudaEventRecord", e);
	return LEAP_RUN_OK;
}

extern "C" int rb_block_end(struct rb *b, double *own_ms, int *code, char *msg)
{
	int st = own_context(b, code, msg);
	if (st)
		return st;
	cudaError_t rec = cudaEventRecord(b->e1, 0);
	cudaError_t sync = cudaDeviceSynchronize(); /* every stream of the context: nothing escapes "done" */
	cudaError_t last = cudaGetLastError();
	if (sync != cudaSuccess) {
		*code = (int)sync;
		return fail(msg, LEAP_RUN_DEVICE, "error while the kernel ran", sync);
	}
	if (last != cudaSuccess) {
		*code = (int)last;
		return fail(msg, LEAP_RUN_DEVICE, "error after the kernel", last);
	}
	float ms = 0;
	if (rec != cudaSuccess || cudaEventElapsedTime(&ms, b->e0, b->e1) != cudaSuccess)
		ms = -1;
	*own_ms = ms;
	return LEAP_RUN_OK;
}

/* Copy role: the moves lib/sandbox/runplan.c plans for one call, between the host regions and the
 * device copies (back 0: to the device, 1: back). */
static int copy_slots(struct rb *b, const struct leap_run_arg *row, uint32_t np, int back, char *msg)
{
	struct leap_run_move mv[LEAP_RUN_MAX_PARAMS];
	uint32_t n = leap_run_copy_plan(row, np, b->in_len, b->out_len, back, b->in_writable, mv);
	for (uint32_t i = 0; i < n; i++) {
		unsigned char *h = (mv[i].region == LEAP_RUN_R_IN ? b->hin : b->hout) + mv[i].off;
		unsigned char *d = (mv[i].region == LEAP_RUN_R_IN ? b->din : b->dout) + mv[i].off;
		cudaError_t e = back ? cudaMemcpy(h, d, mv[i].len, cudaMemcpyDeviceToHost)
				     : cudaMemcpy(d, h, mv[i].len, cudaMemcpyHostToDevice);
		if (e != cudaSuccess)
			return fail(msg, LEAP_RUN_DEVICE, back ? "copying outputs from the device" : "copying inputs to the device", e);
	}
	return LEAP_RUN_OK;
}

extern "C" int rb_call(struct rb *b, leap_entry_fn entry, void *const *args, const struct leap_run_arg *row,
		       uint32_t nparams, int *code, char *msg)
{
	int st;
	if (b->role == ROLE_COPY && (st = copy_slots(b, row, nparams, 0, msg)))
		return st;
	int rc = entry(args);
	if ((st = own_context(b, code, msg)))
		return st;
	if (rc) {
		*code = rc;
		return fail(msg, LEAP_RUN_CALL, "kernel launch failed", (cudaError_t)rc);
	}
	if (b->role == ROLE_COPY) {
		cudaError_t e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			*code = (int)e;
			return fail(msg, LEAP_RUN_DEVICE, "error while the kernel ran", e);
		}
		if ((st = copy_slots(b, row, nparams, 1, msg)))
			return st;
	}
	return LEAP_RUN_OK;
}

/* Writes the elsize-byte pattern into every element, 16 bytes per store where it can (the
 * pattern repeated to 16 bytes when elsize divides 16). */
__global__ void fill_kernel(unsigned char *buf, size_t n, uint64_t lo, uint64_t hi, unsigned elsize)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (((uintptr_t)buf & 15) == 0 && 16 % elsize == 0) {
		uint4 v = make_uint4((unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32));
		size_t n16 = n / 16;
		for (size_t k = i; k < n16; k += stride)
			((uint4 *)buf)[k] = v;
		for (size_t k = n16 * 16 + i; k < n; k += stride)
			buf[k] = (unsigned char)((k % 16 < 8 ? lo : hi) >> (8 * (k % 8)));
		return;
	}
	uint64_t pat = lo;
	for (size_t k = i; k < n; k += stride)
		buf[k] = (unsigned char)(pat >> (8 * (k % elsize)));
}

/* The device address of `len` bytes at `off` of a space, or NULL (out of range, not here). The
 * client's spaces are their whole allocations, so that a clear reaches every byte a candidate
 * could have written. */
static unsigned char *space(struct rb *b, uint32_t sp, uint64_t off, uint64_t len, int *host)
{
	unsigned char *base = NULL;
	uint64_t n = 0;
	*host = 0;
	switch (sp) {
	case LEAP_RUN_S_HOST_IN: base = b->hin, n = b->in_len, *host = 1; break;
	case LEAP_RUN_S_HOST_OUT: base = b->hout, n = b->out_len, *host = 1; break;
	case LEAP_RUN_S_DEV_IN: base = b->din, n = b->in_len; break;
	case LEAP_RUN_S_DEV_OUT: base = b->dout, n = b->out_len; break;
	case LEAP_RUN_S_CLIENT_IN: base = b->cin, n = b->cin_len; break;
	case LEAP_RUN_S_CLIENT_OUT: base = b->cout, n = b->cout_len; break;
	case LEAP_RUN_S_POOL: base = b->pool, n = b->pool_len; break;
	default: return NULL;
	}
	return base && off <= n && len <= n - off ? base + off : NULL;
}

extern "C" int rb_xfer(struct rb *b, const struct leap_run_xfer *xs, uint32_t n, int flush_l2, char *msg)
{
	if (b->role != ROLE_OWNER) {
		snprintf(msg, LEAP_RUN_MSG, "only an owner moves data");
		return LEAP_RUN_PROTO;
	}
	cudaError_t e = cudaSuccess;
	for (uint32_t i = 0; i < n && e == cudaSuccess; i++) {
		struct leap_run_xfer x = xs[i];
		int dh, sh;
		unsigned char *dst = space(b, x.dst_space, x.dst_off, x.len, &dh);
		if (!dst || (dh && x.dst_space != LEAP_RUN_S_HOST_OUT)) {
			snprintf(msg, LEAP_RUN_MSG, "transfer %u: bad destination", i);
			return LEAP_RUN_PROTO;
		}
		if (x.src_space == LEAP_RUN_S_FILL) {
			uint64_t lo = 0, hi;
			unsigned es = x.elsize && x.elsize <= 8 ? x.elsize : 1;
			for (unsigned k = 0; k < 8; k++)
				lo |= (uint64_t)x.pattern[k % es] << (8 * k);
			hi = lo;
			if (dh)
				for (uint64_t k = 0; k < x.len; k++)
					dst[k] = x.pattern[k % es];
			else
				fill_kernel<<<1024, 256, 0, b->xs>>>(dst, x.len, lo, hi, es);
			e = cudaGetLastError();
			continue;
		}
		unsigned char *src = space(b, x.src_space, x.src_off, x.len, &sh);
		if (!src) {
			snprintf(msg, LEAP_RUN_MSG, "transfer %u: bad source", i);
			return LEAP_RUN_PROTO;
		}
		e = cudaMemcpyAsync(dst, src, x.len, cudaMemcpyDefault, b->xs);
	}
	if (e == cudaSuccess && flush_l2 && b->flush) {
		if ((e = cudaCtxResetPersistingL2Cache()) == cudaSuccess)
			e = cudaMemsetAsync(b->flush, 0x5a, b->flush_bytes, b->xs);
	}
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(b->xs);
	return e == cudaSuccess ? LEAP_RUN_OK : fail(msg, LEAP_RUN_DEVICE, "moving data for the referee", e);
}

/* Eight independent FMA chains per thread: the FP32 pipes, not latency, bound it. */
__global__ void fma_kernel(float *out, int iters)
{
	float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
	const float m = 0.999f, c = 0.001f;
	for (int i = 0; i < iters; i++) {
		a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
		a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
	}
	float r = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
	if (r == 12345.0f) /* never: keeps the work alive */
		out[threadIdx.x] = r;
}

/* Device time spent warming a probe before it measures: an idle GPU runs at low clocks for
 * the first tens of milliseconds of work, and a peak measured then is low, which lets roofline
 * exceed 1 (issue 27, item 10). */
#define WARM_MS 100.0f

/* One step of a probe: the copy or the kernel it measures, on the default stream. */
struct probe_step {
	void *a, *b;
	size_t n;
	int kernel, blocks, threads, iters;
};

static cudaError_t step(const struct probe_step *p, int i)
{
	if (p->kernel) {
		fma_kernel<<<p->blocks, p->threads>>>((float *)p->b, p->iters);
		return cudaGetLastError();
	}
	return cudaMemcpyAsync(i % 2 ? p->a : p->b, i % 2 ? p->b : p->a, p->n, cudaMemcpyDeviceToDevice, 0);
}

/* Runs steps until WARM_MS of device time passed, then times `reps` single steps; the best
 * into *best_ms. */
static cudaError_t probe_time(struct rb *s, const struct probe_step *p, int reps, float *best_ms)
{
	cudaError_t e = cudaSuccess;
	float warm = 0, ms = 0;
	for (int round = 0; warm < WARM_MS && round < 1000 && e == cudaSuccess; round++) {
		if ((e = cudaEventRecord(s->e0, 0)) != cudaSuccess)
			break;
		for (int i = 0; i < 8 && e == cudaSuccess; i++)
			e = step(p, i);
		if (e == cudaSuccess && (e = cudaEventRecord(s->e1, 0)) == cudaSuccess &&
		    (e = cudaEventSynchronize(s->e1)) == cudaSuccess && (e = cudaEventElapsedTime(&ms, s->e0, s->e1)) == cudaSuccess)
			warm += ms;
	}
	*best_ms = INFINITY;
	for (int i = 0; i < reps && e == cudaSuccess; i++) {
		if ((e = cudaEventRecord(s->e0, 0)) != cudaSuccess || (e = step(p, i)) != cudaSuccess ||
		    (e = cudaEventRecord(s->e1, 0)) != cudaSuccess || (e = cudaEventSynchronize(s->e1)) != cudaSuccess ||
		    (e = cudaEventElapsedTime(&ms, s->e0, s->e1)) != cudaSuccess)
			break;
		if (ms < *best_ms)
			*best_ms = ms;
	}
	return e;
}

extern "C" int rb_probe(struct rb *s, double *copy_gbs, double *gflops, char *msg)
{
	struct probe_step p;
	memset(&p, 0, sizeof p);
	p.n = (size_t)512 << 20;
	cudaError_t e;
	if ((e = cudaMalloc(&p.a, p.n)) != cudaSuccess || (e = cudaMalloc(&p.b, p.n)) != cudaSuccess) {
		cudaFree(p.a);
		return fail(msg, LEAP_RUN_DEVICE, "allocating the probe buffers", e); /* NOMEM: the hello's */
	}
	float best = INFINITY;
	e = probe_time(s, &p, 5, &best);
	if (e != cudaSuccess) {
		cudaFree(p.a);
		cudaFree(p.b);
		return fail(msg, LEAP_RUN_DEVICE, "measuring the copy bandwidth", e);
	}
	*copy_gbs = 2.0 * (double)p.n / ((double)best * 1e6);
	int sms = 0;
	if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, s->dev)) != cudaSuccess) {
		cudaFree(p.a);
		cudaFree(p.b);
		return fail(msg, LEAP_RUN_DEVICE, "cudaDeviceGetAttribute", e);
	}
	p.kernel = 1;
	p.blocks = sms * 8;
	p.threads = 256;
	p.iters = 4096;
	e = probe_time(s, &p, 5, &best);
	cudaFree(p.a);
	cudaFree(p.b);
	if (e != cudaSuccess)
		return fail(msg, LEAP_RUN_DEVICE, "measuring the FP32 rate", e);
	*gflops = 2.0 * 8 * (double)p.iters * p.blocks * p.threads / ((double)best * 1e6);
	return LEAP_RUN_OK;
}
