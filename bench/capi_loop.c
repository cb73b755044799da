/*
 * capi_loop.c: the floor for deploy_speed.py --library: one compiled graph launched per frame with
 * Taichi's C API alone (ti_launch_compute_graph, then ti_wait, as the library waits after each run), no
 * graphlab. Built by bench/deploy_speed.py with the host program's compiler and flags.
 *
 *   capi_loop ARCH MODULE_DIR GRAPH[,GRAPH...] IN_DIR FRAMES NAME:FIELD_NDIM...
 *
 * A frame launches the GRAPHs in order (a graph whose plan repeats a segment names it that many times).
 * Each NAME is an ndarray arg read from IN_DIR/NAME.npy (its first FIELD_NDIM dims are field dims, the
 * rest its element shape). Prints the first frame's time and the mean of the others, as the host does.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <taichi/taichi_core.h>

#include "npy.h"

#define MAX_ARGS 32
#define MAX_LAUNCHES 65536

static void check(const char *call) {
  char message[1024];
  uint64_t size = sizeof message;
  TiError error = ti_get_last_error(&size, message);
  if (error < TI_ERROR_SUCCESS) {
    fprintf(stderr, "capi_loop: %s failed (%d): %s\n", call, (int)error, message);
    exit(1);
  }
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static TiDataType ti_dtype(NpyDtype dtype) {
  switch (dtype) {
    case NPY_F32: return TI_DATA_TYPE_F32;
    case NPY_I32: return TI_DATA_TYPE_I32;
    case NPY_F64: return TI_DATA_TYPE_F64;
    default: fprintf(stderr, "capi_loop: only f32, i32 and f64 arrays\n"); exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 7 || argc - 6 > MAX_ARGS) {
    fprintf(stderr, "usage: capi_loop x64|vulkan|cuda MODULE_DIR GRAPH[,GRAPH...] IN_DIR FRAMES NAME:FIELD_NDIM...\n");
    return 2;
  }
  TiArch arch = strcmp(argv[1], "vulkan") == 0 ? TI_ARCH_VULKAN : strcmp(argv[1], "cuda") == 0 ? TI_ARCH_CUDA : TI_ARCH_X64;
  long frames = strtol(argv[5], NULL, 10);
  TiRuntime runtime = ti_create_runtime(arch, 0);
  check("ti_create_runtime");
  TiAotModule module = ti_load_aot_module(runtime, argv[2]);
  check("ti_load_aot_module");
  static TiComputeGraph graphs[MAX_LAUNCHES];
  int launches = 0;
  for (char *name = strtok(argv[3], ","); name != NULL && launches < MAX_LAUNCHES; name = strtok(NULL, ",")) {
    graphs[launches++] = ti_get_aot_module_compute_graph(module, name);
    check("ti_get_aot_module_compute_graph");
  }
  int count = argc - 6;
  TiNamedArgument args[MAX_ARGS];
  memset(args, 0, sizeof args);
  for (int i = 0; i < count; ++i) {
    char *spec = argv[6 + i], *colon = strchr(spec, ':'), path[4096], err[512];
    if (colon == NULL) return 2;
    *colon = '\0';
    int field = atoi(colon + 1);
    NpyArray array;
    snprintf(path, sizeof path, "%s/%s.npy", argv[4], spec);
    if (npy_read(path, &array, err, sizeof err) != 0) {
      fprintf(stderr, "capi_loop: %s: %s\n", path, err);
      return 1;
    }
    /* As the library allocates: mappable memory on x64 and CUDA; device memory filled from a staging
     * copy on Vulkan (device-local memory cannot be mapped on a real GPU). */
    TiMemoryAllocateInfo info;
    memset(&info, 0, sizeof info);
    info.size = array.nbytes;
    info.usage = TI_MEMORY_USAGE_STORAGE_BIT;
    info.host_read = info.host_write = TI_TRUE;
    TiMemory staging = ti_allocate_memory(runtime, &info);
    check("ti_allocate_memory");
    void *mapped = ti_map_memory(runtime, staging);
    check("ti_map_memory");
    memcpy(mapped, array.data, array.nbytes);
    ti_unmap_memory(runtime, staging);
    TiMemory memory = staging;
    if (arch == TI_ARCH_VULKAN) {
      info.host_read = info.host_write = TI_FALSE;
      memory = ti_allocate_memory(runtime, &info);
      check("ti_allocate_memory");
      TiMemorySlice to = {memory, 0, array.nbytes}, from = {staging, 0, array.nbytes};
      ti_copy_memory_device_to_device(runtime, &to, &from);
      check("ti_copy_memory_device_to_device");
      ti_wait(runtime);
    }
    args[i].name = spec;
    args[i].argument.type = TI_ARGUMENT_TYPE_NDARRAY;
    TiNdArray *nd = &args[i].argument.value.ndarray;
    nd->memory = memory;
    nd->elem_type = ti_dtype(array.dtype);
    nd->shape.dim_count = (uint32_t)field;
    for (int d = 0; d < field; ++d) nd->shape.dims[d] = (uint32_t)array.shape[d];
    nd->elem_shape.dim_count = (uint32_t)(array.ndim - field);
    for (int e = field; e < array.ndim; ++e) nd->elem_shape.dims[e - field] = (uint32_t)array.shape[e];
    npy_free(&array);
  }
  double start = now_ms(), first = 0;
  for (long f = 0; f < frames; ++f) {
    for (int g = 0; g < launches; ++g) {
      ti_launch_compute_graph(runtime, graphs[g], (uint32_t)count, args);
      check("ti_launch_compute_graph");
    }
    ti_wait(runtime);
    check("ti_wait");
    if (f == 0) {
      first = now_ms() - start;
      start = now_ms();
    }
  }
  double rest = now_ms() - start;
  printf("first frame: %.3f ms\n", first);
  if (frames > 1) printf("%.3f ms per frame (mean of the %ld frames after the first)\n", rest / (double)(frames - 1), frames - 1);
  ti_destroy_aot_module(module);
  ti_destroy_runtime(runtime);
  return 0;
}
