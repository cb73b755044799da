/*
 * gl_json.c: the recursive-descent reader behind gl_json.h (RFC 8259, UTF-8 input).
 */
#include "gl_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
  const char *p, *start, *end;
  char *err;
  size_t err_size;
  int failed;
} parser;

static void fail(parser *ps, const char *what) {
  if (ps->failed) return;
  ps->failed = 1;
  int line = 1, column = 1;
  for (const char *c = ps->start; c < ps->p && c < ps->end; ++c) {
    if (*c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  snprintf(ps->err, ps->err_size, "line %d column %d: %s", line, column, what);
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ++ps->p;
}

static gl_json *node(parser *ps, gl_json_type type) {
  gl_json *value = calloc(1, sizeof *value);
  if (value == NULL) fail(ps, "out of memory");
  else value->type = type;
  return value;
}

static int hex4(parser *ps, unsigned *out) {
  if (ps->end - ps->p < 4) return -1;
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = *ps->p++;
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

static size_t put_utf8(char *out, unsigned cp) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F)); return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* A string at ps->p (on its opening quote): its decoded bytes, NUL-terminated, malloc'ed. */
static char *string(parser *ps) {
  ++ps->p;
  const char *from = ps->p;
  while (ps->p < ps->end && *ps->p != '"') ps->p += *ps->p == '\\' ? 2 : 1;
  if (ps->p >= ps->end) { fail(ps, "a string is not closed"); return NULL; }
  char *out = malloc((size_t)(ps->p - from) + 1);  /* decoding never grows the text */
  if (out == NULL) { fail(ps, "out of memory"); return NULL; }
  size_t n = 0;
  const char *stop = ps->p;
  ps->p = from;
  while (ps->p < stop) {
    unsigned char c = (unsigned char)*ps->p++;
    if (c < 0x20) { fail(ps, "a control character inside a string"); free(out); return NULL; }
    if (c != '\\') { out[n++] = (char)c; continue; }
    char e = *ps->p++;
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e != '\0' && simple != NULL) {
      out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
      continue;
    }
    unsigned cp;
    if (e != 'u' || hex4(ps, &cp) != 0) { fail(ps, "a bad escape in a string"); free(out); return NULL; }
    if (cp >= 0xD800 && cp < 0xDC00 && stop - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
      unsigned low;
      ps->p += 2;
      if (hex4(ps, &low) != 0 || low < 0xDC00 || low > 0xDFFF) { fail(ps, "a bad surrogate pair"); free(out); return NULL; }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    n += put_utf8(out + n, cp);
  }
  out[n] = '\0';
  ps->p = stop + 1;
  return out;
}

static gl_json *value(parser *ps, int depth);

static gl_json *container(parser *ps, int depth, int is_object) {
  gl_json *list = node(ps, is_object ? GL_JSON_OBJECT : GL_JSON_ARRAY);
  if (list == NULL) return NULL;
  char close = is_object ? '}' : ']';
  gl_json **tail = &list->child;
  ++ps->p;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == close) { ++ps->p; return list; }
  for (;;) {
    char *key = NULL;
    skip_space(ps);
    if (is_object) {
      if (ps->p >= ps->end || *ps->p != '"') { fail(ps, "expected a member name in quotes"); break; }
      key = string(ps);
      if (key == NULL) break;
      skip_space(ps);
      if (ps->p >= ps->end || *ps->p != ':') { fail(ps, "expected ':' after a member name"); free(key); break; }
      ++ps->p;
    }
    gl_json *item = value(ps, depth + 1);
    if (item == NULL) { free(key); break; }
    item->key = key;
    *tail = item;
    tail = &item->next;
    ++list->count;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == ',') { ++ps->p; continue; }
    if (ps->p < ps->end && *ps->p == close) { ++ps->p; return list; }
    fail(ps, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    break;
  }
  gl_json_free(list);
  return NULL;
}

static gl_json *number(parser *ps) {
  const char *from = ps->p;
  if (ps->p < ps->end && *ps->p == '-') ++ps->p;
  while (ps->p < ps->end && strchr("0123456789.eE+-", *ps->p) != NULL && *ps->p != '\0') ++ps->p;
  size_t len = (size_t)(ps->p - from);
  gl_json *v = node(ps, GL_JSON_NUMBER);
  if (v == NULL) return NULL;
  v->text = malloc(len + 1);
  if (v->text == NULL) { fail(ps, "out of memory"); gl_json_free(v); return NULL; }
  memcpy(v->text, from, len);
  v->text[len] = '\0';
  char *stop;
  errno = 0;
  v->number = strtod(v->text, &stop);
  if (len == 0 || *stop != '\0') { ps->p = from; fail(ps, "not a JSON value"); gl_json_free(v); return NULL; }
  return v;
}

static gl_json *value(parser *ps, int depth) {
  skip_space(ps);
  if (depth > MAX_DEPTH) { fail(ps, "nested too deeply"); return NULL; }
  if (ps->p >= ps->end) { fail(ps, "the text ends where a value should be"); return NULL; }
  char c = *ps->p;
  if (c == '{' || c == '[') return container(ps, depth, c == '{');
  if (c == '"') {
    char *text = string(ps);
    if (text == NULL) return NULL;
    gl_json *v = node(ps, GL_JSON_STRING);
    if (v == NULL) free(text);
    else v->text = text;
    return v;
  }
  static const struct { const char *word; gl_json_type type; } words[] = {
      {"null", GL_JSON_NULL}, {"true", GL_JSON_TRUE}, {"false", GL_JSON_FALSE}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
    size_t len = strlen(words[i].word);
    if ((size_t)(ps->end - ps->p) >= len && memcmp(ps->p, words[i].word, len) == 0) {
      ps->p += len;
      return node(ps, words[i].type);
    }
  }
  return number(ps);
}

gl_json *gl_json_parse(const char *text, size_t size, char *err, size_t err_size) {
  parser ps = {text, text, text + size, err, err_size, 0};
  gl_json *root = value(&ps, 0);
  skip_space(&ps);
  if (root != NULL && ps.p != ps.end) {
    fail(&ps, "text after the JSON value");
    gl_json_free(root);
    return NULL;
  }
  return root;
}

void gl_json_free(gl_json *v) {
  while (v != NULL) {
    gl_json *next = v->next;
    gl_json_free(v->child);
    free(v->key);
    free(v->text);
    free(v);
    v = next;
  }
}

const gl_json *gl_json_get(const gl_json *object, const char *key) {
  if (object == NULL || object->type != GL_JSON_OBJECT) return NULL;
  for (const gl_json *m = object->child; m != NULL; m = m->next)
    if (strcmp(m->key, key) == 0) return m;
  return NULL;
}

const gl_json *gl_json_at(const gl_json *array, size_t i) {
  if (array == NULL || array->type != GL_JSON_ARRAY) return NULL;
  const gl_json *e = array->child;
  while (e != NULL && i-- > 0) e = e->next;
  return e;
}

int gl_json_equal(const gl_json *a, const gl_json *b) {
  if (a == NULL || b == NULL) return a == b;
  if (a->type != b->type || a->count != b->count) return 0;
  switch (a->type) {
    case GL_JSON_NUMBER: return a->number == b->number;
    case GL_JSON_STRING: return strcmp(a->text, b->text) == 0;
    case GL_JSON_ARRAY:
      for (const gl_json *x = a->child, *y = b->child; x != NULL; x = x->next, y = y->next)
        if (!gl_json_equal(x, y)) return 0;
      return 1;
    case GL_JSON_OBJECT:
      for (const gl_json *x = a->child; x != NULL; x = x->next)
        if (!gl_json_equal(x, gl_json_get(b, x->key))) return 0;
      return 1;
    default: return 1;
  }
}

int gl_json_int(const gl_json *v, long long *out) {
  if (v == NULL || v->type != GL_JSON_NUMBER || strpbrk(v->text, ".eE") != NULL) return -1;
  char *stop;
  errno = 0;
  long long n = strtoll(v->text, &stop, 10);
  if (errno != 0 || *stop != '\0') return -1;
  *out = n;
  return 0;
}
