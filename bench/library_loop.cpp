// library_loop.cpp: the embedded C++ path for deploy_speed.py --library: an export's graph run per frame
// through graphlab_runtime.hpp (the README's embedding), its ndarrays given once from .npy files.
//
//   library_loop EXPORT GRAPH IN_DIR FRAMES NAME...
//
// Each NAME is an ndarray arg read from IN_DIR/NAME.npy. Prints the first frame's time and the mean of
// the others, as the host program does.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphlab_runtime.hpp"
extern "C" {
#include "npy.h"
}

static double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: library_loop EXPORT GRAPH IN_DIR FRAMES NAME...\n");
    return 2;
  }
  const long frames = std::strtol(argv[4], nullptr, 10);
  try {
    graphlab::Module module(argv[1]);
    graphlab::Graph graph = module.graph(argv[2]);
    for (int i = 5; i < argc; ++i) {
      const std::string path = std::string(argv[3]) + "/" + argv[i] + ".npy";
      NpyArray array;
      char err[512];
      if (npy_read(path.c_str(), &array, err, sizeof err) != 0) throw graphlab::Error(GL_ERROR_IO, path + ": " + err);
      const gl_dtype dtype = array.dtype == NPY_I32 ? GL_I32 : array.dtype == NPY_F64 ? GL_F64 : GL_F32;
      const gl_status status = gl_graph_set_array(graph.handle(), argv[i], array.data, dtype, array.ndim, array.shape);
      npy_free(&array);
      if (status != GL_OK) throw graphlab::Error(status, gl_graph_error(graph.handle()));
    }
    double start = now_ms(), first = 0;
    for (long f = 0; f < frames; ++f) {
      graph.run();
      if (f == 0) {
        first = now_ms() - start;
        start = now_ms();
      }
    }
    const double rest = now_ms() - start;
    std::printf("first frame: %.3f ms\n", first);
    if (frames > 1)
      std::printf("%.3f ms per frame (mean of the %ld frames after the first)\n", rest / double(frames - 1), frames - 1);
  } catch (const graphlab::Error &e) {
    std::fprintf(stderr, "library_loop: %s\n", e.what());
    return 1;
  }
  return 0;
}
