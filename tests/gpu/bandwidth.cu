// bandwidth.cu - the device's memory bandwidth two ways (make check-gpu): a device-to-device
// copy measured as the cuda runner measures the roofline's peak (runner/cuda.cu, rb_probe: 512
// MiB copied back and forth, 100 ms of copies to warm the clocks, the best of 5, read + write
// bytes), and a kernel that only reads the same 512 MiB (a sum, one value per block written).
// A read-mostly kernel moves its bytes at the read-only rate; where that is above the copy's
// (HBM3 reads faster than it reads and writes at once), the roofline of such a kernel passes 1
// against the copy's floor, and check-gpu says so with both figures.
// Prints one JSON line {"bytes", "copy_gbs", "read_gbs"}; exit status 2 when a CUDA call fails
// (the call and its error on stderr).
// usage: bandwidth   (build: make gpu-tools)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "bandwidth: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(2);                                                         \
		}                                                                        \
	} while (0)

enum { REPS = 5, WARM_MS = 100 };

// Sums n float4s, grid-stride, 128-bit loads; each block's sum to out[block] (so that the reads
// are not dead code).
__global__ static void read_kernel(const float4 *a, size_t n, float *out)
{
	float s = 0;
	// unrolled, so that each thread has several independent loads in flight
#pragma unroll 4
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float4 v = a[i];
		s += v.x + v.y + v.z + v.w;
	}
	__shared__ float part[256];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = part[0];
}

struct job {
	float *a, *b, *out;
	size_t bytes;
	int blocks;
	bool copy;
};

// One step: a copy (alternating directions, as the runner's probe) or one read pass.
static void step(const job *j, int i)
{
	if (j->copy) {
		CHECK(cudaMemcpyAsync(i % 2 ? j->a : j->b, i % 2 ? j->b : j->a, j->bytes, cudaMemcpyDeviceToDevice, 0));
	} else {
		read_kernel<<<j->blocks, 256>>>((const float4 *)j->a, j->bytes / sizeof(float4), j->out);
		CHECK(cudaGetLastError());
	}
}

// Steps until WARM_MS of device time passed, then the best of REPS single steps, in ms.
static float best_ms(const job *j)
{
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	float warm = 0, ms = 0, best = INFINITY;
	for (int round = 0; warm < WARM_MS && round < 1000; round++) {
		CHECK(cudaEventRecord(e0));
		for (int i = 0; i < 8; i++)
			step(j, i);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
		warm += ms;
	}
	for (int i = 0; i < REPS; i++) {
		CHECK(cudaEventRecord(e0));
		step(j, i);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		CHECK(cudaEventElapsedTime(&ms, e0, e1));
		if (ms < best)
			best = ms;
	}
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	return best;
}

int main(void)
{
	job j = {};
	j.bytes = (size_t)512 << 20;
	int sms = 0;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	j.blocks = sms * 8;
	CHECK(cudaMalloc(&j.a, j.bytes));
	CHECK(cudaMalloc(&j.b, j.bytes));
	CHECK(cudaMalloc(&j.out, (size_t)j.blocks * sizeof(float)));
	CHECK(cudaMemset(j.a, 0, j.bytes));
	CHECK(cudaMemset(j.b, 0, j.bytes));
	j.copy = true;
	float copy = best_ms(&j);
	j.copy = false;
	float rd = best_ms(&j);
	CHECK(cudaDeviceSynchronize());
	printf("{\"bytes\": %zu, \"copy_gbs\": %.1f, \"read_gbs\": %.1f}\n", j.bytes, 2.0 * j.bytes / (copy * 1e6),
	       j.bytes / (rd * 1e6));
	CHECK(cudaFree(j.a));
	CHECK(cudaFree(j.b));
	CHECK(cudaFree(j.out));
	return 0;
}
