/* c = a + b for n floats, one element per work item. block_size_x (the work-group size)
 * is #defined by the tuner; the global size is n rounded up to a multiple of it. */
__kernel void vadd(__global float *c, __global const float *a, __global const float *b,
                   const int n) {
  const int i = get_global_id(0);
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}
