"""Write, and build, what embeds an export in another program: the runtime library and typed headers.

``generate_embedding(out)`` writes ``out/runtime/`` (the sources of the C99 library
``graphlab_runtime`` with its ``CMakeLists.txt`` and the C++17 wrapper ``graphlab_runtime.hpp``, from
this package's ``runtime/`` folder) and ``out/include/<graph>.h`` for every graph: a struct of the
graph's args with their C types and documented shapes, and ``<module>_<graph>_run(graph, &args)``,
which gives the args, runs the graph with its control flow and copies the arrays back.
``build_runtime(source, build)`` builds the library with CMake (tests and benchmarks; a user's own
project uses ``add_subdirectory`` or ``find_package``, as ``host/README.md`` shows).

For example (needs cmake and a C compiler)::

    lib = build_runtime("out/mpm88/runtime", "out/mpm88/runtime/build")
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

from graphlab._version import __version__
from graphlab.core.errors import ToolMissingError
from graphlab.core.spec import Arg
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.errors import HostBuildError
from graphlab.deploy.folders import RUNTIME_FILES
from graphlab.deploy.manifest import Manifest, read_manifest

__all__ = ["build_runtime", "c_identifier", "generate_embedding", "module_name", "readme_example", "typed_header"]

#: The package-data folder with the library's sources.
RUNTIME_SOURCES = files("graphlab.deploy") / "runtime"
#: numpy-style dtype names as C types.
C_TYPES = {
    "f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
    "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
}  # fmt: skip


def c_identifier(text: str) -> str:
    """``text`` as a C identifier: other characters become ``_``, and a leading digit gets one before it.

    >>> c_identifier("mpm-88.v2")
    'mpm_88_v2'
    >>> c_identifier("3d")
    '_3d'
    """
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return f"_{ident}" if not ident or ident[0].isdigit() else ident


def module_name(folder: Path) -> str:
    """The export's name: its folder's, or the target's while gl.export fills ``.<name>.export-...``."""
    hidden = re.fullmatch(r"\.(.+)\.export-.*", folder.name)
    return hidden.group(1) if hidden else folder.name


def _comment(text: str) -> str:
    return "".join(c if " " <= c < "\x7f" else "?" for c in text).replace("*/", "*?/")


def _shape_cells(arg: Arg, field: str) -> list[str]:
    """The C expressions of an ndarray's shape: fixed sizes, ``args->dim_<name>``, or ``args-><arg>_shape[d]``."""
    cells = []
    for d in range(arg.ndim):
        size = arg.shape[d] if arg.shape else None
        if isinstance(size, int):
            cells.append(str(size))
        elif isinstance(size, str):
            cells.append(f"args->dim_{c_identifier(size)}")
        else:
            cells.append(f"args->{field}_shape[{d}]")
    return cells + [str(e) for e in arg.element_shape]


def _describe(arg: Arg) -> str:
    if arg.kind != "ndarray":
        elem = f"[{'x'.join(map(str, arg.element_shape))}]" if arg.element_shape else ""
        return f"{arg.name}: {arg.dtype} {arg.kind}{elem}, {arg.role}"
    shape = ", ".join(str(s) for s in arg.shape) if arg.shape else f"{arg.ndim} dims given in {arg.name}_shape"
    elem = f", elements {'x'.join(map(str, arg.element_shape))}" if arg.element_shape else ""
    return f"{arg.name}: {arg.dtype} {arg.kind} [{shape}]{elem}, {arg.role}"


def typed_header(manifest: Manifest, graph: str, module: str) -> str:
    """The text of ``include/<graph>.h`` for one graph of the manifest."""
    spec = next(g for g in manifest.graphs if g.name == graph)
    prefix = f"{c_identifier(module)}_{c_identifier(graph)}"
    guard = f"GRAPHLAB_{prefix.upper()}_H"
    fields, sets, gets, dims = [], [], [], []
    for arg in spec.args:
        field = c_identifier(arg.name)
        literal = '"' + arg.name.replace("\\", "\\\\").replace('"', '\\"') + '"'
        ctype = C_TYPES.get(arg.dtype or "", "float")
        gl_dtype = f"GL_{(arg.dtype or 'f32').upper()}"
        if arg.kind == "ndarray":
            fields.append(f"  /* {_comment(_describe(arg))}. NULL: allocated and kept by the library. */")
            fields.append(f"  {ctype} *{field};")
            if not arg.shape:
                fields.append(f"  int64_t {field}_shape[{arg.ndim}];")
            for size in arg.shape or []:
                if isinstance(size, str) and size not in dims:
                    dims.append(size)
            cells = _shape_cells(arg, field)
            sets.append(
                f"  if (args->{field} != NULL) {{\n"
                f"    const int64_t shape[] = {{{', '.join(cells) or '0'}}};\n"
                f"    if ((s = gl_graph_set_array(graph, {literal}, args->{field}, {gl_dtype}, {len(cells)}, shape))"
                f" != GL_OK) return s;\n  }}"
            )
            if arg.role != "input":
                gets.append(
                    f"  if (args->{field} != NULL && ((s = gl_graph_arg_bytes(graph, {literal}, &bytes)) != GL_OK ||\n"
                    f"      (s = gl_graph_get_array(graph, {literal}, args->{field}, bytes)) != GL_OK)) return s;"
                )
        elif arg.kind in ("scalar", "matrix"):
            count = 1
            for e in arg.element_shape:
                count *= e
            fields.append(f"  /* {_comment(_describe(arg))} */")
            fields.append(f"  {ctype} {field}{f'[{count}]' if arg.kind == 'matrix' else ''};")
            ref = f"args->{field}" if arg.kind == "matrix" else f"&args->{field}"
            sets.append(f"  if ((s = gl_graph_set_scalar(graph, {literal}, {gl_dtype}, {ref})) != GL_OK) return s;")
        else:
            fields.append(
                f"  /* {_comment(arg.name)}: a {arg.kind}; give its float32 texels (its dims, then the channels of its"
                " format) with gl_graph_set_array and read them back with gl_graph_get_array */"
            )
    dim_fields = [
        f"  int64_t dim_{c_identifier(d)}; /* symbolic dim '{_comment(d)}' (set it for the arrays given; 0 with"
        " none: the default) */"
        for d in dims
    ]
    dim_sets = [
        f'  if (args->dim_{c_identifier(d)} > 0 && (s = gl_graph_set_dim(graph, "{d}", args->dim_{c_identifier(d)}))'
        " != GL_OK) return s;"
        for d in dims
    ]
    return "\n".join([
        f"/* {graph}.h: the typed C API of graph '{_comment(graph)}' of export '{_comment(module)}'.",
        f" * Generated by graphlab {_comment(__version__)} from manifest.json (arch {manifest.arch}); regenerate",
        " * when you re-export. Link graphlab_runtime (../runtime) and include this header:",
        " *",
        f" *   {prefix}_args args = {{0}};   (point the arrays at your data, set the scalars and dims)",
        " *   gl_graph *graph;",
        f" *   gl_graph_get(module, {prefix.upper()}_GRAPH, &graph);",
        f" *   if ({prefix}_run(graph, &args) != GL_OK) puts(gl_graph_error(graph));",
        " */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "#include <stdint.h>", "",
        '#include "graphlab_runtime.h"', "",
        f"#define {prefix.upper()}_GRAPH \"{graph}\"", "",
        f"typedef struct {prefix}_args {{", *fields, *dim_fields, *([] if fields or dim_fields else ["  int unused;"]),
        f"}} {prefix}_args;", "",
        "/* Give every non-NULL array (copied to the device) and every scalar, run the graph with its control",
        " * flow, then copy each non-input array back into its pointer. Arrays left NULL are allocated from",
        " * the dims and kept on the device between runs. */",
        f"static inline gl_status {prefix}_run(gl_graph *graph, {prefix}_args *args) {{",
        "  gl_status s = GL_OK;", "  size_t bytes = 0;", *dim_sets, *sets,
        "  if ((s = gl_graph_run(graph, NULL, NULL)) != GL_OK) return s;", *gets,
        "  (void)bytes;", "  return s;", "}", "", f"#endif /* {guard} */", "",
    ])  # fmt: skip


def readme_example(manifest: Manifest, module: str) -> dict[str, str]:
    """The placeholders of host/README.md's C++ example: the first graph, its scalars, an array read back."""
    graph = manifest.graphs[0]
    prefix = f"{c_identifier(module)}_{c_identifier(graph.name)}"
    scalars = "".join(
        f"    args.{c_identifier(a.name)} = {C_TYPES.get(a.dtype or '', 'float')}(1);  // your value\n"
        for a in graph.args
        if a.kind == "scalar"
    )
    arrays = [a for a in graph.args if a.kind == "ndarray"]
    get = ""
    if arrays:
        a = arrays[0]
        ctype = C_TYPES.get(a.dtype or "", "float")
        get = (f"    std::vector<{ctype}> {c_identifier(a.name)} = graph.get<{ctype}>(\"{a.name}\");\n"
               f"    std::printf(\"{a.name}[0] = %g\\n\", double({c_identifier(a.name)}[0]));\n")  # fmt: skip
    return {"GRAPH": graph.name, "PREFIX": prefix, "PREFIX_UPPER": prefix.upper(), "SET_SCALARS": scalars,
            "GET_FIRST": get, "MODULE_PATH": "path/to/this/export"}  # fmt: skip


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def generate_embedding(out_dir: str | os.PathLike[str], *, manifest: Manifest | None = None) -> Path:
    """Write ``out_dir/runtime/`` (the library's sources) and ``out_dir/include/<graph>.h``; return ``include/``."""
    out = Path(out_dir)
    manifest = manifest or read_manifest(out)
    runtime = out / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_FILES:  # the list folders.check_replaceable knows as gl.export's own
        _write(runtime / name, (RUNTIME_SOURCES / name).read_text(encoding="utf-8"))
    include = out / "include"
    include.mkdir(exist_ok=True)
    name = module_name(out)
    for graph in manifest.graphs:
        _write(include / f"{graph.name}.h", typed_header(manifest, graph.name, name))
    return include


def build_runtime(
    source: str | os.PathLike[str] | None = None,
    build: str | os.PathLike[str] = "build",
    *,
    sanitize: bool = False,
    static: bool = False,
) -> Path:
    """Build the library with CMake from ``source`` (default: this package's sources) in ``build``.

    Returns the built library (``libgraphlab_runtime.so``, or ``.a`` with ``static=True``).
    ``sanitize=True`` builds it with AddressSanitizer and UndefinedBehaviorSanitizer.

    Raises
    ------
    ToolMissingError
        cmake is not installed.
    HostBuildError
        CMake failed; the message holds its command and output.
    """
    cmake = shutil.which("cmake")
    if cmake is None:
        raise ToolMissingError("cmake is not installed; install it with `apt-get install cmake` (Debian/Ubuntu)")
    src = Path(source) if source is not None else Path(str(RUNTIME_SOURCES))
    out = Path(build)
    c_api = taichi_c_api_dir()
    configure = [cmake, "-S", str(src), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release" if not sanitize else
                 "-DCMAKE_BUILD_TYPE=Debug", f"-DTAICHI_C_API_INSTALL_DIR={c_api}",
                 f"-DGRAPHLAB_RUNTIME_SANITIZE={'ON' if sanitize else 'OFF'}"]  # fmt: skip
    target = "graphlab_runtime_static" if static else "graphlab_runtime"
    for command in (configure, [cmake, "--build", str(out), "--target", target, "-j", "2"]):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise HostBuildError(
                f"building the runtime library failed:\n$ {' '.join(command)}\n{done.stdout}{done.stderr}"
            )
    return out / ("libgraphlab_runtime.a" if static else "libgraphlab_runtime.so")
