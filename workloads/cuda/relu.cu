// reference: ref/relu.py
// Element-wise ReLU of a [BATCH, DIM] = [16, 16384] fp32 matrix, grid-stride loop.
#include <cuda_runtime.h>

#define BATCH 16
#define DIM 16384
#define THREADS 256

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

// x, y: device pointers to BATCH * DIM floats.
void launch_relu(const float* x, float* y, cudaStream_t stream) {
    const int n = BATCH * DIM;
    const int blocks = (n + THREADS - 1) / THREADS;
    relu_kernel<<<blocks, THREADS, 0, stream>>>(x, y, n);
}
