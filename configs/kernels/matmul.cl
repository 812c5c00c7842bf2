/* C = A B for n x n row-major float matrices, tiled in local memory.
 *
 * A work group of block_size_x x block_size_y items computes a TM x TN tile of C
 * (TM = block_size_y * tile_size_y, TN = block_size_x * tile_size_x); each item computes
 * tile_size_y x tile_size_x elements, strided by the block size so that neighbouring items
 * touch neighbouring columns. The k dimension advances tile_size_k at a time through tiles
 * of A (TM x tile_size_k) and B (tile_size_k x TN) loaded by the whole group into local
 * memory. Any n works: loads outside the matrices read zeros, stores are guarded.
 * The parameters are #defined by the tuner (see matmul.yaml).
 */
#define TM (block_size_y * tile_size_y)
#define TN (block_size_x * tile_size_x)
#define THREADS (block_size_x * block_size_y)

__kernel void matmul(__global float *C, __global const float *A, __global const float *B,
                     const int n) {
  __local float As[TM][tile_size_k];
  __local float Bs[tile_size_k][TN];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int lid = ty * block_size_x + tx;
  const int row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
  float acc[tile_size_y][tile_size_x];
  for (int y = 0; y < tile_size_y; y++)
    for (int x = 0; x < tile_size_x; x++)
      acc[y][x] = 0.0f;

  for (int k0 = 0; k0 < n; k0 += tile_size_k) {
    for (int i = lid; i < TM * tile_size_k; i += THREADS) {
      const int r = i / tile_size_k, c = i % tile_size_k;
      const int gr = row0 + r, gc = k0 + c;
      As[r][c] = (gr < n && gc < n) ? A[gr * n + gc] : 0.0f;
    }
    for (int i = lid; i < tile_size_k * TN; i += THREADS) {
      const int r = i / TN, c = i % TN;
      const int gr = k0 + r, gc = col0 + c;
      Bs[r][c] = (gr < n && gc < n) ? B[gr * n + gc] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < tile_size_k; k++) {
      float b[tile_size_x];
      for (int x = 0; x < tile_size_x; x++)
        b[x] = Bs[k][tx + x * block_size_x];
      for (int y = 0; y < tile_size_y; y++) {
        const float a = As[ty + y * block_size_y][k];
        for (int x = 0; x < tile_size_x; x++)
          acc[y][x] += a * b[x];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int y = 0; y < tile_size_y; y++) {
    const int r = row0 + ty + y * block_size_y;
    for (int x = 0; x < tile_size_x; x++) {
      const int c = col0 + tx + x * block_size_x;
      if (r < n && c < n)
        C[r * n + c] = acc[y][x];
    }
  }
}
