// graphlab_runtime.hpp: a header-only C++17 wrapper over graphlab_runtime.h.
//
// RAII handles (graphlab::Module closes its module; graphlab::Graph borrows a graph the module owns),
// graphlab::Error carrying the library's message and status, and graphlab::Span, a small view of
// contiguous elements (std::span is C++20; this header keeps to C++17):
//
//   graphlab::Module module("out/mpm88");
//   graphlab::Graph update = module.graph("update");
//   std::vector<float> x(2 * n);
//   update.set("x", graphlab::Span<const float>(x), {n, 2});
//   update.run();
//   update.get("x", graphlab::Span<float>(x));
#ifndef GRAPHLAB_RUNTIME_HPP
#define GRAPHLAB_RUNTIME_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphlab_runtime.h"

namespace graphlab {

// A failed call: what() is the library's message (naming the arg, graph or file), status() its code.
class Error : public std::runtime_error {
 public:
  Error(gl_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  gl_status status() const noexcept { return status_; }

 private:
  gl_status status_;
};

// A view of `size` contiguous elements (what std::span<T> is in C++20).
template <class T>
class Span {
 public:
  Span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
  template <class Container, class = decltype(std::declval<Container &>().data())>
  Span(Container &c) noexcept : data_(c.data()), size_(c.size()) {}  // NOLINT: implicit, as std::span
  T *data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  T &operator[](std::size_t i) const noexcept { return data_[i]; }
  T *begin() const noexcept { return data_; }
  T *end() const noexcept { return data_ + size_; }

 private:
  T *data_;
  std::size_t size_;
};

// The gl_dtype of a C++ element type.
template <class T>
constexpr gl_dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<U> && !std::is_same_v<U, bool>, "an element must be a number type");
  if constexpr (std::is_same_v<U, float>) return GL_F32;
  else if constexpr (std::is_same_v<U, double>) return GL_F64;
  else if constexpr (std::is_signed_v<U>) return sizeof(U) == 1 ? GL_I8 : sizeof(U) == 2 ? GL_I16 : sizeof(U) == 4 ? GL_I32 : GL_I64;
  else return sizeof(U) == 1 ? GL_U8 : sizeof(U) == 2 ? GL_U16 : sizeof(U) == 4 ? GL_U32 : GL_U64;
}

// One graph of a Module (valid while the module lives). Each call throws Error on failure.
class Graph {
 public:
  explicit Graph(gl_graph *graph) noexcept : graph_(graph) {}
  gl_graph *handle() const noexcept { return graph_; }

  // Copy host values into an ndarray arg; `shape` is the field dims then the element dims.
  template <class T>
  Graph &set(const char *name, Span<const T> values, std::initializer_list<std::int64_t> shape) {
    std::vector<std::int64_t> dims(shape);
    std::size_t count = 1;
    for (std::int64_t d : dims) count *= static_cast<std::size_t>(d);
    if (count != values.size())
      throw Error(GL_ERROR_ARGUMENT, std::string("Graph::set: '") + name + "' has " + std::to_string(values.size()) +
                                         " elements but its shape holds " + std::to_string(count));
    check(gl_graph_set_array(graph_, name, values.data(), dtype_of<T>(), static_cast<int>(dims.size()), dims.data()));
    return *this;
  }
  template <class T>
  Graph &set(const char *name, const std::vector<T> &values, std::initializer_list<std::int64_t> shape) {
    return set(name, Span<const T>(values.data(), values.size()), shape);
  }
  // A scalar arg's value (its C++ type must be the arg's dtype).
  template <class T>
  Graph &scalar(const char *name, T value) {
    check(gl_graph_set_scalar(graph_, name, dtype_of<T>(), &value));
    return *this;
  }
  Graph &dim(const char *name, std::int64_t size) {
    check(gl_graph_set_dim(graph_, name, size));
    return *this;
  }
  // Run with the control flow; `on_decision` hears every flag read.
  Graph &run(const std::function<void(const gl_decision &)> &on_decision = {}) {
    if (!on_decision) {
      check(gl_graph_run(graph_, nullptr, nullptr));
      return *this;
    }
    auto call = [](void *user, const gl_decision *d) {
      (*static_cast<const std::function<void(const gl_decision &)> *>(user))(*d);
    };
    check(gl_graph_run(graph_, call, const_cast<void *>(static_cast<const void *>(&on_decision))));
    return *this;
  }
  // Copy an ndarray arg's values out (the span must hold exactly its elements).
  template <class T>
  void get(const char *name, Span<T> out) const {
    check(gl_graph_get_array(graph_, name, out.data(), out.size_bytes()));
  }
  // An ndarray arg's values, as a new vector of T.
  template <class T>
  std::vector<T> get(const char *name) const {
    std::size_t bytes = 0;
    check(gl_graph_arg_bytes(graph_, name, &bytes));
    std::vector<T> out(bytes / sizeof(T));
    get(name, Span<T>(out.data(), out.size()));
    return out;
  }
  Graph &capture(const char *folder, unsigned flags = 0, std::uint64_t limit_bytes = 0) {
    check(gl_graph_capture(graph_, folder, flags, limit_bytes));
    return *this;
  }
  std::string last_capture() const { return gl_graph_last_capture(graph_); }

 private:
  void check(gl_status status) const {
    if (status != GL_OK) throw Error(status, gl_graph_error(graph_));
  }
  gl_graph *graph_;
};

// An opened export folder; closes it (and its graphs) when destroyed.
class Module {
 public:
  explicit Module(const std::string &path, TiRuntime runtime = TI_NULL_HANDLE) {
    gl_status status = gl_module_open(path.c_str(), runtime, &module_);
    if (status != GL_OK) {
      std::string message = gl_module_error(module_);
      gl_module_close(module_);
      throw Error(status, message);
    }
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  Module(Module &&other) noexcept : module_(std::exchange(other.module_, nullptr)) {}
  Module &operator=(Module &&other) noexcept {
    if (this != &other) {
      gl_module_close(module_);
      module_ = std::exchange(other.module_, nullptr);
    }
    return *this;
  }
  ~Module() { gl_module_close(module_); }

  Graph graph(const char *name) {
    gl_graph *graph = nullptr;
    gl_status status = gl_graph_get(module_, name, &graph);
    if (status != GL_OK) throw Error(status, gl_module_error(module_));
    return Graph(graph);
  }
  gl_module *handle() const noexcept { return module_; }
  TiRuntime runtime() const noexcept { return gl_module_runtime(module_); }

 private:
  gl_module *module_ = nullptr;
};

}  // namespace graphlab

#endif  // GRAPHLAB_RUNTIME_HPP
