/*
 * runtime_errors.c: the runtime library's refusals of calls out of order or with bad arguments (built
 * by tests/tests/deploy/test_runtime_library.py under the sanitizers). Usage: runtime_errors EXPORT_FOLDER, on the
 * export of tests/deploy/test_export_control_flow.py's poisson and branchy graphs. Prints one line per call:
 * "<label> <status name> <message>".
 */
#include <stdint.h>
#include <stdio.h>

#include "graphlab_runtime.h"

static void show(const char *label, gl_status status, const char *message) {
  printf("%s %s %s\n", label, gl_status_name(status), status == GL_OK ? "" : message);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  gl_module *module;
  gl_status s = gl_module_open(argv[1], TI_NULL_HANDLE, &module);
  show("open", s, gl_module_error(module));
  if (s != GL_OK) return 1;
  gl_graph *graph = NULL;
  show("get-unknown-graph", gl_graph_get(module, "nope", &graph), gl_module_error(module));
  show("get-graph", gl_graph_get(module, "branchy", &graph), gl_module_error(module));
  gl_graph *again = NULL;
  gl_graph_get(module, "branchy", &again);
  printf("same-handle %d\n", again == graph);
  float x[4] = {4, 8, 4, 8}, out[4] = {0};
  int64_t shape[1] = {4};
  show("get-before-run", gl_graph_get_array(graph, "x", out, sizeof out), gl_graph_error(graph));
  show("set-null-data", gl_graph_set_array(graph, "x", NULL, GL_F32, 1, shape), gl_graph_error(graph));
  show("set-null-memory", gl_graph_set_memory(graph, "x", TI_NULL_HANDLE, GL_F32, 1, shape), gl_graph_error(graph));
  show("set-array-on-scalar", gl_graph_set_array(graph, "limit", x, GL_F32, 0, shape), gl_graph_error(graph));
  show("set-scalar-on-array", gl_graph_set_scalar(graph, "x", GL_F32, x), gl_graph_error(graph));
  show("set-unknown-arg", gl_graph_set_scalar(graph, "nope", GL_F32, x), gl_graph_error(graph));
  show("set-unknown-dim", gl_graph_set_dim(graph, "m", 4), gl_graph_error(graph));
  show("set-huge-dim", gl_graph_set_dim(graph, "n", (int64_t)1 << 40), gl_graph_error(graph));
  show("set-negative-shape", gl_graph_set_array(graph, "x", x, GL_F32, 1, (int64_t[]){-1}), gl_graph_error(graph));
  show("set-x", gl_graph_set_array(graph, "x", x, GL_F32, 1, shape), gl_graph_error(graph));
  float limit = 5.0f;
  show("set-limit", gl_graph_set_scalar(graph, "limit", GL_F32, &limit), gl_graph_error(graph));
  show("capture-unwritable", gl_graph_capture(graph, "/proc/graphlab-capture", 0, 0), gl_graph_error(graph));
  show("run-capture-fails", gl_graph_run(graph, NULL, NULL), gl_graph_error(graph));
  show("capture-off", gl_graph_capture(graph, NULL, 0, 0), gl_graph_error(graph));
  show("run", gl_graph_run(graph, NULL, NULL), gl_graph_error(graph));
  show("get-wrong-size", gl_graph_get_array(graph, "x", out, 3), gl_graph_error(graph));
  show("get-scalar", gl_graph_get_array(graph, "limit", out, 4), gl_graph_error(graph));
  size_t bytes = 0;
  show("bytes-scalar", gl_graph_arg_bytes(graph, "limit", &bytes), gl_graph_error(graph));
  show("get-x", gl_graph_get_array(graph, "x", out, sizeof out), gl_graph_error(graph));
  printf("x %g %g %g %g\n", out[0], out[1], out[2], out[3]);
  show("null-graph", gl_graph_run(NULL, NULL, NULL), gl_graph_error(NULL));
  gl_module_close(module);
  gl_module_close(NULL);
  return 0;
}
