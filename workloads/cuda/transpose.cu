// reference: ref/transpose.py
// Out-of-place transpose of a [ROWS, COLS] = [1024, 2048] fp32 matrix through a padded
// shared-memory tile (coalesced reads and writes, no bank conflicts).
#include <cuda_runtime.h>

#define ROWS 1024
#define COLS 2048
#define TILE 32
#define BLOCK_ROWS 8

__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out,
                                 int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;   // column of in
    int y = blockIdx.y * TILE + threadIdx.y;   // row of in
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;       // column of out (= row of in)
    y = blockIdx.x * TILE + threadIdx.y;       // row of out (= column of in)
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

// in: device pointer to ROWS * COLS floats; out: COLS * ROWS floats.
void launch_transpose(const float* in, float* out, cudaStream_t stream) {
    dim3 block(TILE, BLOCK_ROWS);
    dim3 grid((COLS + TILE - 1) / TILE, (ROWS + TILE - 1) / TILE);
    transpose_kernel<<<grid, block, 0, stream>>>(in, out, ROWS, COLS);
}
