/*
 * runtime_check.c: the runtime library's own test driver (built by tests/tests/deploy/test_runtime_library.py,
 * also under -fsanitize=address,undefined).
 *
 *   runtime_check FOLDER GRAPH IN_DIR OUT_DIR [--outputs A,B] [--frames N] [--capture DIR] [--segments]
 *                 [--limit BYTES] [--time] [--zero-copy ARG] [--runtime x64|vulkan] [--events]
 *
 * Gives each IN_DIR/<arg>.npy to the graph (arrays with gl_graph_set_array, 0-d or element-shaped
 * files with gl_graph_set_scalar), runs it, prints each decision as "decision NODE SCOPE KIND VALUE
 * OUTCOME", and writes the --outputs args to OUT_DIR/<arg>.bin (raw bytes). Any error prints "error STATUS: MESSAGE"
 * and exits 1, so the tests see the library's message. With --time (bench/deploy_speed.py) no callback
 * is passed and it prints the first frame's time and the mean of the others, as the host program does.
 * --zero-copy ARG gives that input as this program's own TiMemory (gl_graph_set_memory); --runtime
 * creates the Taichi runtime here and passes it to gl_module_open (destroyed after the module); --events
 * prints each control event (gl_graph_on_event) as "event NODE KIND BRANCH|ITERATIONS [limit_reached]".
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "graphlab_runtime.h"
#include "npy.h"

static int fail(gl_status status, const char *message) {
  printf("error %s: %s\n", gl_status_name(status), message);
  return 1;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static gl_dtype dtype_of(NpyDtype d) {
  static const gl_dtype map[] = {GL_F32, GL_F32, GL_F64, GL_I8, GL_I16, GL_I32, GL_I64, GL_U8, GL_U16, GL_U32, GL_U64};
  return map[d]; /* f16 maps to f32 and is refused by the dtype check */
}

static void on_event(void *user, const gl_event *e) {
  (void)user;
  if (e->branch != NULL) printf("event %s %s %s\n", e->node, e->kind, e->branch);
  else printf("event %s %s %lld%s\n", e->node, e->kind, (long long)e->iterations, e->limit_reached ? " limit_reached" : "");
}

static void on_decision(void *user, const gl_decision *d) {
  (void)user;
  printf("decision %s %s %s %d %s\n", d->node, d->scope, d->kind, (int)d->value, d->outcome);
}

/* The caller's own device memory holding `array` (host-visible, so it is filled by mapping). */
static TiMemory own_memory(TiRuntime runtime, const NpyArray *array) {
  TiMemoryAllocateInfo info;
  memset(&info, 0, sizeof info);
  info.size = array->nbytes ? array->nbytes : 4;
  info.host_read = info.host_write = TI_TRUE;
  info.usage = TI_MEMORY_USAGE_STORAGE_BIT;
  TiMemory memory = ti_allocate_memory(runtime, &info);
  void *mapped = ti_map_memory(runtime, memory);
  memcpy(mapped, array->data, array->nbytes);
  ti_unmap_memory(runtime, memory);
  return memory;
}

static int give_inputs(gl_graph *graph, const char *dir, TiRuntime runtime, const char *zero_copy) {
  DIR *listing = opendir(dir);
  if (listing == NULL) return fail(GL_ERROR_IO, dir);
  int status = 0;
  for (struct dirent *e; status == 0 && (e = readdir(listing)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".npy") != 0) continue;
    char path[4096], name[256], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
    NpyArray array;
    if (npy_read(path, &array, err, sizeof err) != 0) {
      status = fail(GL_ERROR_IO, err);
      break;
    }
    gl_status s;
    if (zero_copy != NULL && strcmp(zero_copy, name) == 0) {
      TiMemory mine = own_memory(runtime, &array), used = TI_NULL_HANDLE;
      s = gl_graph_set_memory(graph, name, mine, dtype_of(array.dtype), array.ndim, array.shape);
      if (s == GL_OK) s = gl_graph_get_memory(graph, name, &used);
      if (s == GL_OK) printf("zero-copy %s %s\n", name, used == mine ? "same" : "copied");
    } else {
      s = gl_graph_set_array(graph, name, array.data, dtype_of(array.dtype), array.ndim, array.shape);
    }
    if (s != GL_OK && strstr(gl_graph_error(graph), "gl_graph_set_scalar") != NULL)
      s = gl_graph_set_scalar(graph, name, dtype_of(array.dtype), array.data);
    if (s != GL_OK) status = fail(s, gl_graph_error(graph));
    npy_free(&array);
  }
  closedir(listing);
  return status;
}

/* Write each named ndarray arg (comma-separated) to DIR/<arg>.bin, as raw bytes. */
static int write_outputs(gl_graph *graph, const char *names, const char *dir) {
  mkdir(dir, 0777);
  char *copy = strdup(names), *save = NULL;
  int status = 0;
  for (char *name = strtok_r(copy, ",", &save); name != NULL && status == 0; name = strtok_r(NULL, ",", &save)) {
    size_t bytes;
    gl_status s = gl_graph_arg_bytes(graph, name, &bytes);
    void *data = s == GL_OK ? malloc(bytes ? bytes : 1) : NULL;
    if (s == GL_OK) s = gl_graph_get_array(graph, name, data, bytes);
    if (s != GL_OK) {
      status = fail(s, gl_graph_error(graph));
    } else {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.bin", dir, name);
      FILE *f = fopen(path, "wb");
      if (f == NULL || fwrite(data, 1, bytes, f) != bytes) status = fail(GL_ERROR_IO, path);
      if (f != NULL) fclose(f);
    }
    free(data);
  }
  free(copy);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: runtime_check FOLDER GRAPH IN_DIR OUT_DIR [--outputs A,B] [--frames N] [--capture DIR] "
                    "[--segments] [--limit BYTES]\n");
    return 2;
  }
  long frames = 1;
  const char *capture = NULL, *outputs = "", *zero_copy = NULL, *own_arch = NULL;
  unsigned flags = 0;
  int timed = 0, events = 0;
  unsigned long long limit = 0;
  for (int i = 5; i < argc; ++i) {
    if (strcmp(argv[i], "--outputs") == 0 && i + 1 < argc) outputs = argv[++i];
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) frames = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--capture") == 0 && i + 1 < argc) capture = argv[++i];
    else if (strcmp(argv[i], "--segments") == 0) flags |= GL_CAPTURE_SEGMENTS;
    else if (strcmp(argv[i], "--time") == 0) timed = 1;
    else if (strcmp(argv[i], "--events") == 0) events = 1;
    else if (strcmp(argv[i], "--zero-copy") == 0 && i + 1 < argc) zero_copy = argv[++i];
    else if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc) own_arch = argv[++i];
    else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) limit = strtoull(argv[++i], NULL, 10);
  }
  TiRuntime runtime = TI_NULL_HANDLE;
  if (own_arch != NULL) runtime = ti_create_runtime(strcmp(own_arch, "vulkan") == 0 ? TI_ARCH_VULKAN : TI_ARCH_X64, 0);
  gl_module *module;
  gl_status s = gl_module_open(argv[1], runtime, &module);
  if (s != GL_OK) {
    int status = fail(s, gl_module_error(module));
    gl_module_close(module);
    if (runtime != TI_NULL_HANDLE) ti_destroy_runtime(runtime);
    return status;
  }
  gl_graph *graph;
  int status = 0;
  s = gl_graph_get(module, argv[2], &graph);
  if (s != GL_OK) status = fail(s, gl_module_error(module));
  if (status == 0) status = give_inputs(graph, argv[3], gl_module_runtime(module), zero_copy);
  if (status == 0 && events && (s = gl_graph_on_event(graph, on_event, NULL)) != GL_OK)
    status = fail(s, gl_graph_error(graph));
  if (status == 0 && own_arch != NULL) printf("runtime %s\n", gl_module_runtime(module) == runtime ? "mine" : "other");
  if (status == 0 && capture != NULL && (s = gl_graph_capture(graph, capture, flags, limit)) != GL_OK)
    status = fail(s, gl_graph_error(graph));
  double start = now_ms(), first = 0.0;
  for (long f = 0; status == 0 && f < frames; ++f) {
    if ((s = gl_graph_run(graph, timed ? NULL : on_decision, NULL)) != GL_OK) status = fail(s, gl_graph_error(graph));
    if (f == 0) {
      first = now_ms() - start;
      start = now_ms();
    }
  }
  if (status == 0 && timed) {
    printf("first frame: %.3f ms\n", first);
    if (frames > 1) printf("%.3f ms per frame (mean of the %ld frames after the first)\n", (now_ms() - start) / (double)(frames - 1), frames - 1);
  }
  if (status == 0 && capture != NULL) printf("capture %s\n", gl_graph_last_capture(graph));
  if (status == 0) status = write_outputs(graph, outputs, argv[4]);
  gl_module_close(module);
  if (runtime != TI_NULL_HANDLE) ti_destroy_runtime(runtime); /* the library never destroys the caller's */
  return status;
}
