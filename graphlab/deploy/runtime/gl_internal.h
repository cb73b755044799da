/*
 * gl_internal.h: the library's own types, shared by its .c files (not installed).
 *
 * gl_manifest.c turns manifest.json into these tables (and checks it against its module);
 * graphlab_runtime.c holds the values and runs the ops; gl_capture.c records runs.
 */
#ifndef GRAPHLAB_INTERNAL_H
#define GRAPHLAB_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "graphlab_runtime.h"

#define GL_MAX_DIMS 8
#define GL_ERROR_SIZE 2048

typedef enum arg_kind { KIND_SCALAR, KIND_NDARRAY, KIND_MATRIX, KIND_TEXTURE, KIND_RW_TEXTURE } arg_kind;
/* Args whose values are arrays on the host: ndarrays, and textures' float32 texels. */
#define GL_IS_TEXTURE(kind) ((kind) == KIND_TEXTURE || (kind) == KIND_RW_TEXTURE)
#define GL_IS_ARRAY(kind) ((kind) == KIND_NDARRAY || GL_IS_TEXTURE(kind))
typedef enum arg_role { ROLE_INPUT, ROLE_OUTPUT, ROLE_STATE, ROLE_TEMP } arg_role;
typedef enum op_kind { OP_SEGMENT, OP_REPEAT, OP_COND, OP_LOOP } op_kind;

typedef struct arg_spec {
  char *name;
  arg_kind kind;
  arg_role role;
  gl_dtype dtype;
  int ndim;                       /* field dims */
  const char *dim[GL_MAX_DIMS];   /* per field dim: a symbolic dim name, or NULL */
  int64_t fixed[GL_MAX_DIMS];     /* per field dim: a fixed size, or -1 */
  int shape_known;                /* the manifest gives a shape */
  int elem_ndim;
  int64_t elem[2];
  int slot;                       /* memory-plan slot of a temp, or -1 */
  int written;                    /* in the graph's "writes" */
  TiFormat format;                /* textures: the image's format (texels are f32, elem[0] channels) */
  char fmt[16];                   /* textures: its name, for the copy graphs' names */
} arg_spec;

typedef struct segment_spec {
  char *name; /* the module's compute graph */
  int arg_count;
  int *args;  /* indices into the graph's args */
} segment_spec;

typedef struct op_spec {
  op_kind kind;
  char *node;
  int segment;          /* OP_SEGMENT */
  int flag, count;      /* arg indices or -1 */
  long long times;      /* OP_REPEAT: repetitions; while loops: max_iter */
  int body, body_len;   /* a range of the graph's ops */
  int other, other_len; /* OP_COND's else block; other = -1 without one */
  long long check_every;
  int guarded;
  int saves_len;
  int *saves;
} op_spec;

typedef struct relation_spec {
  int arg, axis, source, source_axis;
  long long minimum;
  int guard_count;
  int *guards; /* pairs (arg, axis; axis -1: every axis) */
  char *node, *access;
} relation_spec;

typedef struct graph_spec {
  char *name;
  int arg_count;
  arg_spec *args;
  int segment_count;
  segment_spec *segments;
  int op_count, op_capacity;
  op_spec *ops;
  int body, body_len;
  int relation_count;
  relation_spec *relations;
} graph_spec;

typedef struct dim_value {
  char *name;
  int64_t value;
} dim_value;

struct gl_module {
  char error[GL_ERROR_SIZE];
  char *folder;
  char *arch;
  TiArch ti_arch;
  int direct_mapping; /* x64, CUDA: memory maps directly; Vulkan goes through staging memory */
  TiRuntime runtime;
  int owns_runtime;
  TiAotModule aot;
  int graph_count;
  graph_spec *specs;
  gl_graph **graphs; /* handles, made on first gl_graph_get */
  int dim_count;
  dim_value *dims;   /* the manifest's default dims */
  void *cuda_driver;           /* dlopen handle, closed with the module */
  void *cuda_dtoh, *cuda_dtod; /* CUDA: the driver's cuMemcpyDtoH_v2 / cuMemcpyDtoD_v2, looked up at open */
  char manifest_sha256[65];
  char *graphlab_version;
  char *module_name;
  /* GRAPHLAB_CAPTURE, read at open */
  char *capture_folder;
  unsigned capture_flags;
  uint64_t capture_limit;
};

/* Return the status of `expr` when it is an error. */
#define TRY(expr)                                 \
  do {                                            \
    gl_status try_status_ = (expr);               \
    if (try_status_ != GL_OK) return try_status_; \
  } while (0)

/* ---- gl_manifest.c ---- */

/* Read, check and load the tables of module->folder/manifest.json (module->error on failure). */
gl_status gl_read_manifest(gl_module *module);
void gl_free_specs(gl_module *module);

/* ---- helpers (graphlab_runtime.c) ---- */

gl_status gl_fail(char *error, gl_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
char *gl_strdup(const char *text);
/* The whole file in a malloc'ed buffer (NUL added; size in *size). NULL on failure, errno set. */
char *gl_read_file(const char *path, size_t *size);
int gl_dtype_from_name(const char *name, gl_dtype *out);
/* Check Taichi's last error after `call`: GL_OK, or GL_ERROR_TAICHI with its message in `error`. */
gl_status gl_ti_check(char *error, const char *call);


/* ---- A graph's values (graphlab_runtime.c) ---- */

typedef enum given { GIVEN_NONE, GIVEN_HOST, GIVEN_MEMORY } given;

typedef struct arg_value {
  given given;
  int sized;                      /* shape holds this run's (or the last run's) sizes */
  int64_t shape[GL_MAX_DIMS + 2]; /* field dims, then element dims */
  size_t nbytes;
  TiMemory memory;                /* what the launches get: own, the slot's, or the caller's */
  TiMemory own;                   /* allocated here (x64 cannot free single allocations: reused) */
  size_t own_bytes;
  int value_set;                  /* scalars, matrices */
  unsigned char value[128];
  TiImage image;                  /* textures: the image the copy graphs fill and read */
  int64_t image_shape[3];         /* the field dims it was allocated for */
  TiMemory saved;                 /* a guarded loop's copy */
  size_t saved_bytes;
} arg_value;

typedef struct slot_memory {
  int slot;
  TiMemory memory;
  size_t bytes;
} slot_memory;

typedef struct gl_capture gl_capture; /* gl_capture.c: one run being recorded */

struct gl_graph {
  char error[GL_ERROR_SIZE];
  gl_module *module;
  const graph_spec *spec;
  arg_value *values;
  int dim_count;
  dim_value *dims;       /* set by gl_graph_set_dim (names owned) */
  int slot_count;
  slot_memory *slots;
  TiComputeGraph *segments;
  TiNamedArgument *arguments; /* per segment, at arg_offset[s] */
  int *arg_offset;
  TiMemory flag_staging; /* Vulkan: host-visible 4 bytes for flag reads */
  /* while running */
  gl_decision_fn on_decision;
  void *user;
  gl_event_fn on_event; /* gl_graph_on_event */
  void *event_user;
  int tracking;          /* scopes are kept (a callback or a capture listens) */
  char scope[2048];
  size_t scope_len;
  /* captures */
  char *capture_folder;
  unsigned capture_flags;
  uint64_t capture_limit;
  gl_capture *capture;
  char last_capture[4096];
};

/* ---- graphlab_runtime.c, for gl_capture.c ---- */

/* Copy an ndarray arg's bytes to `data` (waits for the device). */
gl_status gl_download(gl_graph *graph, int arg, void *data);

/* ---- gl_capture.c ---- */

/* Start recording a run: a new folder, the inputs. */
gl_status gl_capture_begin(gl_graph *graph);
gl_status gl_capture_decision(gl_graph *graph, const gl_decision *decision);
/* After segment `segment` (the plan's index) ran, as the `order`-th executed. */
gl_status gl_capture_segment(gl_graph *graph, int segment);
/* The outputs and capture.json (written last, atomically). */
gl_status gl_capture_end(gl_graph *graph);
/* Drop a capture that failed midway (its folder stays, without capture.json). */
void gl_capture_abandon(gl_graph *graph);

#endif /* GRAPHLAB_INTERNAL_H */
