/*
 * graphlab_runtime.c: the public API of graphlab_runtime.h: modules, graphs, values and the run.
 *
 * The run is the host program's (graphlab/deploy/host/main.c.in) made reentrant: segments are
 * launched as the module's compute graphs; a conditional or a while loop reads a one-element i32
 * flag the device wrote (on CUDA through the driver's 4-byte copy, elsewhere by mapping), a count
 * loop reads an i32 scalar; check_every reads the flag after every k-th iteration and a guarded loop
 * replays its last group from a saved copy, so it stops where reading every time would.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <taichi/taichi_cuda.h>

#include "gl_internal.h"

/* ---- helpers ---- */

gl_status gl_fail(char *error, gl_status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(error, GL_ERROR_SIZE, fmt, args);
  va_end(args);
  return status;
}

char *gl_strdup(const char *text) {
  size_t n = strlen(text) + 1;
  char *copy = malloc(n);
  if (copy != NULL) memcpy(copy, text, n);
  return copy;
}

char *gl_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *data = NULL;
  size_t used = 0, capacity = 0;
  for (;;) {
    if (used + 65536 + 1 > capacity) {
      capacity = capacity ? capacity * 2 : 65536 * 2;
      char *bigger = realloc(data, capacity);
      if (bigger == NULL) {
        free(data);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      data = bigger;
    }
    size_t got = fread(data + used, 1, 65536, f);
    used += got;
    if (got < 65536) break;
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(data);
    errno = EIO;
    return NULL;
  }
  data[used] = '\0';
  *size = used;
  return data;
}

static const char *const DTYPE_NAMES[] = {"f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"};
static const size_t DTYPE_SIZES[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
static const TiDataType TI_DTYPES[] = {TI_DATA_TYPE_F32, TI_DATA_TYPE_F64, TI_DATA_TYPE_I8,  TI_DATA_TYPE_I16,
                                       TI_DATA_TYPE_I32, TI_DATA_TYPE_I64, TI_DATA_TYPE_U8,  TI_DATA_TYPE_U16,
                                       TI_DATA_TYPE_U32, TI_DATA_TYPE_U64};

const char *gl_dtype_name(gl_dtype dtype) {
  return (unsigned)dtype < sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0] ? DTYPE_NAMES[dtype] : "an unknown dtype";
}

size_t gl_dtype_size(gl_dtype dtype) { return (unsigned)dtype < 10 ? DTYPE_SIZES[dtype] : 0; }

int gl_dtype_from_name(const char *name, gl_dtype *out) {
  for (int i = 0; i < 10; ++i)
    if (strcmp(DTYPE_NAMES[i], name) == 0) {
      *out = (gl_dtype)i;
      return 0;
    }
  return -1;
}

const char *gl_status_name(gl_status status) {
  switch (status) {
    case GL_OK: return "GL_OK";
    case GL_ERROR_ARGUMENT: return "GL_ERROR_ARGUMENT";
    case GL_ERROR_MANIFEST: return "GL_ERROR_MANIFEST";
    case GL_ERROR_TAMPERED: return "GL_ERROR_TAMPERED";
    case GL_ERROR_SHAPE: return "GL_ERROR_SHAPE";
    case GL_ERROR_TAICHI: return "GL_ERROR_TAICHI";
    case GL_ERROR_IO: return "GL_ERROR_IO";
    case GL_ERROR_MEMORY: return "GL_ERROR_MEMORY";
    case GL_ERROR_STATE: return "GL_ERROR_STATE";
    case GL_ERROR_UNSUPPORTED: return "GL_ERROR_UNSUPPORTED";
    case GL_ERROR_LOOP: return "GL_ERROR_LOOP";
  }
  return "an unknown gl_status";
}

static const char *ti_error_name(TiError error) {
  switch (error) {
    case TI_ERROR_SUCCESS: return "TI_ERROR_SUCCESS";
    case TI_ERROR_NOT_SUPPORTED: return "TI_ERROR_NOT_SUPPORTED";
    case TI_ERROR_CORRUPTED_DATA: return "TI_ERROR_CORRUPTED_DATA";
    case TI_ERROR_NAME_NOT_FOUND: return "TI_ERROR_NAME_NOT_FOUND";
    case TI_ERROR_INVALID_ARGUMENT: return "TI_ERROR_INVALID_ARGUMENT";
    case TI_ERROR_ARGUMENT_NULL: return "TI_ERROR_ARGUMENT_NULL";
    case TI_ERROR_ARGUMENT_OUT_OF_RANGE: return "TI_ERROR_ARGUMENT_OUT_OF_RANGE";
    case TI_ERROR_ARGUMENT_NOT_FOUND: return "TI_ERROR_ARGUMENT_NOT_FOUND";
    case TI_ERROR_INVALID_INTEROP: return "TI_ERROR_INVALID_INTEROP";
    case TI_ERROR_INVALID_STATE: return "TI_ERROR_INVALID_STATE";
    case TI_ERROR_INCOMPATIBLE_MODULE: return "TI_ERROR_INCOMPATIBLE_MODULE";
    case TI_ERROR_OUT_OF_MEMORY: return "TI_ERROR_OUT_OF_MEMORY";
    default: return "an unknown TiError";
  }
}

gl_status gl_ti_check(char *error, const char *call) {
  char message[1024];
  uint64_t size = sizeof message;
  message[0] = '\0';
  TiError code = ti_get_last_error(&size, message);
  if (code >= TI_ERROR_SUCCESS) return GL_OK;
  ti_set_last_error(TI_ERROR_SUCCESS, NULL); /* errors are sticky: the next call starts clean */
  return gl_fail(error, GL_ERROR_TAICHI, "%s failed: %s (%d): %s", call, ti_error_name(code), (int)code, message);
}


/* ---- modules ---- */

/* On CUDA, a flag's 4 bytes come through the driver's cuMemcpyDtoH (ti_map_memory would copy the whole
 * buffer out and back) and a guarded loop's copies through cuMemcpyDtoD, on Taichi's stream. The driver
 * is found when the module opens; none (another arch, no driver, GRAPHLAB_FLAG_READ=map): mapping. */
typedef int (*cuda_dtoh_fn)(void *dst, unsigned long long src, size_t nbytes);
typedef int (*cuda_dtod_fn)(unsigned long long dst, unsigned long long src, size_t nbytes);

static void find_cuda_driver(gl_module *m) {
  if (m->ti_arch != TI_ARCH_CUDA) return;
  const char *how = getenv("GRAPHLAB_FLAG_READ");
  if (how != NULL && strcmp(how, "map") == 0) return;
  m->cuda_driver = dlopen("libcuda.so.1", RTLD_NOW);
  if (m->cuda_driver == NULL) return;
  m->cuda_dtoh = dlsym(m->cuda_driver, "cuMemcpyDtoH_v2");
  m->cuda_dtod = dlsym(m->cuda_driver, "cuMemcpyDtoD_v2");
}

static gl_status check_marker(gl_module *m) {
  char path[4096];
  snprintf(path, sizeof path, "%s/module/metadata.%s", m->folder, m->ti_arch == TI_ARCH_VULKAN ? "json" : "tcb");
  if (access(path, R_OK) != 0) /* the x64 loader crashes on a folder that is no x64 module */
    return gl_fail(m->error, GL_ERROR_MANIFEST, "%s is missing: %s/module is not a %s AOT module folder", path,
                   m->folder, m->arch);
  return GL_OK;
}

static gl_status open_module(gl_module *m, const char *path, TiRuntime runtime) {
  m->folder = gl_strdup(path);
  if (m->folder == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  const char *slash = strrchr(path, '/');
  while (slash != NULL && slash[1] == '\0' && slash > path) { /* "out/mpm88/" names mpm88 */
    const char *prev = slash - 1;
    while (prev > path && *prev != '/') --prev;
    slash = *prev == '/' ? prev : NULL;
  }
  m->module_name = gl_strdup(slash ? slash + 1 : path);
  char *end = strchr(m->module_name, '/');
  if (end != NULL) *end = '\0';
  TRY(gl_read_manifest(m));
  TRY(check_marker(m));
  const char *capture = getenv("GRAPHLAB_CAPTURE");
  if (capture != NULL && capture[0] != '\0') {
    m->capture_folder = gl_strdup(capture);
    const char *segments = getenv("GRAPHLAB_CAPTURE_SEGMENTS");
    const char *limit = getenv("GRAPHLAB_CAPTURE_LIMIT");
    m->capture_flags = segments != NULL && strcmp(segments, "1") == 0 ? GL_CAPTURE_SEGMENTS : 0;
    m->capture_limit = limit != NULL ? strtoull(limit, NULL, 10) : 0;
  }
  ti_set_last_error(TI_ERROR_SUCCESS, NULL);
  if (runtime == TI_NULL_HANDLE) {
#ifdef GRAPHLAB_TI_LIB_DIR
    /* The LLVM runtimes load runtime_*.bc from TI_LIB_DIR; the build's default when it is unset. */
    if (m->ti_arch != TI_ARCH_VULKAN && getenv("TI_LIB_DIR") == NULL) setenv("TI_LIB_DIR", GRAPHLAB_TI_LIB_DIR, 0);
#endif
    runtime = ti_create_runtime(m->ti_arch, 0);
    TRY(gl_ti_check(m->error, "ti_create_runtime"));
    if (runtime == TI_NULL_HANDLE)
      return gl_fail(m->error, GL_ERROR_TAICHI, "ti_create_runtime(%s) gave no runtime (for x64, set TI_LIB_DIR to "
                     "taichi/_lib/c_api/runtime)", m->arch);
    m->owns_runtime = 1;
  }
  m->runtime = runtime;
  find_cuda_driver(m);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/module", m->folder);
  m->aot = ti_load_aot_module(runtime, dir);
  TRY(gl_ti_check(m->error, "ti_load_aot_module"));
  if (m->aot == TI_NULL_HANDLE) return gl_fail(m->error, GL_ERROR_TAICHI, "ti_load_aot_module(%s) gave no module", dir);
  return GL_OK;
}

gl_status gl_module_open(const char *path, TiRuntime runtime, gl_module **out) {
  if (out == NULL) return GL_ERROR_ARGUMENT;
  gl_module *m = calloc(1, sizeof *m);
  *out = m;
  if (m == NULL) return GL_ERROR_MEMORY;
  if (path == NULL) return gl_fail(m->error, GL_ERROR_ARGUMENT, "gl_module_open: path is NULL");
  return open_module(m, path, runtime);
}

static void free_graph(gl_graph *g);

void gl_module_close(gl_module *m) {
  if (m == NULL) return;
  for (int g = 0; g < m->graph_count && m->graphs != NULL; ++g) free_graph(m->graphs[g]);
  if (m->aot != TI_NULL_HANDLE) ti_destroy_aot_module(m->aot);
  if (m->owns_runtime) ti_destroy_runtime(m->runtime); /* frees the memory the graphs allocated */
  ti_set_last_error(TI_ERROR_SUCCESS, NULL);
  if (m->cuda_driver != NULL) dlclose(m->cuda_driver);
  gl_free_specs(m);
  free(m->graphs);
  free(m->folder);
  free(m->arch);
  free(m->graphlab_version);
  free(m->module_name);
  free(m->capture_folder);
  free(m);
}

const char *gl_module_error(const gl_module *m) { return m != NULL ? m->error : "no module (out of memory)"; }
TiRuntime gl_module_runtime(const gl_module *m) { return m != NULL ? m->runtime : TI_NULL_HANDLE; }
const char *gl_module_arch(const gl_module *m) { return m != NULL && m->arch != NULL ? m->arch : ""; }

/* ---- memory ---- */

static TiMemory allocate(gl_graph *g, size_t nbytes, int host_visible, gl_status *status) {
  TiMemoryAllocateInfo info;
  memset(&info, 0, sizeof info);
  info.size = nbytes ? nbytes : 4;
  info.host_read = info.host_write = host_visible ? TI_TRUE : TI_FALSE;
  info.usage = TI_MEMORY_USAGE_STORAGE_BIT;
  TiMemory memory = ti_allocate_memory(g->module->runtime, &info);
  *status = gl_ti_check(g->error, "ti_allocate_memory");
  return memory;
}

static void release(gl_graph *g, TiMemory memory) {
  if (memory == TI_NULL_HANDLE || g->module->ti_arch != TI_ARCH_VULKAN) return; /* LLVM archs: freed with the runtime */
  ti_free_memory(g->module->runtime, memory);
  ti_set_last_error(TI_ERROR_SUCCESS, NULL);
}

static gl_status copy_on_device(gl_graph *g, TiMemory dst, TiMemory src, size_t nbytes) {
  TiMemorySlice to = {dst, 0, nbytes}, from = {src, 0, nbytes};
  ti_copy_memory_device_to_device(g->module->runtime, &to, &from);
  return gl_ti_check(g->error, "ti_copy_memory_device_to_device");
}

static gl_status wait_device(gl_graph *g) {
  ti_wait(g->module->runtime);
  return gl_ti_check(g->error, "ti_wait");
}

/* Copy host bytes (or zeros when `data` is NULL) into device memory. */
static gl_status upload(gl_graph *g, TiMemory dst, const void *data, size_t nbytes) {
  gl_status s = GL_OK;
  TiMemory target = dst;
  if (!g->module->direct_mapping) {
    target = allocate(g, nbytes, 1, &s);
    TRY(s);
  }
  void *mapped = ti_map_memory(g->module->runtime, target);
  s = gl_ti_check(g->error, "ti_map_memory");
  if (s == GL_OK) {
    if (data != NULL) memcpy(mapped, data, nbytes);
    else memset(mapped, 0, nbytes);
    ti_unmap_memory(g->module->runtime, target);
    s = gl_ti_check(g->error, "ti_unmap_memory");
  }
  if (!g->module->direct_mapping) {
    if (s == GL_OK) s = copy_on_device(g, dst, target, nbytes);
    if (s == GL_OK) s = wait_device(g); /* the staging memory goes now */
    release(g, target);
  }
  return s;
}

static gl_status download_memory(gl_graph *g, TiMemory src, void *data, size_t nbytes) {
  gl_status s = GL_OK;
  TiMemory source = src;
  if (!g->module->direct_mapping) {
    source = allocate(g, nbytes, 1, &s);
    TRY(s);
    s = copy_on_device(g, source, src, nbytes);
  }
  if (s == GL_OK) s = wait_device(g);
  if (s == GL_OK) {
    const void *mapped = ti_map_memory(g->module->runtime, source);
    s = gl_ti_check(g->error, "ti_map_memory");
    if (s == GL_OK) {
      memcpy(data, mapped, nbytes);
      ti_unmap_memory(g->module->runtime, source);
      s = gl_ti_check(g->error, "ti_unmap_memory");
    }
  }
  if (source != src) release(g, source);
  return s;
}

static unsigned long long cuda_pointer(gl_graph *g, TiMemory memory, gl_status *s) {
  TiCudaMemoryInteropInfo info;
  memset(&info, 0, sizeof info);
  ti_export_cuda_memory(g->module->runtime, memory, &info);
  *s = gl_ti_check(g->error, "ti_export_cuda_memory");
  return (unsigned long long)(uintptr_t)info.ptr;
}

/* Copy in order with the launches before it: CUDA through the driver on Taichi's stream, Vulkan on
 * the device, x64 through the mappings after a wait. */
static gl_status copy_buffer(gl_graph *g, TiMemory dst, TiMemory src, size_t nbytes) {
  gl_status s = GL_OK;
  cuda_dtod_fn cuda_copy;
  *(void **)(&cuda_copy) = g->module->cuda_dtod;
  if (cuda_copy != NULL) {
    unsigned long long to = cuda_pointer(g, dst, &s);
    TRY(s);
    unsigned long long from = cuda_pointer(g, src, &s);
    TRY(s);
    int status = cuda_copy(to, from, nbytes);
    if (status != 0) return gl_fail(g->error, GL_ERROR_TAICHI, "graph '%s': a device copy failed (CUDA status %d)",
                                    g->spec->name, status);
    return GL_OK;
  }
  if (!g->module->direct_mapping) return copy_on_device(g, dst, src, nbytes);
  TRY(wait_device(g));
  const void *from = ti_map_memory(g->module->runtime, src);
  TRY(gl_ti_check(g->error, "ti_map_memory"));
  void *to = ti_map_memory(g->module->runtime, dst);
  TRY(gl_ti_check(g->error, "ti_map_memory"));
  memcpy(to, from, nbytes);
  ti_unmap_memory(g->module->runtime, dst);
  ti_unmap_memory(g->module->runtime, src);
  return gl_ti_check(g->error, "ti_unmap_memory");
}

/* The first i32 of a flag the device writes; the wait for the device is what a decision costs. */
static gl_status read_flag(gl_graph *g, int a, int32_t *flag) {
  TiMemory memory = g->values[a].memory;
  gl_status s = GL_OK;
  cuda_dtoh_fn cuda_copy;
  *(void **)(&cuda_copy) = g->module->cuda_dtoh;
  if (cuda_copy != NULL) {
    unsigned long long from = cuda_pointer(g, memory, &s);
    TRY(s);
    int status = cuda_copy(flag, from, sizeof *flag);
    if (status != 0) return gl_fail(g->error, GL_ERROR_TAICHI, "graph '%s': reading flag '%s' failed (CUDA status %d)",
                                    g->spec->name, g->spec->args[a].name, status);
    return GL_OK;
  }
  TiMemory source = memory;
  if (!g->module->direct_mapping) {
    if (g->flag_staging == TI_NULL_HANDLE) {
      g->flag_staging = allocate(g, sizeof *flag, 1, &s);
      TRY(s);
    }
    source = g->flag_staging;
    TRY(copy_on_device(g, source, memory, sizeof *flag));
  }
  TRY(wait_device(g));
  const void *mapped = ti_map_memory(g->module->runtime, source);
  TRY(gl_ti_check(g->error, "ti_map_memory"));
  memcpy(flag, mapped, sizeof *flag);
  ti_unmap_memory(g->module->runtime, source);
  return gl_ti_check(g->error, "ti_unmap_memory");
}

/* ---- graphs ---- */

static void free_graph(gl_graph *g) {
  if (g == NULL) return;
  for (int a = 0; a < g->spec->arg_count; ++a) {
    release(g, g->values[a].own);
    release(g, g->values[a].saved);
    if (g->values[a].image != TI_NULL_HANDLE) ti_free_image(g->module->runtime, g->values[a].image);
  }
  for (int s = 0; s < g->slot_count; ++s) release(g, g->slots[s].memory);
  release(g, g->flag_staging);
  for (int d = 0; d < g->dim_count; ++d) free(g->dims[d].name);
  gl_capture_abandon(g);
  free(g->dims);
  free(g->slots);
  free(g->values);
  free(g->segments);
  free(g->arguments);
  free(g->arg_offset);
  free(g->capture_folder);
  free(g);
}

static gl_status make_graph(gl_module *m, int index, gl_graph **out) {
  const graph_spec *spec = &m->specs[index];
  gl_graph *g = calloc(1, sizeof *g);
  if (g == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  g->module = m;
  g->spec = spec;
  g->values = calloc((size_t)spec->arg_count + 1, sizeof *g->values);
  g->segments = calloc((size_t)spec->segment_count + 1, sizeof *g->segments);
  g->arg_offset = calloc((size_t)spec->segment_count + 1, sizeof *g->arg_offset);
  int total = 0;
  for (int s = 0; s < spec->segment_count; ++s) total += spec->segments[s].arg_count;
  g->arguments = calloc((size_t)total + 1, sizeof *g->arguments);
  g->slots = calloc((size_t)spec->arg_count + 1, sizeof *g->slots);
  g->dims = calloc((size_t)m->dim_count + (size_t)spec->arg_count * GL_MAX_DIMS + 1, sizeof *g->dims);
  if (g->values == NULL || g->segments == NULL || g->arg_offset == NULL || g->arguments == NULL || g->slots == NULL ||
      g->dims == NULL) {
    free_graph(g);
    return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  }
  if (m->capture_folder != NULL) {
    g->capture_folder = gl_strdup(m->capture_folder);
    g->capture_flags = m->capture_flags;
    g->capture_limit = m->capture_limit;
  }
  for (int s = 0, offset = 0; s < spec->segment_count; ++s) {
    g->arg_offset[s] = offset;
    offset += spec->segments[s].arg_count;
    g->segments[s] = ti_get_aot_module_compute_graph(m->aot, spec->segments[s].name);
    gl_status st = gl_ti_check(m->error, "ti_get_aot_module_compute_graph");
    if (st != GL_OK || g->segments[s] == TI_NULL_HANDLE) {
      char taichi[GL_ERROR_SIZE]; /* the message is formatted into m->error: not from it */
      snprintf(taichi, sizeof taichi, "%s", st != GL_OK ? m->error : "no handle");
      gl_fail(m->error, GL_ERROR_TAICHI, "graph '%s': the module has no compute graph '%s' (%s); re-export it",
              spec->name, spec->segments[s].name, taichi);
      free_graph(g);
      return GL_ERROR_TAICHI;
    }
  }
  *out = g;
  return GL_OK;
}

gl_status gl_graph_get(gl_module *m, const char *name, gl_graph **out) {
  if (m == NULL || out == NULL) return GL_ERROR_ARGUMENT;
  *out = NULL;
  if (m->aot == TI_NULL_HANDLE) return gl_fail(m->error, GL_ERROR_STATE, "gl_graph_get: the module did not open");
  if (name == NULL) return gl_fail(m->error, GL_ERROR_ARGUMENT, "gl_graph_get: name is NULL");
  for (int i = 0; i < m->graph_count; ++i) {
    if (strcmp(m->specs[i].name, name) != 0) continue;
    if (m->graphs[i] == NULL) TRY(make_graph(m, i, &m->graphs[i]));
    *out = m->graphs[i];
    return GL_OK;
  }
  char names[1024] = "";
  for (int i = 0; i < m->graph_count; ++i) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "", m->specs[i].name);
  }
  return gl_fail(m->error, GL_ERROR_ARGUMENT, "%s/manifest.json has no graph '%s' (it has %s)", m->folder, name, names);
}

int gl_module_graph_count(const gl_module *m) { return m != NULL ? m->graph_count : 0; }

const char *gl_module_graph_name(const gl_module *m, int index) {
  return m != NULL && index >= 0 && index < m->graph_count ? m->specs[index].name : NULL;
}

int gl_graph_arg_count(const gl_graph *g) { return g != NULL ? g->spec->arg_count : 0; }

gl_status gl_graph_arg_info(const gl_graph *g, int index, gl_arg_info *out) {
  if (g == NULL || out == NULL || index < 0 || index >= g->spec->arg_count) return GL_ERROR_ARGUMENT;
  const arg_spec *arg = &g->spec->args[index];
  memset(out, 0, sizeof *out);
  out->name = arg->name;
  out->kind = (gl_arg_kind)arg->kind; /* the same order as arg_kind and arg_role */
  out->role = (gl_arg_role)arg->role;
  out->dtype = arg->dtype;
  out->ndim = arg->ndim;
  for (int d = 0; d < GL_MAX_FIELD_DIMS; ++d) {
    out->dim[d] = d < arg->ndim ? arg->dim[d] : NULL;
    out->fixed[d] = d < arg->ndim ? arg->fixed[d] : -1;
  }
  out->elem_ndim = arg->elem_ndim;
  out->elem[0] = arg->elem[0];
  out->elem[1] = arg->elem[1];
  return GL_OK;
}

const char *gl_graph_error(const gl_graph *g) { return g != NULL ? g->error : "no graph (NULL)"; }

static int find(const gl_graph *g, const char *name) {
  for (int a = 0; a < g->spec->arg_count; ++a)
    if (strcmp(g->spec->args[a].name, name) == 0) return a;
  return -1;
}

static gl_status lookup(gl_graph *g, const char *name, const char *call, int *out) {
  if (name == NULL) return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: name is NULL", call);
  *out = find(g, name);
  if (*out >= 0) return GL_OK;
  char names[1024] = "";
  for (int a = 0; a < g->spec->arg_count; ++a) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s'%s'", a ? ", " : "", g->spec->args[a].name);
  }
  return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: graph '%s' has no arg '%s' (its args: %s)", call, g->spec->name,
                 name, names);
}

static const char *kind_name(arg_kind kind) {
  static const char *const names[] = {"scalar", "ndarray", "matrix", "texture", "rw_texture"};
  return names[kind];
}

/* Check a given array's dtype and shape against the arg (the symbolic dims are checked at run). */
static gl_status check_array(gl_graph *g, int a, gl_dtype dtype, int ndim, const int64_t *shape, const char *call) {
  const arg_spec *arg = &g->spec->args[a];
  if (!GL_IS_ARRAY(arg->kind))
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s' of graph '%s' is a %s, not an ndarray; use "
                   "gl_graph_set_scalar", call, arg->name, g->spec->name, kind_name(arg->kind));
  if (GL_IS_TEXTURE(arg->kind) && dtype != GL_F32)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s' of graph '%s' is a %s of %s; pass float32 texels (its %d "
                   "dims, then %lld channel(s)), got %s", call, arg->name, g->spec->name, kind_name(arg->kind), arg->fmt,
                   arg->ndim, (long long)arg->elem[0], gl_dtype_name(dtype));
  if (dtype != arg->dtype)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s' of graph '%s' is %s, got %s; convert the data to %s", call,
                   arg->name, g->spec->name, gl_dtype_name(arg->dtype), gl_dtype_name(dtype), gl_dtype_name(arg->dtype));
  if (ndim != arg->ndim + arg->elem_ndim || (ndim > 0 && shape == NULL))
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s' of graph '%s' has %d dims (%d field dims, then %d element "
                   "dims), got %d", call, arg->name, g->spec->name, arg->ndim + arg->elem_ndim, arg->ndim,
                   arg->elem_ndim, ndim);
  for (int e = 0; e < arg->elem_ndim; ++e)
    if (shape[arg->ndim + e] != arg->elem[e])
      return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s' of graph '%s': shape[%d] is %lld, but its element shape "
                     "needs %lld", call, arg->name, g->spec->name, arg->ndim + e, (long long)shape[arg->ndim + e],
                     (long long)arg->elem[e]);
  for (int d = 0; d < arg->ndim; ++d) {
    if (shape[d] < 0 || shape[d] > (int64_t)UINT32_MAX)
      return gl_fail(g->error, GL_ERROR_ARGUMENT, "%s: arg '%s': shape[%d] is %lld, outside 0..%lu (Taichi shapes are "
                     "32-bit)", call, arg->name, d, (long long)shape[d], (unsigned long)UINT32_MAX);
    if (arg->fixed[d] >= 0 && shape[d] != arg->fixed[d])
      return gl_fail(g->error, GL_ERROR_SHAPE, "%s: arg '%s' of graph '%s': shape[%d] is %lld, but the graph fixes it "
                     "to %lld", call, arg->name, g->spec->name, d, (long long)shape[d], (long long)arg->fixed[d]);
  }
  return GL_OK;
}

static size_t count_bytes(const arg_spec *arg, const int64_t *shape) {
  size_t n = gl_dtype_size(arg->dtype);
  for (int d = 0; d < arg->ndim + arg->elem_ndim; ++d) n *= (size_t)shape[d];
  return n;
}

static void set_shape(arg_value *v, const arg_spec *arg, const int64_t *shape) {
  memcpy(v->shape, shape, sizeof(int64_t) * (size_t)(arg->ndim + arg->elem_ndim));
  v->nbytes = count_bytes(arg, shape);
  v->sized = 1;
}

/* The arg's own allocation, at least `nbytes` (a larger one is reused; x64 cannot free). */
static gl_status own_memory(gl_graph *g, int a, size_t nbytes) {
  arg_value *v = &g->values[a];
  if (v->own != TI_NULL_HANDLE && v->own_bytes >= nbytes) return GL_OK;
  release(g, v->own);
  gl_status s = GL_OK;
  v->own = allocate(g, nbytes, g->module->direct_mapping, &s);
  v->own_bytes = s == GL_OK ? nbytes : 0;
  return s;
}

gl_status gl_graph_set_array(gl_graph *g, const char *name, const void *data, gl_dtype dtype, int ndim,
                             const int64_t *shape) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_set_array", &a));
  TRY(check_array(g, a, dtype, ndim, shape, "gl_graph_set_array"));
  if (data == NULL) return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_array: data for '%s' is NULL", name);
  const arg_spec *arg = &g->spec->args[a];
  size_t nbytes = count_bytes(arg, shape);
  TRY(own_memory(g, a, nbytes));
  arg_value *v = &g->values[a];
  TRY(upload(g, v->own, data, nbytes));
  set_shape(v, arg, shape);
  v->given = GIVEN_HOST;
  v->memory = v->own;
  return GL_OK;
}

gl_status gl_graph_set_memory(gl_graph *g, const char *name, TiMemory memory, gl_dtype dtype, int ndim,
                              const int64_t *shape) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_set_memory", &a));
  TRY(check_array(g, a, dtype, ndim, shape, "gl_graph_set_memory"));
  if (memory == TI_NULL_HANDLE)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_memory: memory for '%s' is TI_NULL_HANDLE", name);
  arg_value *v = &g->values[a];
  set_shape(v, &g->spec->args[a], shape);
  v->given = GIVEN_MEMORY;
  v->memory = memory;
  return GL_OK;
}

gl_status gl_graph_set_scalar(gl_graph *g, const char *name, gl_dtype dtype, const void *value) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_set_scalar", &a));
  const arg_spec *arg = &g->spec->args[a];
  if (arg->kind != KIND_SCALAR && arg->kind != KIND_MATRIX)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_scalar: arg '%s' of graph '%s' is a %s; use "
                   "gl_graph_set_array or gl_graph_set_memory", name, g->spec->name, kind_name(arg->kind));
  if (dtype != arg->dtype)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_scalar: arg '%s' of graph '%s' is %s, got %s; pass a %s",
                   name, g->spec->name, gl_dtype_name(arg->dtype), gl_dtype_name(dtype), gl_dtype_name(arg->dtype));
  if (value == NULL) return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_scalar: value for '%s' is NULL", name);
  size_t n = gl_dtype_size(dtype);
  for (int e = 0; e < arg->elem_ndim; ++e) n *= (size_t)arg->elem[e];
  if (n > sizeof g->values[a].value)
    return gl_fail(g->error, GL_ERROR_UNSUPPORTED, "gl_graph_set_scalar: arg '%s' is over 128 bytes", name);
  memcpy(g->values[a].value, value, n);
  g->values[a].value_set = 1;
  return GL_OK;
}

gl_status gl_graph_set_dim(gl_graph *g, const char *dim, int64_t size) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  if (dim == NULL) return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_dim: dim is NULL");
  if (size < 0 || size > (int64_t)UINT32_MAX)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_dim: dim '%s' = %lld is outside 0..%lu", dim,
                   (long long)size, (unsigned long)UINT32_MAX);
  int known = 0;
  for (int a = 0; a < g->spec->arg_count; ++a)
    for (int d = 0; d < g->spec->args[a].ndim; ++d)
      known |= g->spec->args[a].dim[d] != NULL && strcmp(g->spec->args[a].dim[d], dim) == 0;
  if (!known) return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_set_dim: no arg of graph '%s' has dim '%s'",
                             g->spec->name, dim);
  for (int d = 0; d < g->dim_count; ++d)
    if (strcmp(g->dims[d].name, dim) == 0) {
      g->dims[d].value = size;
      return GL_OK;
    }
  g->dims[g->dim_count].name = gl_strdup(dim);
  g->dims[g->dim_count++].value = size;
  return GL_OK;
}

/* ---- preparing a run: dims, relations, allocations, the launch arguments ---- */

typedef struct binding {
  const char *dim;
  int64_t value;
  int arg, axis; /* where it came from; arg -1: gl_graph_set_dim or the manifest */
} binding;

static int find_binding(binding *b, int n, const char *dim) {
  for (int i = 0; i < n; ++i)
    if (strcmp(b[i].dim, dim) == 0) return i;
  return -1;
}

static gl_status bind_dims(gl_graph *g, binding *b, int *n) {
  const graph_spec *spec = g->spec;
  for (int a = 0; a < spec->arg_count; ++a) {
    const arg_value *v = &g->values[a];
    if (v->given == GIVEN_NONE) continue;
    for (int d = 0; d < spec->args[a].ndim; ++d) {
      const char *dim = spec->args[a].dim[d];
      if (dim == NULL) continue;
      int i = find_binding(b, *n, dim);
      if (i < 0) {
        b[*n] = (binding){dim, v->shape[d], a, d};
        ++*n;
      } else if (b[i].value != v->shape[d]) {
        return gl_fail(g->error, GL_ERROR_SHAPE, "graph '%s': dim '%s' is %lld from arg '%s' shape[%d] but %lld from arg "
                       "'%s' shape[%d]; give arrays whose sizes agree", spec->name, dim, (long long)b[i].value,
                       spec->args[b[i].arg].name, b[i].axis, (long long)v->shape[d], spec->args[a].name, d);
      }
    }
  }
  for (int d = 0; d < g->dim_count; ++d) { /* gl_graph_set_dim, for what no given array sets */
    int i = find_binding(b, *n, g->dims[d].name);
    if (i < 0) b[(*n)++] = (binding){g->dims[d].name, g->dims[d].value, -1, 0};
    else if (b[i].value != g->dims[d].value)
      return gl_fail(g->error, GL_ERROR_SHAPE, "graph '%s': gl_graph_set_dim set dim '%s' to %lld, but arg '%s' "
                     "shape[%d] is %lld", spec->name, g->dims[d].name, (long long)g->dims[d].value,
                     spec->args[b[i].arg].name, b[i].axis, (long long)b[i].value);
  }
  for (int d = 0; d < g->module->dim_count; ++d) /* the manifest's defaults: the notebook's sizes */
    if (find_binding(b, *n, g->module->dims[d].name) < 0)
      b[(*n)++] = (binding){g->module->dims[d].name, g->module->dims[d].value, -1, 0};
  return GL_OK;
}

static gl_status size_missing(gl_graph *g, const binding *b, int n) {
  const graph_spec *spec = g->spec;
  for (int a = 0; a < spec->arg_count; ++a) {
    const arg_spec *arg = &spec->args[a];
    arg_value *v = &g->values[a];
    if (arg->kind == KIND_SCALAR || arg->kind == KIND_MATRIX) {
      if (!v->value_set)
        return gl_fail(g->error, GL_ERROR_ARGUMENT, "graph '%s': no value for %s '%s'; call gl_graph_set_scalar(graph, "
                       "\"%s\", GL_%c%s, &value) first", spec->name, kind_name(arg->kind), arg->name, arg->name,
                       gl_dtype_name(arg->dtype)[0] - 32, gl_dtype_name(arg->dtype) + 1);
      continue;
    }
    if (v->given != GIVEN_NONE) continue;
    if (arg->role == ROLE_INPUT)
      return gl_fail(g->error, GL_ERROR_ARGUMENT, "graph '%s': arg '%s' is an input; give it with gl_graph_set_array or "
                     "gl_graph_set_memory before running", spec->name, arg->name);
    int64_t shape[GL_MAX_DIMS + 2];
    for (int d = 0; d < arg->ndim; ++d) {
      int i = arg->dim[d] != NULL ? find_binding((binding *)b, n, arg->dim[d]) : -1;
      if (arg->fixed[d] >= 0) shape[d] = arg->fixed[d];
      else if (i >= 0) shape[d] = b[i].value;
      else
        return gl_fail(g->error, GL_ERROR_SHAPE, "graph '%s': cannot size arg '%s': shape[%d] is %s%s%s; give '%s' with "
                       "gl_graph_set_array%s%s%s", spec->name, arg->name, d, arg->dim[d] ? "dim '" : "unknown",
                       arg->dim[d] ? arg->dim[d] : "", arg->dim[d] ? "'" : "", arg->name,
                       arg->dim[d] ? " or call gl_graph_set_dim(graph, \"" : "", arg->dim[d] ? arg->dim[d] : "",
                       arg->dim[d] ? "\", N)" : "");
    }
    for (int e = 0; e < arg->elem_ndim; ++e) shape[arg->ndim + e] = arg->elem[e];
    size_t nbytes = count_bytes(arg, shape);
    int same = v->sized && v->memory != TI_NULL_HANDLE && v->nbytes == nbytes;
    set_shape(v, arg, shape);
    if (same) continue; /* kept from the last run: state carries over */
    if (arg->slot >= 0 && arg->kind == KIND_NDARRAY) continue;
    TRY(own_memory(g, a, nbytes));
    v->memory = v->own;
    TRY(upload(g, v->memory, NULL, nbytes)); /* outputs, state and temps start at zero */
  }
  /* temps of one memory-plan slot share one allocation, as large as the largest */
  for (int a = 0; a < spec->arg_count; ++a) {
    const arg_spec *arg = &spec->args[a];
    arg_value *v = &g->values[a];
    if (arg->slot < 0 || v->given != GIVEN_NONE || arg->kind != KIND_NDARRAY) continue;
    slot_memory *slot = NULL;
    for (int s = 0; s < g->slot_count; ++s)
      if (g->slots[s].slot == arg->slot) slot = &g->slots[s];
    if (slot == NULL) {
      slot = &g->slots[g->slot_count++];
      slot->slot = arg->slot;
    }
    size_t need = v->nbytes;
    for (int b2 = 0; b2 < spec->arg_count; ++b2)
      if (spec->args[b2].slot == arg->slot && g->values[b2].given == GIVEN_NONE && g->values[b2].nbytes > need)
        need = g->values[b2].nbytes;
    if (slot->memory == TI_NULL_HANDLE || slot->bytes < need) {
      release(g, slot->memory);
      gl_status s = GL_OK;
      slot->memory = allocate(g, need, g->module->direct_mapping, &s);
      TRY(s);
      slot->bytes = need;
      TRY(upload(g, slot->memory, NULL, need));
    }
    v->memory = slot->memory;
  }
  return GL_OK;
}

/* Refuse sizes that break a shape relation, before anything runs (as load_module and gl.verify do). */
static gl_status check_relations(gl_graph *g) {
  const graph_spec *spec = g->spec;
  for (int r = 0; r < spec->relation_count; ++r) {
    const relation_spec *rel = &spec->relations[r];
    int runs = 1;
    for (int k = 0; k < rel->guard_count && runs; ++k) {
      int ga = rel->guards[2 * k], axis = rel->guards[2 * k + 1];
      for (int d = 0; d < spec->args[ga].ndim; ++d)
        if ((axis < 0 || axis == d) && g->values[ga].shape[d] == 0) runs = 0;
    }
    long long need = rel->source >= 0 ? (long long)g->values[rel->source].shape[rel->source_axis] : rel->minimum;
    long long have = (long long)g->values[rel->arg].shape[rel->axis];
    if (!runs || have >= need) continue;
    const char *name = spec->args[rel->arg].name;
    if (rel->source >= 0)
      return gl_fail(g->error, GL_ERROR_SHAPE, "graph '%s': dispatch '%s' indexes %s, so '%s' needs shape[%d] >= "
                     "shape[%d] of '%s'; got %lld < %lld, and Taichi would read and write past its end. Give '%s' at "
                     "least %lld along axis %d", spec->name, rel->node, rel->access, name, rel->axis, rel->source_axis,
                     spec->args[rel->source].name, have, need, name, need, rel->axis);
    return gl_fail(g->error, GL_ERROR_SHAPE, "graph '%s': dispatch '%s' indexes %s, so '%s' needs shape[%d] >= %lld (a "
                   "constant loop bound); got %lld, and Taichi would read and write past its end. Give '%s' at least "
                   "%lld along axis %d", spec->name, rel->node, rel->access, name, rel->axis, need, have, name, need,
                   rel->axis);
  }
  return GL_OK;
}

/* ---- textures: images filled from and read back into the args' float32 texel buffers ---- */

static TiTexture texture_of(const gl_graph *g, int a) {
  static const TiImageDimension dimensions[] = {TI_IMAGE_DIMENSION_1D, TI_IMAGE_DIMENSION_2D, TI_IMAGE_DIMENSION_3D};
  const arg_spec *arg = &g->spec->args[a];
  const arg_value *v = &g->values[a];
  TiTexture texture;
  memset(&texture, 0, sizeof texture);
  texture.image = v->image;
  texture.dimension = dimensions[arg->ndim - 1];
  texture.extent.width = (uint32_t)v->shape[0];
  texture.extent.height = arg->ndim > 1 ? (uint32_t)v->shape[1] : 1;
  texture.extent.depth = arg->ndim > 2 ? (uint32_t)v->shape[2] : 1;
  texture.extent.array_layer_count = 1;
  texture.format = arg->format;
  return texture;
}

/* An image of each texture arg's size (kept while the size stays). */
static gl_status allocate_images(gl_graph *g) {
  for (int a = 0; a < g->spec->arg_count; ++a) {
    const arg_spec *arg = &g->spec->args[a];
    arg_value *v = &g->values[a];
    if (!GL_IS_TEXTURE(arg->kind)) continue;
    if (v->image != TI_NULL_HANDLE && memcmp(v->image_shape, v->shape, sizeof(int64_t) * (size_t)arg->ndim) == 0)
      continue;
    if (v->image != TI_NULL_HANDLE) ti_free_image(g->module->runtime, v->image);
    v->image = TI_NULL_HANDLE;
    TiTexture texture = texture_of(g, a);
    TiImageAllocateInfo info;
    memset(&info, 0, sizeof info);
    info.dimension = texture.dimension;
    info.extent = texture.extent;
    info.mip_level_count = 1;
    info.format = arg->format;
    info.usage = TI_IMAGE_USAGE_STORAGE_BIT | TI_IMAGE_USAGE_SAMPLED_BIT;
    v->image = ti_allocate_image(g->module->runtime, &info);
    TRY(gl_ti_check(g->error, "ti_allocate_image"));
    memcpy(v->image_shape, v->shape, sizeof(int64_t) * (size_t)arg->ndim);
  }
  return GL_OK;
}

/* Launch the module's copy graph graphlab_upload_<fmt>_<n>d (buffer to image) or _download_ (back) for
 * every texture arg; Taichi's C API has no copy between memory and an image. */
static gl_status copy_textures(gl_graph *g, int to_image) {
  for (int a = 0; a < g->spec->arg_count; ++a) {
    const arg_spec *arg = &g->spec->args[a];
    if (!GL_IS_TEXTURE(arg->kind)) continue;
    char name[64];
    snprintf(name, sizeof name, "graphlab_%s_%s_%dd", to_image ? "upload" : "download", arg->fmt, arg->ndim);
    TiComputeGraph graph = ti_get_aot_module_compute_graph(g->module->aot, name);
    gl_status s = gl_ti_check(g->error, "ti_get_aot_module_compute_graph");
    if (s != GL_OK || graph == TI_NULL_HANDLE)
      return gl_fail(g->error, GL_ERROR_TAICHI, "graph '%s': texture '%s': the module lacks its copy graph '%s'; "
                     "re-export it", g->spec->name, arg->name, name);
    TiNamedArgument args[2];
    memset(args, 0, sizeof args);
    args[0].name = to_image ? "src" : "dst";
    args[0].argument.type = TI_ARGUMENT_TYPE_NDARRAY;
    TiNdArray *texels = &args[0].argument.value.ndarray;
    texels->memory = g->values[a].memory;
    texels->shape.dim_count = (uint32_t)(arg->ndim + 1);
    for (int d = 0; d <= arg->ndim; ++d) texels->shape.dims[d] = (uint32_t)g->values[a].shape[d];
    texels->elem_type = TI_DATA_TYPE_F32;
    args[1].name = "tex";
    args[1].argument.type = TI_ARGUMENT_TYPE_TEXTURE;
    args[1].argument.value.texture = texture_of(g, a);
    ti_launch_compute_graph(g->module->runtime, graph, 2, args);
    TRY(gl_ti_check(g->error, "ti_launch_compute_graph(texture copy)"));
  }
  return GL_OK;
}

/* The named arguments of each segment. Taichi 1.7.4 takes 32-bit scalars as TI_ARGUMENT_TYPE_F32 or
 * _I32; TI_ARGUMENT_TYPE_SCALAR accepts only 16-bit types; matrices go as TI_ARGUMENT_TYPE_TENSOR. */
static gl_status build_arguments(gl_graph *g) {
  const graph_spec *spec = g->spec;
  for (int s = 0; s < spec->segment_count; ++s) {
    for (int i = 0; i < spec->segments[s].arg_count; ++i) {
      int a = spec->segments[s].args[i];
      const arg_spec *arg = &spec->args[a];
      const arg_value *v = &g->values[a];
      TiNamedArgument *named = &g->arguments[g->arg_offset[s] + i];
      memset(named, 0, sizeof *named);
      named->name = arg->name;
      TiArgument *value = &named->argument;
      TiDataType ti_dtype = TI_DTYPES[arg->dtype];
      if (GL_IS_TEXTURE(arg->kind)) {
        value->type = TI_ARGUMENT_TYPE_TEXTURE;
        value->value.texture = texture_of(g, a);
      } else if (arg->kind == KIND_NDARRAY) {
        value->type = TI_ARGUMENT_TYPE_NDARRAY;
        value->value.ndarray.memory = v->memory;
        value->value.ndarray.shape.dim_count = (uint32_t)arg->ndim;
        for (int d = 0; d < arg->ndim; ++d) value->value.ndarray.shape.dims[d] = (uint32_t)v->shape[d];
        value->value.ndarray.elem_shape.dim_count = (uint32_t)arg->elem_ndim;
        for (int e = 0; e < arg->elem_ndim; ++e) value->value.ndarray.elem_shape.dims[e] = (uint32_t)arg->elem[e];
        value->value.ndarray.elem_type = ti_dtype;
      } else if (arg->kind == KIND_MATRIX) {
        value->type = TI_ARGUMENT_TYPE_TENSOR;
        value->value.tensor.type = ti_dtype;
        value->value.tensor.contents.length = (uint32_t)(arg->elem[0] * (arg->elem_ndim > 1 ? arg->elem[1] : 1));
        memcpy(value->value.tensor.contents.data.x8, v->value, sizeof value->value.tensor.contents.data);
      } else if (arg->dtype == GL_F32) {
        value->type = TI_ARGUMENT_TYPE_F32;
        memcpy(&value->value.f32, v->value, 4);
      } else if (arg->dtype == GL_I32) {
        value->type = TI_ARGUMENT_TYPE_I32;
        memcpy(&value->value.i32, v->value, 4);
      } else if (arg->dtype == GL_I16 || arg->dtype == GL_U16) {
        value->type = TI_ARGUMENT_TYPE_SCALAR;
        value->value.scalar.type = ti_dtype;
        memcpy(&value->value.scalar.value.x16, v->value, 2);
      } else {
        return gl_fail(g->error, GL_ERROR_UNSUPPORTED, "graph '%s': scalar '%s' is %s, which Taichi 1.7.4's C API cannot "
                       "pass (f32, i32, i16, u16 only); make it a 1-element ndarray", spec->name, arg->name,
                       gl_dtype_name(arg->dtype));
      }
    }
  }
  return GL_OK;
}

static gl_status prepare(gl_graph *g) {
  binding *b = calloc((size_t)g->spec->arg_count * GL_MAX_DIMS + (size_t)g->dim_count + (size_t)g->module->dim_count + 1,
                      sizeof *b);
  if (b == NULL) return gl_fail(g->error, GL_ERROR_MEMORY, "out of memory");
  int n = 0;
  gl_status s = bind_dims(g, b, &n);
  if (s == GL_OK) s = size_missing(g, b, n);
  free(b);
  TRY(s);
  TRY(check_relations(g));
  TRY(allocate_images(g));
  return build_arguments(g);
}

/* ---- running ---- */

static gl_status run_block(gl_graph *g, int start, int count);

/* The scope of decisions inside a body: "outer[1]/", "solve/iter[3]/", "branch/then/" (graphlab.model.ids). */
static size_t push_scope(gl_graph *g, const char *node, const char *fmt, long long k, const char *taken) {
  size_t before = g->scope_len;
  if (!g->tracking) return before;
  const char *name = strrchr(node, '/') ? strrchr(node, '/') + 1 : node;
  int n = taken != NULL ? snprintf(g->scope + before, sizeof g->scope - before, "%s/%s/", name, taken)
                        : snprintf(g->scope + before, sizeof g->scope - before, fmt, name, k);
  if (n > 0 && (size_t)n < sizeof g->scope - before) g->scope_len += (size_t)n;
  return before;
}

static void pop_scope(gl_graph *g, size_t before) {
  g->scope_len = before;
  g->scope[before] = '\0';
}

static gl_status decide(gl_graph *g, const op_spec *op, const char *kind, int32_t value, const char *outcome) {
  if (!g->tracking) return GL_OK;
  char scope[2300];
  const char *name = strrchr(op->node, '/') ? strrchr(op->node, '/') + 1 : op->node;
  snprintf(scope, sizeof scope, "%.*s%s", (int)g->scope_len, g->scope, name);
  gl_decision d = {op->node, scope, kind, value, outcome};
  if (g->on_decision != NULL) g->on_decision(g->user, &d);
  return g->capture != NULL ? gl_capture_decision(g, &d) : GL_OK;
}

/* A control event for gl_graph_on_event: a conditional's branch, or a finished loop's iterations. */
static void tell(gl_graph *g, const op_spec *op, const char *branch, long long iterations, int limit_reached) {
  if (g->on_event == NULL) return;
  gl_event e = {op->node, branch != NULL ? "cond" : "loop", branch, iterations, limit_reached};
  g->on_event(g->event_user, &e);
}

/* The last flag read of a while loop: its decision, then its event. */
static gl_status loop_done(gl_graph *g, const op_spec *op, int32_t flag, long long iterations) {
  TRY(decide(g, op, "loop", flag, flag != 0 ? "limit" : "done"));
  tell(g, op, NULL, iterations, flag != 0);
  return GL_OK;
}

static gl_status run_cond(gl_graph *g, const op_spec *op) {
  int32_t flag;
  TRY(read_flag(g, op->flag, &flag));
  const char *taken = flag != 0 ? "then" : op->other >= 0 ? "else" : "skip";
  TRY(decide(g, op, "cond", flag, taken));
  tell(g, op, taken, 0, 0);
  if (flag == 0 && op->other < 0) return GL_OK;
  size_t before = push_scope(g, op->node, NULL, 0, taken);
  gl_status s = flag != 0 ? run_block(g, op->body, op->body_len) : run_block(g, op->other, op->other_len);
  pop_scope(g, before);
  return s;
}

static gl_status iteration(gl_graph *g, const op_spec *op, long long k) {
  size_t before = push_scope(g, op->node, "%s/iter[%lld]/", k, NULL);
  gl_status s = run_block(g, op->body, op->body_len);
  pop_scope(g, before);
  return s;
}

/* Copy a guarded loop's writable buffers aside (restore = 0) or back (restore = 1). */
static gl_status save_or_restore(gl_graph *g, const op_spec *op, int restore) {
  for (int i = 0; i < op->saves_len; ++i) {
    arg_value *v = &g->values[op->saves[i]];
    if (v->saved == TI_NULL_HANDLE || v->saved_bytes < v->nbytes) {
      release(g, v->saved);
      gl_status s = GL_OK;
      v->saved = allocate(g, v->nbytes, g->module->direct_mapping, &s);
      TRY(s);
      v->saved_bytes = v->nbytes;
    }
    TRY(restore ? copy_buffer(g, v->memory, v->saved, v->nbytes) : copy_buffer(g, v->saved, v->memory, v->nbytes));
  }
  return GL_OK;
}

/* A count loop runs its body ARGS[count] times. A while loop runs the body, then reads the flag: it
 * stops when the flag is 0 or after max_iter iterations. With check_every = k the flag is read after
 * iterations k, 2k, ... and after max_iter; a guarded loop then replays the last group from saved
 * buffers reading every time, so it stops where reading every iteration would. */
static gl_status run_loop(gl_graph *g, const op_spec *op) {
  if (op->count >= 0) {
    int32_t count;
    memcpy(&count, g->values[op->count].value, sizeof count);
    for (long long k = 0; k < count; ++k) TRY(iteration(g, op, k));
    tell(g, op, NULL, count > 0 ? count : 0, 0);
    return GL_OK;
  }
  long long done = 0, max_iter = op->times > 0 ? op->times : 1, every = op->check_every > 1 ? op->check_every : 1;
  for (;;) {
    long long group = every - done % every;
    if (group > max_iter - done) group = max_iter - done;
    int guard = op->guarded && group > 1;
    if (guard) TRY(save_or_restore(g, op, 0));
    for (long long i = 0; i < group; ++i) TRY(iteration(g, op, done + i));
    done += group;
    int32_t flag;
    TRY(read_flag(g, op->flag, &flag));
    if (flag != 0 && done < max_iter) {
      TRY(decide(g, op, "loop", flag, "again"));
      continue;
    }
    if (guard && flag == 0) { /* replay the group reading every time */
      long long start = done - group;
      TRY(save_or_restore(g, op, 1));
      for (long long step = 0; step < group; ++step) {
        TRY(iteration(g, op, start + step));
        TRY(read_flag(g, op->flag, &flag));
        if (flag == 0 || start + step + 1 >= max_iter) return loop_done(g, op, flag, start + step + 1);
        TRY(decide(g, op, "loop", flag, "again"));
      }
      return gl_fail(g->error, GL_ERROR_LOOP, "graph '%s': guarded loop '%s': its flag read 0 after iteration %lld, but "
                     "replaying iterations %lld-%lld from the saved buffers never cleared it, so the body is not safe to "
                     "repeat; export it without guarded=True", g->spec->name, op->node, done, start + 1, done);
    }
    return loop_done(g, op, flag, done);
  }
}

static gl_status run_block(gl_graph *g, int start, int count) {
  for (int i = start; i < start + count; ++i) {
    const op_spec *op = &g->spec->ops[i];
    if (op->kind == OP_SEGMENT) {
      int s = op->segment;
      ti_launch_compute_graph(g->module->runtime, g->segments[s], (uint32_t)g->spec->segments[s].arg_count,
                              &g->arguments[g->arg_offset[s]]);
      TRY(gl_ti_check(g->error, "ti_launch_compute_graph"));
      if (g->capture != NULL) TRY(gl_capture_segment(g, s));
    } else if (op->kind == OP_REPEAT) {
      for (long long k = 0; k < op->times; ++k) {
        size_t before = push_scope(g, op->node, "%s[%lld]/", k, NULL);
        gl_status s = run_block(g, op->body, op->body_len);
        pop_scope(g, before);
        TRY(s);
      }
    } else if (op->kind == OP_COND) {
      TRY(run_cond(g, op));
    } else {
      TRY(run_loop(g, op));
    }
  }
  return GL_OK;
}

gl_status gl_graph_run(gl_graph *g, gl_decision_fn on_decision, void *user) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  TRY(prepare(g));
  g->on_decision = on_decision;
  g->user = user;
  g->tracking = on_decision != NULL || g->capture_folder != NULL;
  g->scope_len = 0;
  g->scope[0] = '\0';
  g->last_capture[0] = '\0';
  if (g->capture_folder != NULL) TRY(gl_capture_begin(g));
  gl_status s = copy_textures(g, 1);
  if (s == GL_OK) s = run_block(g, g->spec->body, g->spec->body_len);
  if (s == GL_OK) s = copy_textures(g, 0);
  if (s == GL_OK) s = wait_device(g);
  if (g->capture != NULL) {
    if (s == GL_OK) s = gl_capture_end(g);
    else gl_capture_abandon(g);
  }
  return s;
}

gl_status gl_graph_prepare(gl_graph *g) { return g != NULL ? prepare(g) : GL_ERROR_ARGUMENT; }

gl_status gl_graph_on_event(gl_graph *g, gl_event_fn on_event, void *user) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  g->on_event = on_event;
  g->event_user = user;
  return GL_OK;
}

/* ---- reading back ---- */

gl_status gl_download(gl_graph *g, int a, void *data) {
  return download_memory(g, g->values[a].memory, data, g->values[a].nbytes);
}

gl_status gl_graph_arg_bytes(gl_graph *g, const char *name, size_t *bytes) {
  if (g == NULL || bytes == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_arg_bytes", &a));
  if (!GL_IS_ARRAY(g->spec->args[a].kind))
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_arg_bytes: arg '%s' is not an ndarray", name);
  if (!g->values[a].sized) TRY(prepare(g));
  *bytes = g->values[a].nbytes;
  return GL_OK;
}

gl_status gl_graph_arg_shape(gl_graph *g, const char *name, int64_t shape[GL_MAX_FIELD_DIMS + 2], int *ndim) {
  if (g == NULL || shape == NULL || ndim == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_arg_shape", &a));
  const arg_spec *arg = &g->spec->args[a];
  if (!GL_IS_ARRAY(arg->kind))
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_arg_shape: arg '%s' is not an ndarray", name);
  if (!g->values[a].sized) TRY(prepare(g));
  *ndim = arg->ndim + arg->elem_ndim;
  memcpy(shape, g->values[a].shape, sizeof(int64_t) * (size_t)*ndim);
  return GL_OK;
}

gl_status gl_graph_get_array(gl_graph *g, const char *name, void *data, size_t bytes) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_get_array", &a));
  arg_value *v = &g->values[a];
  if (!GL_IS_ARRAY(g->spec->args[a].kind))
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_get_array: arg '%s' of graph '%s' is a %s, not an ndarray",
                   name, g->spec->name, kind_name(g->spec->args[a].kind));
  if (!v->sized || v->memory == TI_NULL_HANDLE)
    return gl_fail(g->error, GL_ERROR_STATE, "gl_graph_get_array: arg '%s' of graph '%s' has no values yet; give it "
                   "or run the graph first", name, g->spec->name);
  if (data == NULL || bytes != v->nbytes)
    return gl_fail(g->error, GL_ERROR_ARGUMENT, "gl_graph_get_array: arg '%s' of graph '%s' holds %zu bytes, but the "
                   "buffer given has %zu%s", name, g->spec->name, v->nbytes, bytes, data == NULL ? " (NULL)" : "");
  return gl_download(g, a, data);
}

gl_status gl_graph_get_memory(gl_graph *g, const char *name, TiMemory *memory) {
  if (g == NULL || memory == NULL) return GL_ERROR_ARGUMENT;
  int a;
  TRY(lookup(g, name, "gl_graph_get_memory", &a));
  if (g->values[a].memory == TI_NULL_HANDLE) TRY(prepare(g));
  *memory = g->values[a].memory;
  return GL_OK;
}

gl_status gl_graph_capture(gl_graph *g, const char *folder, unsigned flags, uint64_t limit_bytes) {
  if (g == NULL) return GL_ERROR_ARGUMENT;
  free(g->capture_folder);
  g->capture_folder = folder != NULL ? gl_strdup(folder) : NULL;
  g->capture_flags = flags;
  g->capture_limit = limit_bytes;
  return GL_OK;
}

const char *gl_graph_last_capture(const gl_graph *g) { return g != NULL ? g->last_capture : ""; }
