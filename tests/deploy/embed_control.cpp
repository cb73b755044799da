// embed_control.cpp: a graph with a while loop and one with a conditional, through their typed headers
// and the C++ wrapper (built by tests/test_embedding.py with -Wall -Wextra -Werror). Usage:
// embed_control EXPORT IN_DIR OUT_DIR N: reads IN_DIR/{u,f,x}.bin (raw float32, N each), runs
// "poisson" (tol 1e-4) then "branchy" (limit 5), writes OUT_DIR/{u,x}.bin and prints each decision.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "branchy.h"
#include "graphlab_runtime.hpp"
#include "poisson.h"

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
    std::vector<float> u = load(in + "/u.bin", n), f = load(in + "/f.bin", n), x = load(in + "/x.bin", n);
    std::vector<std::int32_t> flag{1};
    control_poisson_args solve{};  // u_new (a temp) left NULL: the memory plan's slot
    solve.u = u.data(), solve.f = f.data(), solve.flag = flag.data(), solve.tol = 1e-4f;
    solve.dim_n = static_cast<std::int64_t>(n);
    graphlab::Graph poisson = module.graph(CONTROL_POISSON_GRAPH);
    if (control_poisson_run(poisson.handle(), &solve) != GL_OK) throw graphlab::Error(GL_ERROR_STATE, gl_graph_error(poisson.handle()));
    graphlab::Graph branchy = module.graph(CONTROL_BRANCHY_GRAPH);
    branchy.set("x", graphlab::Span<const float>(x.data(), n), {std::int64_t(n)}).scalar("limit", 5.0f);
    branchy.run([](const gl_decision &d) { std::printf("decision %s %s %d %s\n", d.node, d.kind, int(d.value), d.outcome); });
    branchy.get("x", graphlab::Span<float>(x));
    save(out + "/u.bin", u), save(out + "/x.bin", x);
    std::printf("iterations-flag %d\n", int(flag[0]));
  } catch (const graphlab::Error &e) {
    std::fprintf(stderr, "error %d: %s\n", int(e.status()), e.what());
    return 1;
  }
  return 0;
}
