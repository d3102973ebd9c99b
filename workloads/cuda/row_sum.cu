// reference: ref/row_sum.py
// Sum over the last dim of a [ROWS, COLS] = [128, 8192] fp32 matrix: one block per row,
// per-thread partial sums, warp shuffles, then one partial per warp in shared memory.
#include <cuda_runtime.h>

#define ROWS 128
#define COLS 8192
#define THREADS 256
#define WARPS (THREADS / 32)

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int cols) {
    __shared__ float warp_sums[WARPS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffff, s, offset);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < WARPS ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffff, s, offset);
        if (lane == 0) out[blockIdx.x] = s;
    }
}

// x: device pointer to ROWS * COLS floats; out: ROWS floats.
void launch_row_sum(const float* x, float* out, cudaStream_t stream) {
    row_sum_kernel<<<ROWS, THREADS, 0, stream>>>(x, out, COLS);
}
