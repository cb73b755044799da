/*
 * gl_manifest.c: manifest.json into the library's tables, refused unless it matches its module.
 *
 * manifest.json is plain JSON anyone can edit, and a wrong dtype or shape in it would make the
 * runtime misread buffers. Before the tables are built, as gl.load_module does (graphlab.deploy.seal,
 * graphlab.deploy.module_meta): every file $.files lists must have its sha256, every file of module/
 * must be listed, $.graphs and $.dims must equal the sealed copy in source/contract.json, and every
 * arg a module graph's dispatches take must have the kind, dtype, ndim and element shape Taichi
 * compiled (module/graphs.json on Vulkan, module/graphs.tcb on the LLVM archs).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_internal.h"
#include "gl_json.h"
#include "gl_sha256.h"

#define FIX "re-export the module, or restore the manifest.json gl.export wrote"

typedef struct reader {
  gl_module *module;
  const char *file; /* for messages */
} reader;

static gl_status bad(gl_module *m, const char *path, const char *what) {
  return gl_fail(m->error, GL_ERROR_MANIFEST, "%s/manifest.json %s: %s", m->folder, path, what);
}

static const char *str_of(const gl_json *v) { return v != NULL && v->type == GL_JSON_STRING ? v->text : NULL; }

/* ---- The seal: file hashes, the contract copy ---- */

static int safe_relative(const char *name) {
  if (name[0] == '/' || name[0] == '\0') return 0;
  for (const char *p = name; *p; ++p)
    if (p[0] == '.' && p[1] == '.' && (p == name || p[-1] == '/') && (p[2] == '/' || p[2] == '\0')) return 0;
  return 1;
}

static gl_status check_file(gl_module *m, const char *name, const char *digest) {
  if (!safe_relative(name))
    return gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json $.files: %s is not a path inside the export; " FIX,
                   m->folder, name);
  size_t size = strlen(m->folder) + strlen(name) + 2;
  char *path = malloc(size);
  if (path == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  snprintf(path, size, "%s/%s", m->folder, name);
  size_t bytes;
  char *content = gl_read_file(path, &bytes);
  if (content == NULL) {
    gl_status s = gl_fail(m->error, GL_ERROR_TAMPERED, "%s is missing or unreadable since export (%s); " FIX, path,
                          strerror(errno));
    free(path);
    return s;
  }
  char hex[65];
  gl_sha256_hex(content, bytes, hex);
  free(content);
  gl_status s = GL_OK;
  if (digest == NULL || strcmp(hex, digest) != 0)
    s = gl_fail(m->error, GL_ERROR_TAMPERED,
                "%s is changed since export (its sha256 differs from manifest.json $.files[\"%s\"]); " FIX, path, name);
  free(path);
  return s;
}

static gl_status check_files(gl_module *m, const gl_json *files) {
  if (files == NULL || files->type != GL_JSON_OBJECT || files->count == 0)
    return gl_fail(m->error, GL_ERROR_TAMPERED,
                   "%s/manifest.json $.files: lists no files with their sha256, so the module's integrity cannot be "
                   "checked; " FIX, m->folder);
  for (const gl_json *f = files->child; f != NULL; f = f->next) {
    gl_status s = check_file(m, f->key, str_of(f));
    if (s != GL_OK) return s;
  }
  size_t size = strlen(m->folder) + 16;
  char *dir = malloc(size);
  if (dir == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  snprintf(dir, size, "%s/module", m->folder);
  DIR *listing = opendir(dir);
  if (listing == NULL) {
    gl_status s = gl_fail(m->error, GL_ERROR_MANIFEST, "%s: cannot open the module folder (%s)", dir, strerror(errno));
    free(dir);
    return s;
  }
  gl_status s = GL_OK;
  for (struct dirent *e; s == GL_OK && (e = readdir(listing)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char key[1024];
    snprintf(key, sizeof key, "module/%s", e->d_name);
    if (gl_json_get(files, key) == NULL)
      s = gl_fail(m->error, GL_ERROR_TAMPERED, "%s/%s is not listed in manifest.json $.files, so its integrity cannot "
                  "be checked; " FIX, dir, e->d_name);
  }
  closedir(listing);
  free(dir);
  return s;
}

/* The JSON path of the first place `have` differs from `want`, into `out` (returns 0 when equal). */
static int first_difference(const gl_json *have, const gl_json *want, const char *path, char *out, size_t size) {
  if (have != NULL && want != NULL && have->type == GL_JSON_OBJECT && want->type == GL_JSON_OBJECT) {
    for (int pass = 0; pass < 2; ++pass)
      for (const gl_json *x = pass ? want->child : have->child; x != NULL; x = x->next) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", path, x->key);
        if (first_difference(gl_json_get(have, x->key), gl_json_get(want, x->key), sub, out, size)) return 1;
      }
    return 0;
  }
  if (have != NULL && want != NULL && have->type == GL_JSON_ARRAY && want->type == GL_JSON_ARRAY &&
      have->count == want->count) {
    size_t i = 0;
    for (const gl_json *x = have->child, *y = want->child; x != NULL; x = x->next, y = y->next, ++i) {
      char sub[512];
      snprintf(sub, sizeof sub, "%s[%zu]", path, i);
      if (first_difference(x, y, sub, out, size)) return 1;
    }
    return 0;
  }
  if (gl_json_equal(have, want)) return 0;
  snprintf(out, size, "%s", path);
  return 1;
}

static gl_status check_contract(gl_module *m, const gl_json *manifest) {
  const gl_json *source = gl_json_get(manifest, "source");
  if (source == NULL || source->type == GL_JSON_NULL) return GL_OK; /* hand-made: the graph table still checks it */
  const char *rel = str_of(gl_json_get(source, "contract"));
  if (rel == NULL)
    return gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json $.source.contract: is missing, but gl.export writes "
                   "a sealed copy of the graphs there (source/contract.json): this manifest was edited", m->folder);
  if (gl_json_get(gl_json_get(manifest, "files"), rel) == NULL)
    return gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json $.source.contract: '%s' is not listed in $.files, "
                   "so its integrity cannot be checked; " FIX, m->folder, rel);
  char path[4096], err[256];
  snprintf(path, sizeof path, "%s/%s", m->folder, rel);
  size_t size;
  char *text = gl_read_file(path, &size);
  if (text == NULL) return gl_fail(m->error, GL_ERROR_TAMPERED, "%s: cannot read (%s); " FIX, path, strerror(errno));
  gl_json *contract = gl_json_parse(text, size, err, sizeof err);
  free(text);
  if (contract == NULL) return gl_fail(m->error, GL_ERROR_TAMPERED, "%s is not JSON (%s); " FIX, path, err);
  gl_status s = GL_OK;
  static const char *const keys[] = {"graphs", "dims"};
  for (int k = 0; k < 2 && s == GL_OK; ++k) {
    char where[512], top[16];
    snprintf(top, sizeof top, "$.%s", keys[k]);
    if (first_difference(gl_json_get(manifest, keys[k]), gl_json_get(contract, keys[k]), top, where, sizeof where))
      s = gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json %s: differs from the sealed copy in %s that gl.export "
                  "wrote: manifest.json was edited after export, and running it could misread buffers or skip the "
                  "checks that keep kernels inside them; " FIX, m->folder, where, rel);
  }
  gl_json_free(contract);
  return s;
}

/* ---- Taichi's own graph table ---- */

typedef struct compiled_arg {
  char name[256], kernel[256];
  int tag, dtype_id;
  long long field_dim;
  int elem_ndim;
  long long elem[4];
} compiled_arg;

typedef struct tcb {
  const unsigned char *p, *end;
  int failed;
} tcb;

static unsigned long long tcb_take(tcb *t, int bytes) {
  if (t->end - t->p < bytes) {
    t->failed = 1;
    return 0;
  }
  unsigned long long v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | t->p[i];
  t->p += bytes;
  return v;
}

static void tcb_text(tcb *t, char *out, size_t size) {
  unsigned long long len = tcb_take(t, 8);
  if (t->failed || len > (unsigned long long)(t->end - t->p)) {
    t->failed = 1;
    out[0] = '\0';
    return;
  }
  size_t keep = len < size - 1 ? (size_t)len : size - 1;
  memcpy(out, t->p, keep);
  out[keep] = '\0';
  t->p += len;
}

static const char *const DTYPE_IDS[] = {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64"};
static const char *const TAGS[] = {"scalar", "matrix", "ndarray", "texture", "rw_texture"};
static const arg_kind TAG_KINDS[] = {KIND_SCALAR, KIND_MATRIX, KIND_NDARRAY, KIND_TEXTURE, KIND_RW_TEXTURE};

/* The first difference that matters between a manifest arg and what Taichi compiled, or NULL. */
static const char *difference(const arg_spec *a, const compiled_arg *c, char *have, char *want, size_t size) {
  if (c->tag < 0 || c->tag > 4 || TAG_KINDS[c->tag] != a->kind) {
    snprintf(have, size, "%s", TAGS[a->kind == KIND_MATRIX ? 1 : a->kind == KIND_NDARRAY ? 2 : a->kind == KIND_SCALAR ? 0 : 3]);
    snprintf(want, size, "%s", c->tag >= 0 && c->tag <= 4 ? TAGS[c->tag] : "an unknown kind");
    return "kind";
  }
  if (a->kind == KIND_SCALAR || a->kind == KIND_NDARRAY || a->kind == KIND_MATRIX) {
    const char *compiled = c->dtype_id >= 0 && c->dtype_id < 12 ? DTYPE_IDS[c->dtype_id] : "?";
    if (strcmp(gl_dtype_name(a->dtype), compiled) != 0) {
      snprintf(have, size, "%s", gl_dtype_name(a->dtype));
      snprintf(want, size, "%s", compiled);
      return "dtype";
    }
  }
  if (a->kind == KIND_NDARRAY && a->ndim != c->field_dim) {
    snprintf(have, size, "%d", a->ndim);
    snprintf(want, size, "%lld", c->field_dim);
    return "ndim";
  }
  if (a->kind == KIND_NDARRAY || a->kind == KIND_MATRIX) {
    int same = c->elem_ndim == a->elem_ndim;
    for (int e = 0; same && e < a->elem_ndim; ++e) same = c->elem[e] == a->elem[e];
    /* Taichi records a vector of n as an n x 1 matrix */
    if (!same && a->kind == KIND_MATRIX && a->elem_ndim == 1 && c->elem_ndim == 2)
      same = c->elem[0] == a->elem[0] && c->elem[1] == 1;
    if (!same) {
      snprintf(have, size, "%d dims", a->elem_ndim);
      snprintf(want, size, "%d dims", c->elem_ndim);
      if (c->elem_ndim == a->elem_ndim) {
        snprintf(have, size, "[%lld%s%lld]", (long long)a->elem[0], a->elem_ndim > 1 ? ", " : "",
                 a->elem_ndim > 1 ? (long long)a->elem[1] : 0LL);
        snprintf(want, size, "[%lld%s%lld]", c->elem[0], c->elem_ndim > 1 ? ", " : "", c->elem_ndim > 1 ? c->elem[1] : 0LL);
      }
      return "element_shape";
    }
  }
  return NULL;
}

/* Check one compiled arg of module graph `segment` against the manifest graph it belongs to. */
static gl_status check_compiled(gl_module *m, int g, const char *segment, const compiled_arg *c) {
  const graph_spec *spec = &m->specs[g];
  for (int s = 0; s < spec->segment_count; ++s) {
    const segment_spec *seg = &spec->segments[s];
    if (strcmp(seg->name, segment) != 0) continue;
    int found = -1;
    for (int i = 0; i < seg->arg_count; ++i)
      if (strcmp(spec->args[seg->args[i]].name, c->name) == 0) found = seg->args[i];
    if (found < 0)
      return gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json $.graphs[%d].args: module graph '%s' (kernel %s) "
                     "takes arg '%s', which the manifest does not pass to it; " FIX, m->folder, g, segment, c->kernel,
                     c->name);
    char have[64], want[64];
    const char *field = difference(&spec->args[found], c, have, want, sizeof have);
    if (field != NULL)
      return gl_fail(m->error, GL_ERROR_TAMPERED, "%s/manifest.json $.graphs[%d].args[%d].%s: arg '%s' has %s %s, but "
                     "module graph '%s' was compiled with %s %s (kernel %s); running it would misread the value; " FIX,
                     m->folder, g, found, field, c->name, field, have, segment, field, want, c->kernel);
  }
  return GL_OK;
}

static gl_status check_compiled_all(gl_module *m, const char *segment, const compiled_arg *c) {
  for (int g = 0; g < m->graph_count; ++g) {
    gl_status s = check_compiled(m, g, segment, c);
    if (s != GL_OK) return s;
  }
  return GL_OK;
}

static gl_status check_tcb(gl_module *m, const char *path, const unsigned char *data, size_t size) {
  tcb t = {data, data + size, 0};
  tcb_take(&t, 8);
  unsigned long long graphs = tcb_take(&t, 8);
  for (unsigned long long g = 0; g < graphs && !t.failed; ++g) {
    char graph[256];
    tcb_text(&t, graph, sizeof graph);
    unsigned long long dispatches = tcb_take(&t, 8);
    for (unsigned long long d = 0; d < dispatches && !t.failed; ++d) {
      compiled_arg c;
      memset(&c, 0, sizeof c);
      tcb_text(&t, c.kernel, sizeof c.kernel);
      unsigned long long args = tcb_take(&t, 8);
      for (unsigned long long a = 0; a < args && !t.failed; ++a) {
        tcb_text(&t, c.name, sizeof c.name);
        c.dtype_id = (int)tcb_take(&t, 4);
        c.field_dim = (long long)tcb_take(&t, 8);
        c.tag = (int)tcb_take(&t, 4);
        unsigned long long n = tcb_take(&t, 8);
        if (n > 4) t.failed = 1;
        c.elem_ndim = (int)n;
        for (unsigned long long e = 0; e < n && !t.failed; ++e) c.elem[e] = (int32_t)tcb_take(&t, 4);
        tcb_take(&t, 8); /* num_channels */
        if (t.failed) break;
        gl_status s = check_compiled_all(m, graph, &c);
        if (s != GL_OK) return s;
      }
    }
  }
  if (t.failed)
    return gl_fail(m->error, GL_ERROR_TAMPERED, "%s ends early: it is not a Taichi 1.7 graph table; " FIX, path);
  return GL_OK;
}

static gl_status check_graphs_json(gl_module *m, const char *path, const char *text, size_t size) {
  char err[256];
  gl_json *table = gl_json_parse(text, size, err, sizeof err);
  if (table == NULL || table->type != GL_JSON_ARRAY) {
    gl_json_free(table);
    return gl_fail(m->error, GL_ERROR_TAMPERED, "%s is not a Taichi 1.7 graph table (%s); " FIX, path, err);
  }
  gl_status s = GL_OK;
  for (const gl_json *entry = table->child; entry != NULL && s == GL_OK; entry = entry->next) {
    const char *graph = str_of(gl_json_get(entry, "key"));
    const gl_json *dispatches = gl_json_get(gl_json_get(entry, "value"), "dispatches");
    for (const gl_json *d = dispatches ? dispatches->child : NULL; d != NULL && s == GL_OK; d = d->next) {
      const gl_json *args = gl_json_get(d, "symbolic_args");
      for (const gl_json *a = args ? args->child : NULL; a != NULL && s == GL_OK; a = a->next) {
        compiled_arg c;
        memset(&c, 0, sizeof c);
        long long tag = -1, dtype = -1;
        snprintf(c.kernel, sizeof c.kernel, "%s", str_of(gl_json_get(d, "kernel_name")) ? str_of(gl_json_get(d, "kernel_name")) : "?");
        snprintf(c.name, sizeof c.name, "%s", str_of(gl_json_get(a, "name")) ? str_of(gl_json_get(a, "name")) : "");
        gl_json_int(gl_json_get(a, "tag"), &tag);
        gl_json_int(gl_json_get(a, "dtype_id"), &dtype);
        gl_json_int(gl_json_get(a, "field_dim"), &c.field_dim);
        c.tag = (int)tag;
        c.dtype_id = (int)dtype;
        const gl_json *shape = gl_json_get(a, "element_shape");
        for (const gl_json *e = shape ? shape->child : NULL; e != NULL && c.elem_ndim < 4; e = e->next)
          gl_json_int(e, &c.elem[c.elem_ndim++]);
        if (graph != NULL) s = check_compiled_all(m, graph, &c);
      }
    }
  }
  gl_json_free(table);
  return s;
}

static gl_status check_module_table(gl_module *m) {
  static const char *const names[] = {"graphs.json", "graphs.tcb"};
  for (int i = 0; i < 2; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/module/%s", m->folder, names[i]);
    size_t size;
    char *data = gl_read_file(path, &size);
    if (data == NULL) continue;
    gl_status s = i == 0 ? check_graphs_json(m, path, data, size) : check_tcb(m, path, (unsigned char *)data, size);
    free(data);
    return s;
  }
  return GL_OK;
}

/* ---- The tables ---- */

static int find_arg(const graph_spec *g, const char *name) {
  for (int a = 0; a < g->arg_count; ++a)
    if (strcmp(g->args[a].name, name) == 0) return a;
  return -1;
}

/* A texture arg's values cross as float32 texels (its dims, then its format's channels), as
 * graphlab.bridge.texture_formats has them: the format is the arg's "fmt", else its sample's, else rgba32f. */
static gl_status read_texture(gl_module *m, const gl_json *j, arg_spec *a, const char *where) {
  static const struct {
    const char *name;
    TiFormat format;
    int channels;
  } formats[] = {{"r32f", TI_FORMAT_R32F, 1},     {"rg32f", TI_FORMAT_RG32F, 2},   {"rgba32f", TI_FORMAT_RGBA32F, 4},
                 {"r16f", TI_FORMAT_R16F, 1},     {"rg16f", TI_FORMAT_RG16F, 2},   {"rgba16f", TI_FORMAT_RGBA16F, 4},
                 {"r8", TI_FORMAT_R8, 1},         {"rg8", TI_FORMAT_RG8, 2},       {"rgba8", TI_FORMAT_RGBA8, 4},
                 {"r16", TI_FORMAT_R16, 1},       {"rg16", TI_FORMAT_RG16, 2},     {"rgba16", TI_FORMAT_RGBA16, 4}};
  const char *fmt = str_of(gl_json_get(j, "fmt"));
  if (fmt == NULL) fmt = str_of(gl_json_get(gl_json_get(j, "sample"), "fmt"));
  if (fmt == NULL) fmt = "rgba32f";
  if (a->ndim < 1 || a->ndim > 3) return bad(m, where, "a texture needs 1 to 3 dims");
  a->dtype = GL_F32;
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
    if (strcmp(formats[f].name, fmt) != 0) continue;
    a->format = formats[f].format;
    snprintf(a->fmt, sizeof a->fmt, "%s", fmt);
    a->elem_ndim = 1;
    a->elem[0] = formats[f].channels;
    for (int d = 0; d < GL_MAX_DIMS; ++d) a->fixed[d] = -1;
    const gl_json *shape = gl_json_get(j, "shape");
    if (shape == NULL || shape->type != GL_JSON_ARRAY) return GL_OK;
    if ((int)shape->count != a->ndim) return bad(m, where, "shape has not ndim entries");
    a->shape_known = 1;
    int d = 0;
    for (const gl_json *e = shape->child; e != NULL; e = e->next, ++d) {
      long long size = -1;
      if (e->type == GL_JSON_STRING) a->dim[d] = gl_strdup(e->text);
      else if (e->type != GL_JSON_NULL && (gl_json_int(e, &size) != 0 || size < 0)) return bad(m, where, "a shape entry is no size");
      a->fixed[d] = size;
    }
    return GL_OK;
  }
  return bad(m, where, "the texture's format is not one whose texels cross as float32 (r32f rg32f rgba32f r16f rg16f "
             "rgba16f r8 rg8 rgba8 r16 rg16 rgba16); re-export it with one of those");
}

static gl_status read_arg(gl_module *m, const gl_json *j, arg_spec *a, const char *where) {
  static const char *const kinds[] = {"scalar", "ndarray", "matrix", "texture", "rw_texture"};
  static const char *const roles[] = {"input", "output", "state", "temp"};
  const char *name = str_of(gl_json_get(j, "name")), *kind = str_of(gl_json_get(j, "kind"));
  const char *role = str_of(gl_json_get(j, "role")), *dtype = str_of(gl_json_get(j, "dtype"));
  if (name == NULL || kind == NULL) return bad(m, where, "an arg needs a string name and kind");
  a->name = gl_strdup(name);
  a->slot = -1;
  int k = 0;
  while (k < 5 && strcmp(kinds[k], kind) != 0) ++k;
  if (k == 5) return bad(m, where, "kind is not scalar, ndarray, matrix, texture or rw_texture");
  a->kind = (arg_kind)k;
  int r = 0;
  while (r < 4 && role != NULL && strcmp(roles[r], role) != 0) ++r;
  a->role = r == 4 || role == NULL ? ROLE_STATE : (arg_role)r;
  if (dtype != NULL && gl_dtype_from_name(dtype, &a->dtype) != 0) return bad(m, where, "dtype is not one the library knows");
  if (dtype == NULL && a->kind != KIND_TEXTURE && a->kind != KIND_RW_TEXTURE) return bad(m, where, "dtype is missing");
  long long ndim = 0;
  gl_json_int(gl_json_get(j, "ndim"), &ndim);
  if (ndim < 0 || ndim > GL_MAX_DIMS) return bad(m, where, "ndim must be 0 to 8");
  a->ndim = (int)ndim;
  if (GL_IS_TEXTURE(a->kind)) return read_texture(m, j, a, where);
  const gl_json *elem = gl_json_get(j, "element_shape");
  for (const gl_json *e = elem ? elem->child : NULL; e != NULL; e = e->next) {
    long long v;
    if (a->elem_ndim == 2 || gl_json_int(e, &v) != 0 || v < 1) return bad(m, where, "element_shape must be up to 2 sizes");
    a->elem[a->elem_ndim++] = v;
  }
  const gl_json *shape = gl_json_get(j, "shape");
  for (int d = 0; d < GL_MAX_DIMS; ++d) a->fixed[d] = -1;
  if (shape != NULL && shape->type == GL_JSON_ARRAY) {
    if ((int)shape->count != a->ndim) return bad(m, where, "shape has not ndim entries");
    a->shape_known = 1;
    int d = 0;
    for (const gl_json *e = shape->child; e != NULL; e = e->next, ++d) {
      if (e->type == GL_JSON_STRING) a->dim[d] = e->text; /* lives with the manifest tree: copied below */
      if (e->type == GL_JSON_STRING) continue;
      long long size = -1;
      if (e->type != GL_JSON_STRING && e->type != GL_JSON_NULL && (gl_json_int(e, &size) != 0 || size < 0))
        return bad(m, where, "a shape entry is no size");
      a->fixed[d] = size;
    }
    for (d = 0; d < a->ndim; ++d)
      if (a->dim[d] != NULL) a->dim[d] = gl_strdup(a->dim[d]);
  }
  return GL_OK;
}

typedef struct builder {
  gl_module *m;
  graph_spec *g;
  char where[512];
} builder;

static gl_status read_block(builder *b, const gl_json *list, const char *path, int *start, int *count, int depth);

static int arg_ref(builder *b, const gl_json *obj, const char *key, const char *path, int required, int *out) {
  const char *name = str_of(gl_json_get(obj, key));
  *out = -1;
  if (name == NULL) {
    if (!required) return 0;
    snprintf(b->where, sizeof b->where, "%s.%s", path, key);
    bad(b->m, b->where, "must name an arg of the graph");
    return -1;
  }
  *out = find_arg(b->g, name);
  if (*out < 0) {
    snprintf(b->where, sizeof b->where, "%s.%s", path, key);
    bad(b->m, b->where, "names no arg of the graph");
    return -1;
  }
  return 0;
}

static gl_status read_op(builder *b, const gl_json *obj, const char *path, int row, int depth) {
  const char *op = str_of(gl_json_get(obj, "op"));
  const char *node = str_of(gl_json_get(obj, "node"));
  op_spec o;
  memset(&o, 0, sizeof o);
  o.segment = o.flag = o.count = o.other = -1;
  o.node = gl_strdup(node ? node : "");
  if (op == NULL) {
    free(o.node);
    return bad(b->m, path, "an op needs \"op\": segment, repeat, cond or loop");
  }
  gl_status s = GL_OK;
  if (strcmp(op, "segment") == 0) {
    o.kind = OP_SEGMENT;
    const char *graph = str_of(gl_json_get(obj, "graph"));
    const gl_json *args = gl_json_get(obj, "args");
    if (graph == NULL || args == NULL || args->type != GL_JSON_ARRAY) {
      free(o.node);
      return bad(b->m, path, "a segment needs its module graph name and args");
    }
    segment_spec *seg = &b->g->segments[b->g->segment_count];
    seg->name = gl_strdup(graph);
    seg->args = calloc(args->count + 1, sizeof(int));
    for (const gl_json *a = args->child; a != NULL; a = a->next) {
      int i = a->type == GL_JSON_STRING ? find_arg(b->g, a->text) : -1;
      if (i < 0) s = bad(b->m, path, "a segment arg names no arg of the graph");
      else seg->args[seg->arg_count++] = i;
    }
    o.segment = b->g->segment_count++;
  } else if (strcmp(op, "repeat") == 0) {
    o.kind = OP_REPEAT;
    if (gl_json_int(gl_json_get(obj, "times"), &o.times) != 0 || o.times < 0) s = bad(b->m, path, "times must be a count");
    else s = read_block(b, gl_json_get(obj, "body"), path, &o.body, &o.body_len, depth);
  } else if (strcmp(op, "cond") == 0) {
    o.kind = OP_COND;
    if (arg_ref(b, obj, "flag", path, 1, &o.flag) != 0) s = GL_ERROR_MANIFEST;
    if (s == GL_OK) s = read_block(b, gl_json_get(obj, "then"), path, &o.body, &o.body_len, depth);
    const gl_json *other = gl_json_get(obj, "else");
    if (s == GL_OK && other != NULL && other->type != GL_JSON_NULL)
      s = read_block(b, other, path, &o.other, &o.other_len, depth);
  } else if (strcmp(op, "loop") == 0) {
    o.kind = OP_LOOP;
    if (arg_ref(b, obj, "while", path, 0, &o.flag) != 0 || arg_ref(b, obj, "count", path, 0, &o.count) != 0)
      s = GL_ERROR_MANIFEST;
    else if ((o.flag < 0) == (o.count < 0))
      s = bad(b->m, path, "a loop has exactly one of 'while' (a flag) and 'count' (a scalar)");
    const gl_json *max_iter = gl_json_get(obj, "max_iter");
    if (s == GL_OK && o.flag >= 0 && (gl_json_int(max_iter, &o.times) != 0 || o.times < 1))
      s = bad(b->m, path, "a while loop needs a positive max_iter");
    o.check_every = 1;
    const gl_json *every = gl_json_get(obj, "check_every");
    if (s == GL_OK && every != NULL && (gl_json_int(every, &o.check_every) != 0 || o.check_every < 1))
      s = bad(b->m, path, "check_every must be 1 or more");
    o.guarded = gl_json_get(obj, "guarded") != NULL && gl_json_get(obj, "guarded")->type == GL_JSON_TRUE;
    const gl_json *saves = gl_json_get(obj, "saves");
    if (s == GL_OK && saves != NULL && saves->type == GL_JSON_ARRAY) {
      o.saves = calloc(saves->count + 1, sizeof(int));
      for (const gl_json *a = saves->child; a != NULL && s == GL_OK; a = a->next) {
        int i = a->type == GL_JSON_STRING ? find_arg(b->g, a->text) : -1;
        if (i < 0 || b->g->args[i].kind != KIND_NDARRAY) s = bad(b->m, path, "saves names no ndarray arg of the graph");
        else o.saves[o.saves_len++] = i;
      }
    }
    if (s == GL_OK) s = read_block(b, gl_json_get(obj, "body"), path, &o.body, &o.body_len, depth);
  } else {
    s = bad(b->m, path, "op is not segment, repeat, cond or loop");
  }
  b->g->ops[row] = o;
  return s;
}

static int count_segments(const gl_json *v) {
  int n = v != NULL && v->type == GL_JSON_OBJECT && str_of(gl_json_get(v, "op")) != NULL &&
          strcmp(str_of(gl_json_get(v, "op")), "segment") == 0;
  for (const gl_json *c = v ? v->child : NULL; c != NULL; c = c->next) n += count_segments(c);
  return n;
}

static int count_ops(const gl_json *v) {
  int n = v != NULL && v->type == GL_JSON_OBJECT && gl_json_get(v, "op") != NULL;
  for (const gl_json *c = v ? v->child : NULL; c != NULL; c = c->next) n += count_ops(c);
  return n;
}

/* A block's rows are reserved first, then filled in order (their own blocks go after), so segments
 * are numbered in program order, as graphlab.deploy.manifest numbers them. */
static gl_status read_block(builder *b, const gl_json *list, const char *path, int *start, int *count, int depth) {
  if (list == NULL || list->type != GL_JSON_ARRAY) return bad(b->m, path, "a body must be a list of ops");
  if (depth > 64) return bad(b->m, path, "the control tree nests too deeply");
  *start = b->g->op_count;
  *count = (int)list->count;
  b->g->op_count += (int)list->count;
  int i = 0;
  for (const gl_json *item = list->child; item != NULL; item = item->next, ++i) {
    char sub[512];
    snprintf(sub, sizeof sub, "%s[%d]", path, i);
    gl_status s = read_op(b, item, sub, *start + i, depth + 1);
    if (s != GL_OK) return s;
  }
  return GL_OK;
}

static gl_status read_relations(gl_module *m, graph_spec *g, const gl_json *list, const char *path) {
  if (list == NULL || list->type != GL_JSON_ARRAY) return GL_OK;
  g->relations = calloc(list->count + 1, sizeof *g->relations);
  if (g->relations == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  for (const gl_json *r = list->child; r != NULL; r = r->next) {
    relation_spec *rel = &g->relations[g->relation_count];
    char where[512];
    snprintf(where, sizeof where, "%s[%d]", path, g->relation_count);
    const char *arg = str_of(gl_json_get(r, "arg")), *source = str_of(gl_json_get(r, "source"));
    long long axis = 0, source_axis = 0, minimum = 0;
    rel->arg = arg ? find_arg(g, arg) : -1;
    rel->source = source ? find_arg(g, source) : -1;
    if (rel->arg < 0 || (source != NULL && rel->source < 0) || gl_json_int(gl_json_get(r, "axis"), &axis) != 0)
      return bad(m, where, "a shape relation names no arg of the graph");
    gl_json_int(gl_json_get(r, "source_axis"), &source_axis);
    gl_json_int(gl_json_get(r, "minimum"), &minimum);
    if (axis < 0 || axis >= g->args[rel->arg].ndim || (rel->source >= 0 && (source_axis < 0 ||
        source_axis >= g->args[rel->source].ndim)))
      return bad(m, where, "a shape relation's axis is outside its arg");
    rel->axis = (int)axis;
    rel->source_axis = (int)source_axis;
    rel->minimum = minimum;
    const gl_json *guards = gl_json_get(r, "guards");
    rel->guards = calloc(2 * (guards ? guards->count : 0) + 2, sizeof(int));
    for (const gl_json *e = guards ? guards->child : NULL; e != NULL; e = e->next) {
      const char *name = str_of(gl_json_at(e, 0));
      long long ax = -1;
      int ga = name ? find_arg(g, name) : -1;
      if (ga < 0) return bad(m, where, "a guard names no arg of the graph");
      if (gl_json_int(gl_json_at(e, 1), &ax) != 0) ax = -1;
      rel->guards[2 * rel->guard_count] = ga;
      rel->guards[2 * rel->guard_count + 1] = (int)ax;
      ++rel->guard_count;
    }
    const char *node = str_of(gl_json_get(r, "node")), *access = str_of(gl_json_get(r, "access"));
    rel->node = gl_strdup(node ? node : "?");
    rel->access = gl_strdup(access ? access : "?");
    ++g->relation_count;
  }
  return GL_OK;
}

static gl_status read_graph(gl_module *m, const gl_json *j, graph_spec *g, int index) {
  char path[256];
  snprintf(path, sizeof path, "$.graphs[%d]", index);
  const char *name = str_of(gl_json_get(j, "name"));
  const gl_json *args = gl_json_get(j, "args"), *control = gl_json_get(j, "control");
  if (name == NULL || args == NULL || args->type != GL_JSON_ARRAY)
    return bad(m, path, "a graph needs a name and args");
  g->name = gl_strdup(name);
  g->args = calloc(args->count + 1, sizeof *g->args);
  if (g->args == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  for (const gl_json *a = args->child; a != NULL; a = a->next) {
    char where[300];
    snprintf(where, sizeof where, "%s.args[%d]", path, g->arg_count);
    gl_status s = read_arg(m, a, &g->args[g->arg_count++], where);
    if (s != GL_OK) return s;
  }
  const gl_json *writes = gl_json_get(j, "writes");
  for (const gl_json *w = writes ? writes->child : NULL; w != NULL; w = w->next) {
    int a = w->type == GL_JSON_STRING ? find_arg(g, w->text) : -1;
    if (a >= 0) g->args[a].written = 1;
  }
  int ops = count_ops(control), segments = count_segments(control);
  g->ops = calloc((size_t)ops + 1, sizeof *g->ops);
  g->segments = calloc((size_t)segments + 1, sizeof *g->segments);
  if (g->ops == NULL || g->segments == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  char where[300];
  if (control == NULL || control->type == GL_JSON_NULL) { /* no control flow: one module graph of its name */
    g->segments[0].name = gl_strdup(name);
    g->segments[0].args = calloc((size_t)g->arg_count + 1, sizeof(int));
    if (g->segments[0].args == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
    for (int a = 0; a < g->arg_count; ++a) g->segments[0].args[a] = a;
    g->segments[0].arg_count = g->arg_count;
    g->segment_count = 1;
    g->ops[0] = (op_spec){OP_SEGMENT, gl_strdup(""), 0, -1, -1, 0, 0, 0, -1, 0, 1, 0, 0, NULL};
    g->op_count = 1;
    g->body = 0;
    g->body_len = 1;
  } else {
    builder b = {m, g, {0}};
    snprintf(where, sizeof where, "%s.control", path);
    gl_status s = read_block(&b, control, where, &g->body, &g->body_len, 0);
    if (s != GL_OK) return s;
  }
  snprintf(where, sizeof where, "%s.shape_relations", path);
  return read_relations(m, g, gl_json_get(j, "shape_relations"), where);
}

static gl_status read_tables(gl_module *m, const gl_json *manifest) {
  const char *format = str_of(gl_json_get(manifest, "format"));
  if (format == NULL || strcmp(format, "graphlab.module/1") != 0)
    return bad(m, "$.format", "is not \"graphlab.module/1\": not a manifest gl.export wrote");
  const char *arch = str_of(gl_json_get(manifest, "arch"));
  if (arch == NULL) return bad(m, "$.arch", "is missing");
  m->arch = gl_strdup(arch);
  if (strcmp(arch, "x64") == 0) m->ti_arch = TI_ARCH_X64;
  else if (strcmp(arch, "vulkan") == 0) m->ti_arch = TI_ARCH_VULKAN;
  else if (strcmp(arch, "cuda") == 0) m->ti_arch = TI_ARCH_CUDA;
  else return bad(m, "$.arch", "is not x64, vulkan or cuda, the archs the library runs");
  m->direct_mapping = m->ti_arch != TI_ARCH_VULKAN;
  const char *version = str_of(gl_json_get(manifest, "graphlab_version"));
  m->graphlab_version = gl_strdup(version ? version : "");
  const gl_json *graphs = gl_json_get(manifest, "graphs");
  if (graphs == NULL || graphs->type != GL_JSON_ARRAY) return bad(m, "$.graphs", "must be a list of graphs");
  m->specs = calloc(graphs->count + 1, sizeof *m->specs);
  m->graphs = calloc(graphs->count + 1, sizeof *m->graphs);
  if (m->specs == NULL || m->graphs == NULL) return gl_fail(m->error, GL_ERROR_MEMORY, "out of memory");
  for (const gl_json *g = graphs->child; g != NULL; g = g->next) {
    gl_status s = read_graph(m, g, &m->specs[m->graph_count], m->graph_count);
    ++m->graph_count;
    if (s != GL_OK) return s;
  }
  const gl_json *dims = gl_json_get(manifest, "dims");
  m->dims = calloc((dims ? dims->count : 0) + 1, sizeof *m->dims);
  for (const gl_json *d = dims ? dims->child : NULL; d != NULL; d = d->next) {
    long long v;
    if (gl_json_int(d, &v) != 0 || v < 0) return bad(m, "$.dims", "a dim is not a size");
    m->dims[m->dim_count].name = gl_strdup(d->key);
    m->dims[m->dim_count++].value = v;
  }
  const gl_json *slots = gl_json_get(gl_json_get(manifest, "memory_plan"), "slots");
  for (const gl_json *slot = slots ? slots->child : NULL; slot != NULL; slot = slot->next) {
    long long id;
    if (gl_json_int(gl_json_get(slot, "slot"), &id) != 0) return bad(m, "$.memory_plan.slots", "a slot has no number");
    const gl_json *names = gl_json_get(slot, "args");
    for (const gl_json *n = names ? names->child : NULL; n != NULL; n = n->next)
      for (int g = 0; g < m->graph_count; ++g) {
        int a = n->type == GL_JSON_STRING ? find_arg(&m->specs[g], n->text) : -1;
        if (a >= 0 && m->specs[g].args[a].role == ROLE_TEMP) m->specs[g].args[a].slot = (int)id;
      }
  }
  return GL_OK;
}

gl_status gl_read_manifest(gl_module *m) {
  char path[4096], err[256];
  snprintf(path, sizeof path, "%s/manifest.json", m->folder);
  size_t size;
  char *text = gl_read_file(path, &size);
  if (text == NULL)
    return gl_fail(m->error, GL_ERROR_MANIFEST, "%s: cannot read (%s); is %s a folder gl.export wrote?", path,
                   strerror(errno), m->folder);
  gl_sha256_hex(text, size, m->manifest_sha256);
  gl_json *manifest = gl_json_parse(text, size, err, sizeof err);
  free(text);
  if (manifest == NULL) return gl_fail(m->error, GL_ERROR_MANIFEST, "%s is not JSON: %s", path, err);
  gl_status s = read_tables(m, manifest);
  if (s == GL_OK) s = check_files(m, gl_json_get(manifest, "files"));
  if (s == GL_OK) s = check_contract(m, manifest);
  if (s == GL_OK) s = check_module_table(m);
  gl_json_free(manifest);
  return s;
}

void gl_free_specs(gl_module *m) {
  for (int g = 0; g < m->graph_count; ++g) {
    graph_spec *spec = &m->specs[g];
    for (int a = 0; a < spec->arg_count; ++a) {
      free(spec->args[a].name);
      for (int d = 0; d < spec->args[a].ndim; ++d) free((char *)spec->args[a].dim[d]);
    }
    for (int s = 0; s < spec->segment_count; ++s) {
      free(spec->segments[s].name);
      free(spec->segments[s].args);
    }
    for (int o = 0; o < spec->op_count; ++o) {
      free(spec->ops[o].node);
      free(spec->ops[o].saves);
    }
    for (int r = 0; r < spec->relation_count; ++r) {
      free(spec->relations[r].guards);
      free(spec->relations[r].node);
      free(spec->relations[r].access);
    }
    free(spec->name);
    free(spec->args);
    free(spec->segments);
    free(spec->ops);
    free(spec->relations);
  }
  free(m->specs);
  for (int d = 0; d < m->dim_count; ++d) free(m->dims[d].name);
  free(m->dims);
}
