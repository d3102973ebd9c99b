// reference: ref/layernorm.py
// Layer normalisation over the last dim of a [rows, dim] fp32 matrix with scale gamma and
// shift beta (eps = 1e-5): one block per row; the mean and then the variance are reduced in
// shared memory. Launched on a [256, 4096] input.
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int THREADS = 512;
constexpr float EPS = 1e-5f;

__device__ float block_sum(float v, float* smem) {
    const int tid = threadIdx.x;
    smem[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    const float total = smem[0];
    __syncthreads();
    return total;
}

__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                 const float* __restrict__ beta, float* __restrict__ y,
                                 int dim) {
    __shared__ float smem[THREADS];
    const int row = blockIdx.x;
    const float* xr = x + (size_t)row * dim;
    float* yr = y + (size_t)row * dim;

    float s = 0.0f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) s += xr[j];
    const float mean = block_sum(s, smem) / dim;

    float s2 = 0.0f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) {
        const float d = xr[j] - mean;
        s2 += d * d;
    }
    const float rstd = rsqrtf(block_sum(s2, smem) / dim + EPS);

    for (int j = threadIdx.x; j < dim; j += blockDim.x) {
        yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
    }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && gamma.numel() == x.size(1));
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    layernorm_kernel<<<xc.size(0), THREADS>>>(xc.data_ptr<float>(), gamma.data_ptr<float>(),
                                              beta.data_ptr<float>(), y.data_ptr<float>(),
                                              xc.size(1));
    return y;
}
