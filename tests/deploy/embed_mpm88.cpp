// embed_mpm88.cpp: the README's embedding, for mpm88 (built by tests/test_embedding.py with
// g++ -std=c++17 -Wall -Wextra -Werror). Usage: embed_mpm88 EXPORT IN_DIR OUT_DIR N: reads
// IN_DIR/{x,v,C,J}.bin (raw float32), runs graph "update" once, writes OUT_DIR/{x,v,C,J}.bin.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "graphlab_runtime.hpp"
#include "update.h"

static std::vector<float> load(const std::string &path, std::size_t n) {
  std::vector<float> values(n);
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char *>(values.data()), std::streamsize(n * 4));
  return values;
}

static void save(const std::string &path, const std::vector<float> &values) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(values.data()), std::streamsize(values.size() * 4));
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const std::string in = argv[2], out = argv[3];
  const std::size_t n = std::stoul(argv[4]);
  try {
    graphlab::Module module(argv[1]);
    graphlab::Graph graph = module.graph(MPM88_UPDATE_GRAPH);
    std::vector<float> x = load(in + "/x.bin", 2 * n), v = load(in + "/v.bin", 2 * n);
    std::vector<float> C = load(in + "/C.bin", 4 * n), J = load(in + "/J.bin", n);
    mpm88_update_args args{};  // grid_v, grid_m left NULL: the library allocates them from dim G
    args.x = x.data(), args.v = v.data(), args.C = C.data(), args.J = J.data();
    args.dim_n = static_cast<std::int64_t>(n);
    if (mpm88_update_run(graph.handle(), &args) != GL_OK) throw graphlab::Error(GL_ERROR_STATE, gl_graph_error(graph.handle()));
    save(out + "/x.bin", x), save(out + "/v.bin", v), save(out + "/C.bin", C), save(out + "/J.bin", J);
  } catch (const graphlab::Error &e) {
    std::fprintf(stderr, "error %d: %s\n", int(e.status()), e.what());
    return 1;
  }
  return 0;
}
