/*
 * graphlab_runtime.h: run the graphs of a graphlab export (manifest.json + Taichi AOT module) from C.
 *
 * Taichi's C API launches a compute graph as one static list of dispatches. A graphlab graph also has
 * conditionals, while and count loops, check_every, guarded replays, shape relations and a memory
 * plan; they live in manifest.json, and this library carries them out over Taichi's C API:
 *
 *   gl_module *m;
 *   if (gl_module_open("out/mpm88", NULL, &m) != GL_OK) { puts(gl_module_error(m)); ... }
 *   gl_graph *g;
 *   gl_graph_get(m, "mpm88", &g);
 *   int64_t shape[1] = {8192};
 *   gl_graph_set_array(g, "x", x_host, GL_F32, 2, (int64_t[]){8192, 2});
 *   gl_graph_run(g, NULL, NULL);
 *   gl_graph_get_array(g, "x", x_host, sizeof x_host);
 *   gl_module_close(m);                       (closes its graphs too)
 *
 * Every function returns a gl_status; on an error the handle keeps a message naming the arg, graph,
 * file or JSON path and the fix (gl_module_error, gl_graph_error). Nothing exits or prints. There is
 * no global state: handles are independent, and one handle may be used by one thread at a time (the
 * graphs of one module share its Taichi runtime, so run them from one thread).
 *
 * Values are checked before anything runs, as gl.load_module checks them: dtype, field and element
 * dims, fixed sizes, symbolic dims (one size per name across the graph's args) and the shape relations
 * the kernels' loops imply. An arg the caller does not give is allocated (zero-filled) from the dims;
 * temps share the memory plan's slots. The manifest is checked against the module before use: the
 * sha256 of every file it lists, its sealed copy (source/contract.json) and Taichi's own graph table.
 *
 * Captures: gl_graph_capture, or GRAPHLAB_CAPTURE=<folder> in the environment (read by
 * gl_module_open; GRAPHLAB_CAPTURE_SEGMENTS=1 and GRAPHLAB_CAPTURE_LIMIT=<bytes> refine it), make
 * every run write <folder>/<graph>-<n>/ in the graphlab.capture/1 format that gl.open_capture reads.
 */
#ifndef GRAPHLAB_RUNTIME_H
#define GRAPHLAB_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <taichi/taichi_core.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GL_RUNTIME_VERSION 1

/* Exported from the shared library (built with hidden visibility); plain in the static one. */
#if defined(__GNUC__)
#define GL_API __attribute__((visibility("default")))
#else
#define GL_API
#endif

typedef enum gl_status {
  GL_OK = 0,
  GL_ERROR_ARGUMENT = -1,    /* a NULL pointer, an unknown name, a value of the wrong dtype or shape */
  GL_ERROR_MANIFEST = -2,    /* manifest.json is missing, not JSON, or not what an export writes */
  GL_ERROR_TAMPERED = -3,    /* the manifest does not match its module (hashes, contract, graph table) */
  GL_ERROR_SHAPE = -4,       /* the sizes given break a symbolic dim or a shape relation */
  GL_ERROR_TAICHI = -5,      /* Taichi's C API reported an error (its message is kept) */
  GL_ERROR_IO = -6,          /* a file could not be read or written */
  GL_ERROR_MEMORY = -7,      /* out of host memory */
  GL_ERROR_STATE = -8,       /* a call out of order (a graph of a module that failed to open, ...) */
  GL_ERROR_UNSUPPORTED = -9, /* something Taichi's C API cannot pass (an f64 scalar, ...) */
  GL_ERROR_LOOP = -10        /* a guarded loop's replay never cleared its flag */
} gl_status;

/* Element types, as the manifest names them (f32, i32, ...). */
typedef enum gl_dtype { GL_F32, GL_F64, GL_I8, GL_I16, GL_I32, GL_I64, GL_U8, GL_U16, GL_U32, GL_U64 } gl_dtype;

typedef struct gl_module gl_module;
typedef struct gl_graph gl_graph;

/* One flag read while a graph runs (the fields of graphlab.model.plan.FlagRead). */
typedef struct gl_decision {
  const char *node;    /* the control node's id ("solve", "outer/big") */
  const char *scope;   /* this run of it ("outer[1]/big") */
  const char *kind;    /* "cond" or "loop" */
  int32_t value;       /* the flag (or count) read */
  const char *outcome; /* cond: "then" "else" "skip"; loop: "again" "done" "limit" */
} gl_decision;

/* Called for every decision (the strings live until the callback returns). */
typedef void (*gl_decision_fn)(void *user, const gl_decision *decision);

/* What a control node decided, once per conditional and once per finished loop (the fields of
 * graphlab.model.plan.ControlEvent): the host program's --events. A count loop reads no flag, so it
 * makes no gl_decision, but it makes an event. */
typedef struct gl_event {
  const char *node;   /* the control node's id */
  const char *kind;   /* "cond" or "loop" */
  const char *branch; /* cond: "then" "else" "skip"; loop: NULL */
  int64_t iterations; /* loop: the iterations it ran; cond: 0 */
  int limit_reached;  /* while loop: it stopped at max_iter with its flag still set */
} gl_event;

typedef void (*gl_event_fn)(void *user, const gl_event *event);

/* An arg as the manifest declares it (the strings live as long as the module). */
typedef enum gl_arg_kind { GL_KIND_SCALAR, GL_KIND_NDARRAY, GL_KIND_MATRIX, GL_KIND_TEXTURE, GL_KIND_RW_TEXTURE } gl_arg_kind;
typedef enum gl_arg_role { GL_ROLE_INPUT, GL_ROLE_OUTPUT, GL_ROLE_STATE, GL_ROLE_TEMP } gl_arg_role;
#define GL_MAX_FIELD_DIMS 8

typedef struct gl_arg_info {
  const char *name;
  gl_arg_kind kind;
  gl_arg_role role;
  gl_dtype dtype;                         /* textures: GL_F32, their texels */
  int ndim;                               /* field dims */
  const char *dim[GL_MAX_FIELD_DIMS];     /* per field dim: a symbolic dim's name, or NULL */
  int64_t fixed[GL_MAX_FIELD_DIMS];       /* per field dim: a fixed size, or -1 */
  int elem_ndim;                          /* textures: 1, their channels */
  int64_t elem[2];
} gl_arg_info;

/* Capture flags. */
#define GL_CAPTURE_SEGMENTS 1u /* also record each executed segment's outputs (waits after each) */

/* Open the export folder `path` (holding manifest.json and module/), on `runtime` (of the manifest's
 * arch; not destroyed by the library) or, when it is TI_NULL_HANDLE, on a runtime of its own.
 * `*out` is set even on failure (except when out is NULL): read gl_module_error, then gl_module_close. */
GL_API gl_status gl_module_open(const char *path, TiRuntime runtime, gl_module **out);
/* Release the module, its graphs and the memory they allocated. NULL is ignored. */
GL_API void gl_module_close(gl_module *module);
/* The message of the module's last error ("" when none). Never NULL. */
GL_API const char *gl_module_error(const gl_module *module);
/* The runtime the module runs on (the caller's, or its own). */
GL_API TiRuntime gl_module_runtime(const gl_module *module);
/* The module's arch ("x64", "vulkan", "cuda"). */
GL_API const char *gl_module_arch(const gl_module *module);

/* The module's graphs, in manifest order (NULL past the end). */
GL_API int gl_module_graph_count(const gl_module *module);
GL_API const char *gl_module_graph_name(const gl_module *module, int index);

/* The graph `name` of the module: a handle owned by the module (one per name; the same on each call). */
GL_API gl_status gl_graph_get(gl_module *module, const char *name, gl_graph **out);
GL_API const char *gl_graph_error(const gl_graph *graph);

/* The graph's args, in manifest order: how many, and each one's declaration. */
GL_API int gl_graph_arg_count(const gl_graph *graph);
GL_API gl_status gl_graph_arg_info(const gl_graph *graph, int index, gl_arg_info *out);
/* An array arg's shape as the next (or last) run has it: field dims then element dims, `*ndim` of them. */
GL_API gl_status gl_graph_arg_shape(gl_graph *graph, const char *name, int64_t shape[GL_MAX_FIELD_DIMS + 2],
                                    int *ndim);

/* Copy a host array into the arg's device memory (allocated, or reused when the size fits). `shape`
 * holds the field dims then the element dims (as numpy has them), `ndim` their count. A texture arg
 * takes float32 texels (its dims, then its format's channels): the module's copy graphs move them into
 * an image before the run and back after it, so gl_graph_get_array reads them too. */
GL_API gl_status gl_graph_set_array(gl_graph *graph, const char *name, const void *data, gl_dtype dtype, int ndim,
                             const int64_t *shape);
/* Pass the caller's own device memory (zero-copy; it must hold the shape's bytes and outlive its use). */
GL_API gl_status gl_graph_set_memory(gl_graph *graph, const char *name, TiMemory memory, gl_dtype dtype, int ndim,
                              const int64_t *shape);
/* A scalar's value (one element) or a matrix arg's (its elements, row-major), of the arg's dtype. */
GL_API gl_status gl_graph_set_scalar(gl_graph *graph, const char *name, gl_dtype dtype, const void *value);
/* Size of a symbolic dim for the args the caller does not give (default: the manifest's dims). */
GL_API gl_status gl_graph_set_dim(gl_graph *graph, const char *dim, int64_t size);
/* Copy the arg's current values to `data` (`bytes` must be its exact byte size; gl_graph_arg_bytes). */
GL_API gl_status gl_graph_get_array(gl_graph *graph, const char *name, void *data, size_t bytes);
/* The byte size of an ndarray arg as the next (or last) run has it, in *bytes. */
GL_API gl_status gl_graph_arg_bytes(gl_graph *graph, const char *name, size_t *bytes);
/* The device memory of an ndarray arg (allocating it from the dims if needed), for zero-copy reads. */
GL_API gl_status gl_graph_get_memory(gl_graph *graph, const char *name, TiMemory *memory);

/* Check every value, allocate what is missing, run the graph with its control flow and wait for it.
 * `on_decision` (may be NULL) hears every flag read. */
GL_API gl_status gl_graph_run(gl_graph *graph, gl_decision_fn on_decision, void *user);

/* What gl_graph_run does before it launches anything: check every value (dtypes, dims, shape relations),
 * allocate (zero-filled) what the caller did not give. Lets a caller refuse bad input before any graph runs. */
GL_API gl_status gl_graph_prepare(gl_graph *graph);
/* Hear every control event of the following runs (NULL stops). */
GL_API gl_status gl_graph_on_event(gl_graph *graph, gl_event_fn on_event, void *user);

/* Record the following runs under `folder` (NULL stops): each writes folder/<graph>-<n>/. Segments'
 * outputs are recorded with GL_CAPTURE_SEGMENTS until `limit_bytes` of arrays is written (0: no limit). */
GL_API gl_status gl_graph_capture(gl_graph *graph, const char *folder, unsigned flags, uint64_t limit_bytes);
/* The folder the last run's capture was written to ("" when none). Never NULL. */
GL_API const char *gl_graph_last_capture(const gl_graph *graph);

/* Names for messages: "f32" ..., and a status's name. */
GL_API const char *gl_dtype_name(gl_dtype dtype);
GL_API size_t gl_dtype_size(gl_dtype dtype);
GL_API const char *gl_status_name(gl_status status);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHLAB_RUNTIME_H */
