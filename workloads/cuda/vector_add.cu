// reference: ref/vector_add.py
// Element-wise sum of two fp32 vectors of N = 2^20 elements, one thread per element.
#include <cuda_runtime.h>

#define N (1 << 20)
#define THREADS 256

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

// a, b, c: device pointers to N floats each.
void launch_vector_add(const float* a, const float* b, float* c, cudaStream_t stream) {
    const int blocks = (N + THREADS - 1) / THREADS;
    vector_add_kernel<<<blocks, THREADS, 0, stream>>>(a, b, c, N);
}
