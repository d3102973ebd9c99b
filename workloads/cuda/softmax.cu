// reference: ref/softmax.py
// Row-wise softmax of a [batch, dim] fp32 matrix: one thread block per row; the row maximum
// and the sum of exponentials are reduced in shared memory; three passes over the row
// (max, sum, normalise). Launched on a [16, 16384] input.
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <float.h>

constexpr int THREADS = 1024;

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int dim) {
    __shared__ float smem[THREADS];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float* xr = x + (size_t)row * dim;
    float* yr = y + (size_t)row * dim;

    // Pass 1: row maximum.
    float local_max = -FLT_MAX;
    for (int j = tid; j < dim; j += blockDim.x) {
        local_max = fmaxf(local_max, xr[j]);
    }
    smem[tid] = local_max;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] = fmaxf(smem[tid], smem[tid + s]);
        __syncthreads();
    }
    const float row_max = smem[0];
    __syncthreads();

    // Pass 2: sum of exponentials.
    float local_sum = 0.0f;
    for (int j = tid; j < dim; j += blockDim.x) {
        local_sum += __expf(xr[j] - row_max);
    }
    smem[tid] = local_sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    const float inv_sum = 1.0f / smem[0];

    // Pass 3: normalise.
    for (int j = tid; j < dim; j += blockDim.x) {
        yr[j] = __expf(xr[j] - row_max) * inv_sum;
    }
}

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int batch = xc.size(0);
    const int dim = xc.size(1);
    softmax_kernel<<<batch, THREADS>>>(xc.data_ptr<float>(), y.data_ptr<float>(), dim);
    return y;
}
