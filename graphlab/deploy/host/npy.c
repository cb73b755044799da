/*
 * npy.c: see npy.h. The format: a 6-byte magic "\x93NUMPY", a major and a minor version byte,
 * the header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then a Python dict
 * literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (8, 2), } padded with spaces
 * and a newline, then the raw data.
 */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name, *numpy, *descr;
  size_t size;
} DTYPES[NPY_DTYPE_COUNT] = {
    {"f16", "float16", "<f2", 2}, {"f32", "float32", "<f4", 4}, {"f64", "float64", "<f8", 8},
    {"i8", "int8", "|i1", 1},     {"i16", "int16", "<i2", 2},   {"i32", "int32", "<i4", 4},
    {"i64", "int64", "<i8", 8},   {"u8", "uint8", "|u1", 1},    {"u16", "uint16", "<u2", 2},
    {"u32", "uint32", "<u4", 4},  {"u64", "uint64", "<u8", 8},
};

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

const char *npy_dtype_name(NpyDtype dtype) { return DTYPES[dtype].name; }
const char *npy_dtype_numpy(NpyDtype dtype) { return DTYPES[dtype].numpy; }
const char *npy_dtype_descr(NpyDtype dtype) { return DTYPES[dtype].descr; }
size_t npy_dtype_size(NpyDtype dtype) { return DTYPES[dtype].size; }

int64_t npy_count(int ndim, const int64_t *shape) {
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) count *= shape[i];
  return count;
}

int npy_nbytes(int ndim, const int64_t *shape, size_t item, size_t *out) {
  uint64_t total = item;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && total > (uint64_t)INT64_MAX / (uint64_t)shape[i]) return -1;
    total *= (uint64_t)shape[i];
  }
  if (total > (uint64_t)SIZE_MAX) return -1;
  *out = (size_t)total;
  return 0;
}

static int fail(char *err, size_t err_size, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, err_size, fmt, args);
  va_end(args);
  return -1;
}

/* The text after 'key': in the header dict, or NULL. */
static const char *find_key(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *at = strstr(header, quoted);
  if (at == NULL) return NULL;
  at += strlen(quoted);
  while (*at == ' ' || *at == ':') ++at;
  return at;
}

static int parse_header(const char *header, NpyArray *out, char *err, size_t err_size) {
  const char *descr = find_key(header, "descr");
  const char *order = find_key(header, "fortran_order");
  const char *shape = find_key(header, "shape");
  if (descr == NULL || order == NULL || shape == NULL || *descr != '\'' || *shape != '(')
    return fail(err, err_size, "not a .npy header: %s", header);
  int found = -1;
  for (int i = 0; i < NPY_DTYPE_COUNT; ++i) {
    size_t n = strlen(DTYPES[i].descr);
    /* numpy writes '|i1' for one-byte types; '<i1' means the same. */
    if (strncmp(descr + 1, DTYPES[i].descr, n) == 0 && descr[1 + n] == '\'') found = i;
    if (DTYPES[i].size == 1 && descr[1] == '<' && strncmp(descr + 2, DTYPES[i].descr + 1, 2) == 0 &&
        descr[4] == '\'')
      found = i;
  }
  if (found < 0) {
    int len = (int)strcspn(descr + 1, "'");
    if (descr[1] == '>')
      return fail(err, err_size, "big-endian dtype '%.*s'; save a.astype(a.dtype.newbyteorder('<'))", len,
                  descr + 1);
    return fail(err, err_size, "dtype '%.*s' is not one of f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64", len,
                descr + 1);
  }
  if (strncmp(order, "False", 5) != 0)
    return fail(err, err_size, "Fortran-order data; save np.ascontiguousarray(a) instead");
  out->dtype = (NpyDtype)found;
  out->ndim = 0;
  for (const char *p = shape + 1; *p != ')';) {
    if (isdigit((unsigned char)*p)) {
      if (out->ndim == NPY_MAX_DIMS) return fail(err, err_size, "more than %d dims", NPY_MAX_DIMS);
      out->shape[out->ndim++] = strtoll(p, (char **)&p, 10);
    } else if (*p == ',' || *p == ' ' || *p == 'L') {
      ++p;
    } else {
      return fail(err, err_size, "bad shape in header: %s", header);
    }
  }
  if (npy_nbytes(out->ndim, out->shape, DTYPES[found].size, &out->nbytes) != 0)
    return fail(err, err_size, "shape too large: its byte size overflows: %s", header);
  return 0;
}

int npy_read(const char *path, NpyArray *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE *file = fopen(path, "rb");
  if (file == NULL) return fail(err, err_size, "cannot open (%s)", strerror(errno));
  unsigned char head[12];
  char *header = NULL;
  int status = -1;
  if (fread(head, 1, 10, file) != 10 || memcmp(head, MAGIC, 6) != 0) {
    fail(err, err_size, "not a .npy file (no \\x93NUMPY magic); write it with numpy.save");
    goto done;
  }
  size_t header_len = head[8] | (size_t)head[9] << 8;
  if (head[6] >= 2) { /* versions 2.0 and 3.0 have a 4-byte header length */
    if (fread(head + 10, 1, 2, file) != 2) goto truncated;
    header_len |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  }
  header = malloc(header_len + 1);
  if (header == NULL || fread(header, 1, header_len, file) != header_len) goto truncated;
  header[header_len] = '\0';
  if (parse_header(header, out, err, err_size) != 0) goto done;
  out->data = malloc(out->nbytes ? out->nbytes : 1);
  if (out->data == NULL) {
    fail(err, err_size, "out of memory for %zu bytes", out->nbytes);
    goto done;
  }
  if (fread(out->data, 1, out->nbytes, file) != out->nbytes) goto truncated;
  status = 0;
  goto done;
truncated:
  fail(err, err_size, "file is truncated");
done:
  free(header);
  fclose(file);
  if (status != 0) npy_free(out);
  return status;
}

int npy_write(const char *path, const NpyArray *array, char *err, size_t err_size) {
  char header[64 + 24 * NPY_MAX_DIMS];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   DTYPES[array->dtype].descr);
  for (int i = 0; i < array->ndim; ++i)
    n += snprintf(header + n, sizeof header - (size_t)n, "%s%lld", i ? ", " : "", (long long)array->shape[i]);
  n += snprintf(header + n, sizeof header - (size_t)n, array->ndim == 1 ? ",), }" : "), }"); /* (8,) is a tuple */
  /* Pad with spaces so that the data starts on a 64-byte boundary, as numpy does. */
  while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
  header[n++] = '\n';
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                              (unsigned char)(n >> 8)};
  FILE *file = fopen(path, "wb");
  if (file == NULL) return fail(err, err_size, "cannot create (%s)", strerror(errno));
  int ok = fwrite(prefix, 1, 10, file) == 10 && fwrite(header, 1, (size_t)n, file) == (size_t)n &&
           fwrite(array->data, 1, array->nbytes, file) == array->nbytes;
  if (fclose(file) != 0) ok = 0;
  return ok ? 0 : fail(err, err_size, "write failed (%s)", strerror(errno));
}

void npy_free(NpyArray *array) {
  free(array->data);
  array->data = NULL;
}
