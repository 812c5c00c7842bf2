/* A 2-D image filter: out = the "valid" cross-correlation of an image with an
 * fh x fw filter (out has h x w points; the image (h + fh - 1) x (w + fw - 1)).
 *
 * A work group of block_size_x x block_size_y items computes a TH x TW tile of out
 * (TH = block_size_y * tile_size_y, TW = block_size_x * tile_size_x); each item computes
 * tile_size_y x tile_size_x points, strided by the block size so that neighbouring items
 * touch neighbouring columns. With use_local the group first copies the image window its
 * tile needs into local memory (rows padded by `padding` floats against bank conflicts);
 * without it every item reads the image from global memory. unroll_filter asks the
 * compiler to unroll the loop over the filter's columns. The filter sits in constant
 * memory. The parameters and sizes are #defined by the tuner (see conv2d.yaml).
 */
#define TW (block_size_x * tile_size_x)
#define TH (block_size_y * tile_size_y)
#define IW (w + fw - 1)
#define IH (h + fh - 1)

__kernel void conv2d(__global float *out, __global const float *image,
                     __constant float *filter) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int x0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH;
  float acc[tile_size_y][tile_size_x];
  for (int y = 0; y < tile_size_y; y++)
    for (int x = 0; x < tile_size_x; x++)
      acc[y][x] = 0.0f;

#if use_local
  __local float window[TH + fh - 1][TW + fw - 1 + padding];
  for (int i = ty; i < TH + fh - 1; i += block_size_y)
    for (int j = tx; j < TW + fw - 1; j += block_size_x) {
      const int gy = y0 + i, gx = x0 + j;
      window[i][j] = (gy < IH && gx < IW) ? image[gy * IW + gx] : 0.0f;
    }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif

  for (int i = 0; i < fh; i++) {
#if unroll_filter
#pragma unroll
#endif
    for (int j = 0; j < fw; j++) {
      const float f = filter[i * fw + j];
      for (int y = 0; y < tile_size_y; y++)
        for (int x = 0; x < tile_size_x; x++) {
#if use_local
          acc[y][x] += f * window[ty + y * block_size_y + i][tx + x * block_size_x + j];
#else
          const int gy = y0 + ty + y * block_size_y + i, gx = x0 + tx + x * block_size_x + j;
          acc[y][x] += f * ((gy < IH && gx < IW) ? image[gy * IW + gx] : 0.0f);
#endif
        }
    }
  }

  for (int y = 0; y < tile_size_y; y++)
    for (int x = 0; x < tile_size_x; x++) {
      const int oy = y0 + ty + y * block_size_y, ox = x0 + tx + x * block_size_x;
      if (oy < h && ox < w)
        out[oy * w + ox] = acc[y][x];
    }
}
