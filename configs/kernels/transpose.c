/* B = transpose(A) for an n x n matrix of floats, in tiles of tile_i x tile_j elements;
 * the innermost loop is unrolled unroll_j times. tile_i, tile_j and unroll_j are
 * #defined by the tuner (see transpose.yaml). */
#define GPAUTOTUNE_PRAGMA(x) _Pragma(#x)
#define GPAUTOTUNE_UNROLL(n) GPAUTOTUNE_PRAGMA(GCC unroll n)

static inline int min_int(int a, int b) { return a < b ? a : b; }

void transpose(float *restrict B, const float *restrict A, int n) {
  for (int ii = 0; ii < n; ii += tile_i) {
    for (int jj = 0; jj < n; jj += tile_j) {
      const int i_end = min_int(ii + tile_i, n), j_end = min_int(jj + tile_j, n);
      for (int i = ii; i < i_end; i++) {
        GPAUTOTUNE_UNROLL(unroll_j)
        for (int j = jj; j < j_end; j++) {
          B[(long) j * n + i] = A[(long) i * n + j];
        }
      }
    }
  }
}
