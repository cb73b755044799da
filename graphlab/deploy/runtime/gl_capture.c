/*
 * gl_capture.c: record one run of a graph as a graphlab.capture/1 folder (see docs of gl.open_capture).
 *
 *   <folder>/<graph>-<n>/capture.json      written last, through a temporary name and a rename
 *                        inputs/<arg>.npy   every arg before the run (scalars as 0-d arrays)
 *                        segments/<k>/...   optional: what the k-th executed segment wrote
 *                        outputs/<arg>.npy  every ndarray after the run
 *
 * A wrong result on a user's device comes back as this folder, and the notebook replays it. The size
 * bound stops recording segments (inputs and outputs are always written) and says so ("truncated").
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gl_internal.h"

typedef struct text {
  char *data;
  size_t len, capacity;
  int failed;
} text;

struct gl_capture {
  char dir[4096];
  text decisions, segments;
  int decision_count, order;
  uint64_t segment_bytes;
  int truncated;
};

static void put(text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->len + n + 1 > t->capacity) {
    size_t capacity = (t->capacity ? t->capacity : 256) * 2 + n;
    char *bigger = realloc(t->data, capacity);
    if (bigger == NULL) {
      t->failed = 1;
      return;
    }
    t->data = bigger;
    t->capacity = capacity;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void putf(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void putf(text *t, const char *fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n > 0) put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* A JSON string literal (UTF-8 passes through; controls, quotes and backslashes are escaped). */
static void put_string(text *t, const char *s) {
  puts_(t, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      char esc[3] = {'\\', (char)*p, 0};
      puts_(t, esc);
    } else if (*p < 0x20) {
      putf(t, "\\u%04x", *p);
    } else {
      put(t, (const char *)p, 1);
    }
  }
  puts_(t, "\"");
}

static const char *descr(gl_dtype dtype) {
  static const char *const d[] = {"<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"};
  return d[dtype];
}

/* Write an array as .npy 1.0 (little-endian, C order; the header padded to 64 bytes). */
static gl_status write_npy(gl_graph *g, const char *path, gl_dtype dtype, int ndim, const int64_t *shape,
                           const void *data, size_t nbytes) {
  char header[512];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr(dtype));
  for (int d = 0; d < ndim; ++d)
    n += snprintf(header + n, sizeof header - (size_t)n, "%s%lld%s", d ? " " : "", (long long)shape[d],
                  ndim == 1 || d + 1 < ndim ? "," : "");
  n += snprintf(header + n, sizeof header - (size_t)n, "), }");
  while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
  header[n++] = '\n';
  unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xFF), (unsigned char)(n >> 8)};
  FILE *f = fopen(path, "wb");
  if (f == NULL) return gl_fail(g->error, GL_ERROR_IO, "capture: cannot write %s (%s)", path, strerror(errno));
  int ok = fwrite(preamble, 1, 10, f) == 10 && fwrite(header, 1, (size_t)n, f) == (size_t)n &&
           (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
  ok = fclose(f) == 0 && ok;
  return ok ? GL_OK : gl_fail(g->error, GL_ERROR_IO, "capture: writing %s failed (%s)", path, strerror(errno));
}

/* ---- platform: what device and driver ran the capture ---- */

/* Taichi's TiVulkanRuntimeInteropInfo and the head of VkPhysicalDeviceProperties, spelled without the
 * Vulkan headers (which the library does not need otherwise; both layouts are frozen by their ABIs). */
typedef void (*vk_void_fn)(void);
typedef vk_void_fn (*vk_get_instance_proc_addr_fn)(void *instance, const char *name);
typedef struct vk_interop {
  vk_get_instance_proc_addr_fn get_instance_proc_addr;
  uint32_t api_version;
  void *instance, *physical_device, *device, *compute_queue;
  uint32_t compute_queue_family_index;
  void *graphics_queue;
  uint32_t graphics_queue_family_index;
} vk_interop;
typedef void (*vk_get_properties_fn)(void *physical_device, void *properties);
void TI_API_CALL ti_export_vulkan_runtime(TiRuntime runtime, vk_interop *interop_info);

/* CUDA: Taichi's C API names no device or driver, so ask the CUDA driver Taichi loaded (dlopen, no link
 * dependency): cuDeviceGetName of the current context's device (else device 0) and cuDriverGetVersion.
 * Without libcuda.so.1 both stay "" and `note` says why. Untested here: the tests have no GPU. */
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_int_fn)(int *out);
typedef int (*cu_device_get_fn)(int *device, int ordinal);
typedef int (*cu_name_fn)(char *name, int size, int device);

static void cuda_names(gl_module *m, char *device, size_t device_size, char *driver, size_t driver_size,
                       const char **note) {
  void *lib = m->cuda_driver != NULL ? m->cuda_driver : dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == NULL) {
    *note = "libcuda.so.1 could not be loaded, so the device and driver are unknown";
    return;
  }
  cu_init_fn init;
  cu_int_fn version, current;
  cu_device_get_fn get;
  cu_name_fn name;
  *(void **)(&init) = dlsym(lib, "cuInit");
  *(void **)(&version) = dlsym(lib, "cuDriverGetVersion");
  *(void **)(&current) = dlsym(lib, "cuCtxGetDevice");
  *(void **)(&get) = dlsym(lib, "cuDeviceGet");
  *(void **)(&name) = dlsym(lib, "cuDeviceGetName");
  int v = 0, dev = 0;
  if (version != NULL && version(&v) == 0) snprintf(driver, driver_size, "cuda %d.%d", v / 1000, (v % 1000) / 10);
  if (init != NULL) init(0);
  int found = current != NULL && current(&dev) == 0;
  if (!found) found = get != NULL && get(&dev, 0) == 0;
  char text[256] = "";
  if (found && name != NULL && name(text, (int)sizeof text, dev) == 0) snprintf(device, device_size, "%s", text);
  if (device[0] == '\0' || driver[0] == '\0') *note = "the CUDA driver did not name the device or its version";
  if (lib != m->cuda_driver) dlclose(lib);
}

/* The device and driver names: the Vulkan physical device's name and its driver's version number, as
 * Vulkan reports them through Taichi's runtime interop; CUDA's from its driver; "cpu" and "" on x64.
 * `note` says why a name is missing, when the library knows. */
static void platform_names(gl_module *m, char *device, size_t device_size, char *driver, size_t driver_size,
                           const char **note) {
  snprintf(device, device_size, "%s", m->ti_arch == TI_ARCH_X64 ? "cpu" : "");
  driver[0] = '\0';
  *note = NULL;
  if (m->ti_arch == TI_ARCH_CUDA) cuda_names(m, device, device_size, driver, driver_size, note);
  if (m->ti_arch != TI_ARCH_VULKAN) return;
  vk_interop interop;
  memset(&interop, 0, sizeof interop);
  ti_export_vulkan_runtime(m->runtime, &interop);
  if (ti_get_last_error(0, NULL) != TI_ERROR_SUCCESS || interop.get_instance_proc_addr == NULL) {
    ti_set_last_error(TI_ERROR_SUCCESS, NULL);
    return;
  }
  vk_get_properties_fn get_properties;
  vk_void_fn fn = interop.get_instance_proc_addr(interop.instance, "vkGetPhysicalDeviceProperties");
  memcpy(&get_properties, &fn, sizeof fn);
  if (get_properties == NULL) return;
  /* VkPhysicalDeviceProperties: apiVersion, driverVersion, vendorID, deviceID, deviceType (4 bytes
   * each), then deviceName[256]; the rest (limits, ~800 bytes) fits the buffer. */
  union {
    uint64_t align;
    unsigned char bytes[4096];
  } properties;
  memset(&properties, 0, sizeof properties);
  get_properties(interop.physical_device, properties.bytes);
  uint32_t head[5];
  memcpy(head, properties.bytes, sizeof head);
  snprintf(device, device_size, "%.*s", 255, (const char *)properties.bytes + 20);
  snprintf(driver, driver_size, "vulkan %u.%u.%u, driver version 0x%08x (vendor 0x%04x)", (head[0] >> 22) & 0x7fu,
           (head[0] >> 12) & 0x3ffu, head[0] & 0xfffu, head[1], head[2]);
}

/* Write arg `a` (downloaded, or its scalar value) to dir/<name>.npy; relative path into *rel. */
static gl_status write_arg(gl_graph *g, int a, const char *sub, uint64_t *bytes) {
  const arg_spec *arg = &g->spec->args[a];
  const arg_value *v = &g->values[a];
  char path[4200];
  snprintf(path, sizeof path, "%s/%s/%s.npy", g->capture->dir, sub, arg->name);
  if (!GL_IS_ARRAY(arg->kind)) {
    size_t n = gl_dtype_size(arg->dtype);
    for (int e = 0; e < arg->elem_ndim; ++e) n *= (size_t)arg->elem[e];
    return write_npy(g, path, arg->dtype, arg->elem_ndim, arg->elem, v->value, n);
  }
  void *data = malloc(v->nbytes ? v->nbytes : 1);
  if (data == NULL) return gl_fail(g->error, GL_ERROR_MEMORY, "capture: out of memory for '%s'", arg->name);
  gl_status s = gl_download(g, a, data);
  if (s == GL_OK) s = write_npy(g, path, arg->dtype, arg->ndim + arg->elem_ndim, v->shape, data, v->nbytes);
  free(data);
  if (bytes != NULL) *bytes += v->nbytes;
  return s;
}

static gl_status make_dir(gl_graph *g, const char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) return GL_OK;
  return gl_fail(g->error, GL_ERROR_IO, "capture: cannot create %s (%s)", path, strerror(errno));
}

/* mkdir -p of the capture root. */
static gl_status make_root(gl_graph *g, const char *folder) {
  char path[4096];
  snprintf(path, sizeof path, "%s", folder);
  for (char *p = path + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    gl_status s = make_dir(g, path);
    *p = '/';
    if (s != GL_OK) return s;
  }
  return make_dir(g, path);
}

gl_status gl_capture_begin(gl_graph *g) {
  gl_capture_abandon(g);
  gl_status s = make_root(g, g->capture_folder);
  if (s != GL_OK) return s;
  gl_capture *c = calloc(1, sizeof *c);
  if (c == NULL) return gl_fail(g->error, GL_ERROR_MEMORY, "capture: out of memory");
  for (int n = 0;; ++n) { /* the first free <graph>-<n>: earlier runs and processes keep theirs */
    snprintf(c->dir, sizeof c->dir, "%s/%s-%d", g->capture_folder, g->spec->name, n);
    if (mkdir(c->dir, 0777) == 0) break;
    if (errno != EEXIST || n > 1000000) {
      gl_fail(g->error, GL_ERROR_IO, "capture: cannot create %s (%s)", c->dir, strerror(errno));
      free(c);
      return GL_ERROR_IO;
    }
  }
  g->capture = c;
  char sub[4200];
  static const char *const subs[] = {"inputs", "outputs", "segments"};
  for (int i = 0; i < ((g->capture_flags & GL_CAPTURE_SEGMENTS) ? 3 : 2); ++i) {
    snprintf(sub, sizeof sub, "%s/%s", c->dir, subs[i]);
    if ((s = make_dir(g, sub)) != GL_OK) return s;
  }
  for (int a = 0; a < g->spec->arg_count; ++a)
    if ((s = write_arg(g, a, "inputs", NULL)) != GL_OK) return s;
  return GL_OK;
}

gl_status gl_capture_decision(gl_graph *g, const gl_decision *d) {
  text *t = &g->capture->decisions;
  puts_(t, g->capture->decision_count++ ? ",\n    {" : "\n    {");
  puts_(t, "\"node\": ");
  put_string(t, d->node);
  puts_(t, ", \"scope\": ");
  put_string(t, d->scope);
  putf(t, ", \"kind\": \"%s\", \"value\": %d, \"outcome\": \"%s\"}", d->kind, (int)d->value, d->outcome);
  return t->failed ? gl_fail(g->error, GL_ERROR_MEMORY, "capture: out of memory") : GL_OK;
}

gl_status gl_capture_segment(gl_graph *g, int segment) {
  gl_capture *c = g->capture;
  if (!(g->capture_flags & GL_CAPTURE_SEGMENTS) || c->truncated) return GL_OK;
  const segment_spec *seg = &g->spec->segments[segment];
  uint64_t need = 0;
  for (int i = 0; i < seg->arg_count; ++i) {
    const arg_spec *arg = &g->spec->args[seg->args[i]];
    if (arg->kind == KIND_NDARRAY && arg->written) need += g->values[seg->args[i]].nbytes;
  }
  if (g->capture_limit > 0 && c->segment_bytes + need > g->capture_limit) {
    c->truncated = 1;
    return GL_OK;
  }
  char sub[64], path[4200];
  snprintf(sub, sizeof sub, "segments/%04d", c->order);
  snprintf(path, sizeof path, "%s/%s", c->dir, sub);
  gl_status made = make_dir(g, path);
  if (made != GL_OK) return made;
  text *t = &c->segments;
  puts_(t, c->order ? ",\n    {" : "\n    {");
  putf(t, "\"order\": %d, \"segment\": %d, \"graph\": ", c->order, segment);
  put_string(t, seg->name);
  puts_(t, ", \"outputs\": {");
  int first = 1;
  for (int i = 0; i < seg->arg_count; ++i) {
    int a = seg->args[i];
    const arg_spec *arg = &g->spec->args[a];
    int repeated = 0;
    for (int j = 0; j < i; ++j) repeated |= seg->args[j] == a;
    if (arg->kind != KIND_NDARRAY || !arg->written || repeated) continue;
    gl_status s = write_arg(g, a, sub, &c->segment_bytes);
    if (s != GL_OK) return s;
    puts_(t, first ? "" : ", ");
    first = 0;
    put_string(t, arg->name);
    puts_(t, ": ");
    char rel[300];
    snprintf(rel, sizeof rel, "%s/%s.npy", sub, arg->name);
    put_string(t, rel);
  }
  puts_(t, "}}");
  ++c->order;
  return t->failed ? gl_fail(g->error, GL_ERROR_MEMORY, "capture: out of memory") : GL_OK;
}

static void put_files(text *t, gl_graph *g, const char *sub, int arrays_only) {
  int first = 1;
  puts_(t, "{");
  for (int a = 0; a < g->spec->arg_count; ++a) {
    const arg_spec *arg = &g->spec->args[a];
    if (arrays_only && arg->kind != KIND_NDARRAY) continue;
    puts_(t, first ? "" : ", ");
    first = 0;
    put_string(t, arg->name);
    puts_(t, ": ");
    char rel[300];
    snprintf(rel, sizeof rel, "%s/%s.npy", sub, arg->name);
    put_string(t, rel);
  }
  puts_(t, "}");
}

gl_status gl_capture_end(gl_graph *g) {
  gl_capture *c = g->capture;
  gl_module *m = g->module;
  gl_status s = GL_OK;
  for (int a = 0; a < g->spec->arg_count && s == GL_OK; ++a)
    if (g->spec->args[a].kind == KIND_NDARRAY) s = write_arg(g, a, "outputs", NULL);
  if (s != GL_OK) {
    gl_capture_abandon(g);
    return s;
  }
  text t = {0};
  puts_(&t, "{\n  \"format\": \"graphlab.capture/1\",\n  \"graph\": ");
  put_string(&t, g->spec->name);
  putf(&t, ",\n  \"manifest_sha256\": \"%s\",\n  \"module\": ", m->manifest_sha256);
  put_string(&t, m->module_name);
  puts_(&t, ",\n  \"platform\": {\"arch\": ");
  put_string(&t, m->arch);
  char device[256], driver[128];
  const char *note;
  platform_names(m, device, sizeof device, driver, sizeof driver, &note);
  puts_(&t, ", \"device\": ");
  put_string(&t, device);
  puts_(&t, ", \"driver\": ");
  put_string(&t, driver);
  if (note != NULL) {
    puts_(&t, ", \"note\": ");
    put_string(&t, note);
  }
  putf(&t, ", \"taichi_c_api_version\": %u, \"graphlab_version\": ", (unsigned)ti_get_version());
  put_string(&t, m->graphlab_version);
  puts_(&t, "},\n  \"dims\": {");
  int dims = 0;
  for (int a = 0; a < g->spec->arg_count; ++a)
    for (int d = 0; d < g->spec->args[a].ndim; ++d) {
      const char *dim = g->spec->args[a].dim[d];
      int seen = 0;
      for (int b = 0; b < a && dim != NULL; ++b)
        for (int e = 0; e < g->spec->args[b].ndim; ++e)
          seen |= g->spec->args[b].dim[e] != NULL && strcmp(g->spec->args[b].dim[e], dim) == 0;
      for (int e = 0; e < d && dim != NULL; ++e)
        seen |= g->spec->args[a].dim[e] != NULL && strcmp(g->spec->args[a].dim[e], dim) == 0;
      if (dim == NULL || seen) continue;
      puts_(&t, dims++ ? ", " : "");
      put_string(&t, dim);
      putf(&t, ": %lld", (long long)g->values[a].shape[d]);
    }
  puts_(&t, "},\n  \"inputs\": ");
  put_files(&t, g, "inputs", 0);
  puts_(&t, ",\n  \"decisions\": [");
  if (c->decisions.len) put(&t, c->decisions.data, c->decisions.len);
  puts_(&t, c->decision_count ? "\n  ],\n  \"segments\": [" : "],\n  \"segments\": [");
  if (c->segments.len) put(&t, c->segments.data, c->segments.len);
  puts_(&t, c->order ? "\n  ],\n  \"outputs\": " : "],\n  \"outputs\": ");
  put_files(&t, g, "outputs", 1);
  putf(&t, ",\n  \"limit_bytes\": %llu,\n  \"truncated\": %s\n}\n", (unsigned long long)g->capture_limit,
       c->truncated ? "true" : "false");
  if (t.failed) s = gl_fail(g->error, GL_ERROR_MEMORY, "capture: out of memory");
  char tmp[4200], final[4200];
  snprintf(tmp, sizeof tmp, "%s/.capture.json.tmp", c->dir);
  snprintf(final, sizeof final, "%s/capture.json", c->dir);
  if (s == GL_OK) {
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL && fwrite(t.data, 1, t.len, f) == t.len;
    ok = f != NULL && fclose(f) == 0 && ok;
    if (!ok || rename(tmp, final) != 0)
      s = gl_fail(g->error, GL_ERROR_IO, "capture: cannot write %s (%s)", final, strerror(errno));
  }
  free(t.data);
  if (s == GL_OK) snprintf(g->last_capture, sizeof g->last_capture, "%s", c->dir);
  gl_capture_abandon(g);
  return s;
}

void gl_capture_abandon(gl_graph *g) {
  if (g->capture == NULL) return;
  free(g->capture->decisions.data);
  free(g->capture->segments.data);
  free(g->capture);
  g->capture = NULL;
}
