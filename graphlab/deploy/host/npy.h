/*
 * npy.h: read and write NumPy .npy files (format versions 1.0 to 3.0).
 *
 * Only what a host program exchanges with Python: little-endian, C-order arrays of the
 * primitive types Taichi ndarrays hold. Anything else (big-endian, Fortran order, structured
 * or object dtypes) is refused with a message that says how to re-save the array.
 */
#ifndef GRAPHLAB_NPY_H
#define GRAPHLAB_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef enum NpyDtype {
  NPY_F16, NPY_F32, NPY_F64,
  NPY_I8, NPY_I16, NPY_I32, NPY_I64,
  NPY_U8, NPY_U16, NPY_U32, NPY_U64,
  NPY_DTYPE_COUNT
} NpyDtype;

#define NPY_MAX_DIMS 16

typedef struct NpyArray {
  NpyDtype dtype;
  int ndim;                      /* 0 for a scalar saved with np.save(path, np.float32(1)) */
  int64_t shape[NPY_MAX_DIMS];
  size_t nbytes;                 /* element count times element size */
  void *data;                    /* malloc'ed, C order; release with npy_free */
} NpyArray;

/* "f32", "float32", "<f4" and 4 for NPY_F32, and so on. */
const char *npy_dtype_name(NpyDtype dtype);
const char *npy_dtype_numpy(NpyDtype dtype);
const char *npy_dtype_descr(NpyDtype dtype);
size_t npy_dtype_size(NpyDtype dtype);

/* Number of elements of a shape (1 for ndim 0). */
int64_t npy_count(int ndim, const int64_t *shape);

/* Bytes of a shape of `item`-byte elements into `out`. Returns 0, or -1 on a negative dim or an overflow. */
int npy_nbytes(int ndim, const int64_t *shape, size_t item, size_t *out);

/* Read `path` into `out`. Returns 0, or -1 with a message in `err`. */
int npy_read(const char *path, NpyArray *out, char *err, size_t err_size);

/* Write `array` to `path` as format 1.0. Returns 0, or -1 with a message in `err`. */
int npy_write(const char *path, const NpyArray *array, char *err, size_t err_size);

void npy_free(NpyArray *array);

#endif /* GRAPHLAB_NPY_H */
