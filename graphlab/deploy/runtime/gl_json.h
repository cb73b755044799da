/*
 * gl_json.h: a small JSON reader for manifest.json, contract.json and Taichi's graphs.json.
 *
 * The runtime library must read the export's JSON without Python and without a dependency, so this
 * is a recursive-descent parser into one malloc'ed tree. Numbers keep their text (exact compare) and
 * a double; objects keep their key order. Depth is bounded, so hostile input cannot exhaust the stack.
 */
#ifndef GRAPHLAB_JSON_H
#define GRAPHLAB_JSON_H

#include <stddef.h>

typedef enum gl_json_type {
  GL_JSON_NULL, GL_JSON_FALSE, GL_JSON_TRUE, GL_JSON_NUMBER, GL_JSON_STRING, GL_JSON_ARRAY, GL_JSON_OBJECT
} gl_json_type;

typedef struct gl_json {
  gl_json_type type;
  char *key;              /* the member name, inside an object */
  char *text;             /* strings: the decoded UTF-8; numbers: the source text */
  double number;
  struct gl_json *child;  /* first element or member */
  struct gl_json *next;   /* next sibling */
  size_t count;           /* elements or members */
} gl_json;

/* Parse `size` bytes. Returns the tree, or NULL with a message ("line 3 column 7: ...") in `err`. */
gl_json *gl_json_parse(const char *text, size_t size, char *err, size_t err_size);
void gl_json_free(gl_json *value);

/* The member `key` of an object (NULL when absent or not an object). */
const gl_json *gl_json_get(const gl_json *object, const char *key);
/* Element `i` of an array (NULL when out of range). */
const gl_json *gl_json_at(const gl_json *array, size_t i);
/* Whether two values are equal as JSON: objects regardless of key order, numbers by value. */
int gl_json_equal(const gl_json *a, const gl_json *b);
/* An integer value in *out; returns 0, or -1 when the value is no integral number. */
int gl_json_int(const gl_json *value, long long *out);

#endif /* GRAPHLAB_JSON_H */
