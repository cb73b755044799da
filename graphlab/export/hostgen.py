"""Generate, and build, a C host program that runs an exported module without Python.

``generate_host(out)`` writes ``out/host/``: ``main.c`` (tables generated from ``manifest.json``,
then plain functions a user can keep and change), ``npy.h``/``npy.c`` (a small .npy reader and
writer, so inputs and results travel as numpy files), ``CMakeLists.txt`` and ``README.md``.
``build_host(out)`` compiles it with the system C compiler against the taichi wheel's C runtime, so
a test or a notebook needs no cmake.

For example (needs a Taichi runtime and buffers; see the tests)::

    exe = build_host("out/mpm88")
    subprocess.run([exe, "--module", "out/mpm88/module", "--frames", "10", "--time"])
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from string import Template

from graphlab._version import __version__
from graphlab.errors import ToolMissingError
from graphlab.export.control import CondEntry, ControlEntry, LoopEntry, RepeatEntry, SegmentEntry, segments_of
from graphlab.export.cruntime import ArgSpec, Manifest, read_manifest, taichi_c_api_dir
from graphlab.export.errors import HostBuildError, HostGenError
from graphlab.names import MAX_DIM_SIZE, name_problem, shown
from graphlab.spec import NUMPY_DTYPES, ROLES

__all__ = ["build_host", "c_string_literal", "cmake_string", "generate_host"]

EXECUTABLE = "graphlab_host"
#: Scalars the 1.7.4 C-API can pass to a graph (see cruntime.SCALAR_PASSING).
HOST_SCALARS = ("f32", "i32", "i16", "u16")
#: The file whose absence means "not a module of this arch" (the x64 loader crashes on one).
MARKER_FILES = {"x64": "metadata.tcb", "cuda": "metadata.tcb", "vulkan": "metadata.json"}
COMPILERS = ("cc", "gcc", "clang")


def _check_manifest(manifest: Manifest) -> None:
    """Refuse what would not fit the host's tables: names and dim sizes are checked again here (a
    manifest.json can be edited by hand), even though every string is written as an escaped literal."""
    if manifest.arch not in MARKER_FILES:
        raise HostGenError(f"manifest.json: arch {shown(manifest.arch)} is not one of {', '.join(MARKER_FILES)}")
    for name, size in manifest.dims.items():
        problem = name_problem(name)
        if problem is not None:
            raise HostGenError(f"manifest.json: dims key {shown(name)} is not a dim name ({problem}); re-export")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_DIM_SIZE:
            raise HostGenError(f"manifest.json: dims[{name!r}] = {shown(size)} is not a size in 0..{MAX_DIM_SIZE:,}")
    for graph in manifest.graphs:
        for arg in graph.args:
            where = f"manifest.json: graph {shown(graph.name)}, arg {shown(arg.name)}"
            problem = name_problem(graph.name) or name_problem(arg.name)
            if problem is not None:
                raise HostGenError(f"{where}: not a valid name ({problem}); rename it and re-export")
            if arg.kind not in ("scalar", "ndarray", "matrix", "texture", "rw_texture") or arg.role not in ROLES:
                raise HostGenError(f"{where}: kind {shown(arg.kind)} or role {shown(arg.role)} is unknown; re-export")
            if arg.dtype is not None and arg.dtype not in NUMPY_DTYPES:
                raise HostGenError(f"{where}: dtype {shown(arg.dtype)} is unknown; re-export")
            for d in (*(arg.shape or ()), *arg.element_shape):
                bad_int = isinstance(d, bool) or (isinstance(d, int) and not 0 <= d <= MAX_DIM_SIZE)
                if bad_int or not isinstance(d, (int, str)) or (isinstance(d, str) and name_problem(d)):
                    raise HostGenError(f"{where}: shape entry {shown(d)} is not a dim name or a size up to 2**32 - 1")


def _args_of(manifest: Manifest) -> dict[str, ArgSpec]:
    """Every arg of every graph, once: graphs that name the same arg share its buffer in the host."""
    _check_manifest(manifest)
    args: dict[str, ArgSpec] = {}
    for graph in manifest.graphs:
        for arg in graph.args:
            where = f"manifest.json: graph {graph.name!r}, arg {arg.name!r}"
            if arg.ndim > 8 or len(arg.element_shape) > 2:
                raise HostGenError(f"{where}: the host takes up to 8 field dims and 2 element dims")
            if arg.kind in ("texture", "rw_texture"):
                raise HostGenError(f"{where}: the C host does not pass textures yet; run this graph from Python")
            if arg.kind == "scalar" and arg.dtype not in HOST_SCALARS:
                fix = f"use one of {', '.join(HOST_SCALARS)} or a 1-element ndarray"
                raise HostGenError(f"{where}: a {arg.dtype} scalar cannot cross Taichi 1.7.4's C-API; {fix}")
            seen = args.setdefault(arg.name, arg)
            same = (seen.kind, seen.dtype, seen.ndim, seen.element_shape, seen.shape)
            if same != (arg.kind, arg.dtype, arg.ndim, arg.element_shape, arg.shape):
                fix = "the host shares one buffer per name, so rename one of them"
                raise HostGenError(f"{where}: differs from the arg of that name in another graph; {fix}")
            if arg.role == "input":  # an input anywhere must be given
                args[arg.name] = dataclasses.replace(seen, role="input")
    return args


def c_string_literal(text: str) -> str:
    r"""``text`` as a C string literal (quotes included) that holds exactly its UTF-8 bytes.

    Printable ASCII stays as it is, except backslash, ``"`` and ``?`` (``??/`` is a trigraph in
    C99); every other byte becomes a 3-digit octal escape, which (unlike ``\x``) cannot swallow the
    characters after it. NUL is refused: a C string ends there, so the name would silently change.

    >>> print(c_string_literal('a "b" \\ ??/ é\n'))
    "a \"b\" \\ \?\?/ \303\251\012"
    """
    if "\0" in text:
        raise HostGenError(f"{shown(text)} holds a NUL character, which a C string cannot hold")
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '\\"?':
            out.append("\\" + char)
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _c_string(text: str | int | None) -> str:
    return "NULL" if text is None else c_string_literal(str(text))


def _c_comment(text: str) -> str:
    """``text`` safe inside a ``/* */`` comment: printable ASCII only, no ``*/``."""
    return "".join(c if " " <= c < "\x7f" else "?" for c in text).replace("*/", "*?/")


def cmake_string(text: str) -> str:
    """``text`` escaped for the inside of a quoted CMake argument (no variable expansion, no breaking out).

    A ``;`` stays: inside quotes it does not split the argument (``\\;`` would keep its backslash).
    """
    escapes = {"\\": "\\\\", '"': '\\"', "$": "\\$", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(escapes.get(c, c) for c in text)


def _c_rows(rows: list[list[str]], header: list[str] | None = None) -> list[str]:
    """C initializers ``{a, b, c},`` padded into columns, under a comment naming them, for reading."""
    cells = [[f"{cell}," for cell in row[:-1]] + [row[-1]] for row in rows]
    widths = [max(len(row[i]) for row in [*cells, *([header] if header else [])]) for i in range(len(rows[0]))]
    lines = ["    {" + " ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "}," for row in cells]
    if header:  # "   /*" is as wide as "    {", so the names sit above their columns
        lines.insert(0, "   /*" + " ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip() + " */")
    return lines


def _tables(manifest: Manifest) -> str:
    """The generated part of main.c: what the module expects, as C tables."""
    args = _args_of(manifest)
    index = {name: i for i, name in enumerate(args)}
    slot_ids = {slot: i for i, slot in enumerate(sorted(manifest.slots))}  # renumbered 0.. for the C arrays
    slot_of = {name: slot_ids[slot] for slot, names in manifest.slots.items() for name in names}
    rows = []
    for arg in args.values():
        dtype = (arg.dtype or "").upper()
        shape = ", ".join(_c_string(d) for d in (arg.shape or [None] * arg.ndim)) or "NULL"
        rows.append([
            _c_string(arg.name), f"KIND_{arg.kind.upper()}", f"ROLE_{arg.role.upper()}", f"NPY_{dtype}",
            f"TI_DATA_TYPE_{dtype}", str(arg.ndim), f"{{{shape}}}", str(len(arg.element_shape)),
            "{" + (", ".join(map(str, arg.element_shape)) or "0") + "}", str(slot_of.get(arg.name, -1)),
        ])  # fmt: skip
    header = ["name", "kind", "role", "dtype", "ti_dtype", "ndim", "shape", "elem_ndim", "elem_shape", "slot"]
    segments = {s.graph: s for g in manifest.graphs for s in segments_of(g.program)}
    program = _Program(index, {name: i for i, name in enumerate(segments)})
    graphs = []
    for g in manifest.graphs:
        body, count = program.flatten(g.program)
        arg_list = "{" + ", ".join(str(index[a.name]) for a in g.args) + "}"
        graphs.append([_c_string(g.name), str(len(g.args)), arg_list, str(body), str(count)])
    segment_rows = [[_c_string(s.graph), str(len(s.args)), "{" + ", ".join(str(index[a]) for a in s.args) + "}"]
                    for s in segments.values()]  # fmt: skip
    dims = [[_c_string(name), str(value)] for name, value in manifest.dims.items()]
    return TABLES.substitute(
        arch=f"TI_ARCH_{manifest.arch.upper()}",
        arch_name=manifest.arch,
        marker=MARKER_FILES[manifest.arch],
        arg_count=len(args),
        graph_count=len(manifest.graphs),
        segment_count=len(segments),
        op_count=len(program.rows),
        args="\n".join(_c_rows(rows, header)),
        graphs="\n".join(_c_rows(graphs, ["name", "arg_count", "args", "body", "body_len"])),
        segments="\n".join(_c_rows(segment_rows, ["name", "arg_count", "args"])),
        ops="\n".join(_c_rows(program.rows, OP_HEADER)),
        dims="\n".join([*(_c_rows(dims) if dims else []), "    {NULL, 0}, /* end */"]),
    )


OP_HEADER = ["kind", "node", "segment", "flag", "count", "times", "body", "body_len", "other", "other_len"]


class _Program:
    """Control trees as the rows of main.c's OPS table: each block is a contiguous range of rows."""

    def __init__(self, args: dict[str, int], segments: dict[str, int]) -> None:
        self.args, self.segments = args, segments
        self.rows: list[list[str]] = []

    def flatten(self, entries: tuple[ControlEntry, ...]) -> tuple[int, int]:
        """Reserve the block's rows, then fill them (their own blocks go after): ``(start, count)``."""
        start = len(self.rows)
        self.rows.extend([[]] * len(entries))
        for i, entry in enumerate(entries):
            self.rows[start + i] = self._row(entry)
        return start, len(entries)

    def _row(self, entry: ControlEntry) -> list[str]:
        if isinstance(entry, SegmentEntry):
            return ["OP_SEGMENT", "NULL", str(self.segments[entry.graph]), "-1", "-1", "0", "0", "0", "-1", "0"]
        if isinstance(entry, RepeatEntry):
            return ["OP_REPEAT", "NULL", "-1", "-1", "-1", str(entry.times), *map(str, self.flatten(entry.body)),
                    "-1", "0"]  # fmt: skip
        if isinstance(entry, CondEntry):
            then = self.flatten(entry.then)
            other = (-1, 0) if entry.else_ is None else self.flatten(entry.else_)
            return ["OP_COND", _c_string(entry.node), "-1", str(self.args[entry.flag]), "-1", "0",
                    *map(str, then), *map(str, other)]  # fmt: skip
        assert isinstance(entry, LoopEntry)
        flag = -1 if entry.while_ is None else self.args[entry.while_]
        count = -1 if entry.count is None else self.args[entry.count]
        return ["OP_LOOP", _c_string(entry.node), "-1", str(flag), str(count), str(entry.max_iter or 0),
                *map(str, self.flatten(entry.body)), "-1", "0"]  # fmt: skip


def _write(path: Path, text: str) -> None:
    """Write through a temporary name, so a failure never leaves half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def generate_host(out_dir: str | os.PathLike[str], *, manifest: Manifest | None = None) -> Path:
    """Write the host program for the module in ``out_dir`` into ``out_dir/host``; return that folder.

    Raises
    ------
    HostGenError
        The manifest has something the host cannot pass (a texture, an f64 scalar) or two graphs
        disagree about an arg of one name.
    """
    out = Path(out_dir)
    manifest = manifest or read_manifest(out)
    graphs = "\n".join(
        f"- `{g.name}`({', '.join(f'{a.name}: {_describe(a)}' for a in g.args)})" for g in manifest.graphs
    )
    header = HEADER.substitute(
        version=_c_comment(__version__), arch=_c_comment(manifest.arch), taichi=_c_comment(manifest.taichi_version)
    )
    c_api = taichi_c_api_dir()
    files = {
        "main.c": header + _tables(manifest) + MAIN_BODY,
        "npy.h": NPY_H,
        "npy.c": NPY_C,
        "CMakeLists.txt": CMAKE.substitute(c_api=cmake_string(c_api.as_posix())),
        "README.md": README.substitute(
            arch=manifest.arch, graphs=graphs, exe=EXECUTABLE, c_api=c_api.as_posix(), version=__version__
        ),
    }
    host = out / "host"
    host.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        _write(host / name, text)
    return host


def _describe(arg: ArgSpec) -> str:
    if arg.kind == "ndarray":
        shape = ", ".join(map(str, arg.shape)) if arg.shape else f"{arg.ndim} dims"
        elem = f" of {'x'.join(map(str, arg.element_shape))}" if arg.element_shape else ""
        return f"{arg.dtype}[{shape}]{elem} {arg.role}"
    return f"{arg.dtype}{'[' + 'x'.join(map(str, arg.element_shape)) + ']' if arg.element_shape else ''} {arg.role}"


def find_compiler(cc: str | os.PathLike[str] | None = None) -> str:
    """The C compiler to use: ``cc`` if given, else ``$CC``, else the first of cc, gcc, clang."""
    tried = [os.fspath(cc)] if cc is not None else [os.environ["CC"]] if os.environ.get("CC") else list(COMPILERS)
    for name in tried:
        found = shutil.which(name)
        if found:
            return found
    fix = "install one with `apt-get install gcc` (Debian/Ubuntu), or pass cc='/path/to/cc'"
    raise ToolMissingError(f"no C compiler found (tried {', '.join(tried)}); {fix}")


def build_host(out_dir: str | os.PathLike[str], *, cc: str | os.PathLike[str] | None = None) -> Path:
    """Compile ``out_dir/host`` (generated first if missing) into ``out_dir/host/build/graphlab_host``.

    The compiler is called directly (no cmake) with the wheel's headers and library, and an rpath
    to the library so the program runs without ``LD_LIBRARY_PATH``. An existing ``main.c`` is
    compiled as it is, so a user's edits are kept.

    Raises
    ------
    ToolMissingError
        No C compiler was found (``cc`` names a missing one, or none is installed).
    HostBuildError
        The compiler failed; the message holds its command and output.
    """
    out = Path(out_dir)
    host = out / "host"
    if not (host / "main.c").is_file():
        generate_host(out)
    compiler = find_compiler(cc)
    c_api = taichi_c_api_dir()
    lib = c_api / "lib"
    (host / "build").mkdir(exist_ok=True)
    exe = host / "build" / EXECUTABLE
    with tempfile.TemporaryDirectory(dir=host / "build") as tmp:
        built = Path(tmp) / EXECUTABLE
        runtime = c_string_literal(str(c_api / "runtime"))
        command = [compiler, "-std=c99", "-O2", "-Wall", f"-I{c_api / 'include'}",
                   f"-DGRAPHLAB_TI_LIB_DIR={runtime}", str(host / "main.c"), str(host / "npy.c"),
                   "-o", str(built), f"-L{lib}", "-ltaichi_c_api", f"-Wl,-rpath,{lib}"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise HostBuildError(f"building {host} failed:\n$ {' '.join(command)}\n{done.stdout}{done.stderr}")
        built.replace(exe)
    return exe


# --- the C sources ---------------------------------------------------------------------------------

HEADER = Template("""\
/*
 * main.c: runs the graphs of the Taichi AOT module next to this folder with Taichi's C runtime,
 * without Python. Generated by graphlab $version from manifest.json (arch $arch, Taichi $taichi).
 *
 *   1. create a runtime for the module's arch and load the module folder;
 *   2. size every ndarray arg from its input file <in>/<arg>.npy, or from the dims;
 *   3. copy the inputs to the device, run the graphs --frames times (timed with --time): a graph
 *      with conditionals or loops launches its segments and reads its flags on the host between
 *      them (printed with --events);
 *   4. copy every ndarray arg back and write it to <out>/<arg>.npy.
 * Every C-API call is checked with ti_get_last_error: an error is printed and the exit status is 1.
 *
 * This file is yours to keep and change. The tables below say what the module expects (regenerate
 * or edit them when you re-export with other args); the functions after them do the work.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv, strndup, mkdir */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <taichi/taichi_core.h>

#include "npy.h"

""")

TABLES = Template("""\
/* ---- What the module expects (from manifest.json) ------------------------------------------ */

#define PROGRAM_NAME "graphlab_host"
#define DEFAULT_MODULE_DIR "module"
#define MODULE_ARCH $arch
#define MODULE_ARCH_NAME "$arch_name"
#define MODULE_MARKER_FILE "$marker" /* present in every $arch_name module folder */
#define MAX_DIMS 8

typedef enum ArgKind { KIND_SCALAR, KIND_NDARRAY, KIND_MATRIX } ArgKind;
/* Inputs must be given; outputs, state and temps start at zero when no input file exists. */
typedef enum ArgRole { ROLE_INPUT, ROLE_OUTPUT, ROLE_STATE, ROLE_TEMP } ArgRole;

typedef struct ArgSpec {
  const char *name;
  ArgKind kind;
  ArgRole role;
  NpyDtype dtype;              /* element type, as in the .npy file */
  TiDataType ti_dtype;         /* the same, as Taichi names it */
  int ndim;                    /* field dims of an ndarray */
  const char *shape[MAX_DIMS]; /* per field dim: a dim name, a number, or NULL (from the input) */
  int elem_ndim;               /* 1 for a vector element, 2 for a matrix element */
  uint32_t elem_shape[2];
  int slot; /* temps with the same memory-plan slot share one allocation; -1: own allocation */
} ArgSpec;

#define ARG_COUNT $arg_count
/* Every arg of every graph, once: graphs that name the same arg share its buffer. */
static const ArgSpec ARGS[ARG_COUNT] = {
$args
};

#define SEGMENT_COUNT $segment_count
/* The compute graphs of the module. A graph without conditionals or loops is one of them, under
 * its own name; a graph with them is split into segments, with host-side decisions in between. */
typedef struct SegmentSpec {
  const char *name; /* the name ti_get_aot_module_compute_graph takes */
  int arg_count;
  int args[ARG_COUNT]; /* indices into ARGS */
} SegmentSpec;

static const SegmentSpec SEGMENTS[SEGMENT_COUNT] = {
$segments
};

/* What a graph runs: a block of ops (a range of OPS), some holding blocks of their own. */
typedef enum OpKind {
  OP_SEGMENT, /* launch SEGMENTS[segment] */
  OP_REPEAT,  /* run the body `times` times */
  OP_COND,    /* read the i32 flag ARGS[flag]: non-zero runs the body, zero the other block (if any) */
  OP_LOOP     /* ARGS[count] times; or do-while: run the body, read ARGS[flag], stop at 0 or after `times` */
} OpKind;

typedef struct Op {
  OpKind kind;
  const char *node;     /* the graph node deciding (printed by --events); NULL for the others */
  int segment;          /* OP_SEGMENT: index into SEGMENTS */
  int flag;             /* OP_COND, while loops: index into ARGS of a one-element i32 ndarray; else -1 */
  int count;            /* count loops: index into ARGS of an i32 scalar; else -1 */
  long times;           /* OP_REPEAT: repetitions; while loops: max_iter */
  int body, body_len;   /* the block run (OP_COND: when the flag is non-zero), as a range of OPS */
  int other, other_len; /* OP_COND: the block run when the flag is zero; other is -1 when there is none */
} Op;

#define OP_COUNT $op_count
static const Op OPS[OP_COUNT] = {
$ops
};

#define GRAPH_COUNT $graph_count
typedef struct GraphSpec {
  const char *name;
  int arg_count;
  int args[ARG_COUNT]; /* indices into ARGS: every arg of its segments and decisions */
  int body, body_len;  /* its program: a range of OPS */
} GraphSpec;

static const GraphSpec GRAPHS[GRAPH_COUNT] = {
$graphs
};

/* Default sizes of the symbolic dims (the notebook's values); input files and --dim override. */
static const struct {
  const char *name;
  int64_t value;
} DIM_DEFAULTS[] = {
$dims
};

""")

CMAKE = Template("""\
# Builds the host program with Taichi's C runtime from the taichi wheel (or any Taichi C-API
# install: pass -DTAICHI_C_API_INSTALL_DIR=<dir with include/ lib/ runtime/>).
#   cmake -S . -B build && cmake --build build && ./build/graphlab_host --help
cmake_minimum_required(VERSION 3.18)
project(graphlab_host C)
set(CMAKE_C_STANDARD 99)

set(TAICHI_C_API_INSTALL_DIR "$c_api" CACHE PATH "Taichi C-API folder (include/, lib/, runtime/)")
find_library(TAICHI_C_API taichi_c_api PATHS "$${TAICHI_C_API_INSTALL_DIR}/lib" NO_DEFAULT_PATH REQUIRED)

add_executable(graphlab_host main.c npy.c)
target_include_directories(graphlab_host PRIVATE "$${TAICHI_C_API_INSTALL_DIR}/include")
target_link_libraries(graphlab_host PRIVATE "$${TAICHI_C_API}")
# x64 modules need TI_LIB_DIR (runtime_x64.bc); this default is used when it is not set.
target_compile_definitions(graphlab_host PRIVATE GRAPHLAB_TI_LIB_DIR="$${TAICHI_C_API_INSTALL_DIR}/runtime")
set_target_properties(graphlab_host PROPERTIES BUILD_RPATH "$${TAICHI_C_API_INSTALL_DIR}/lib")
""")

README = Template("""\
# Host program for this module

Generated by graphlab $version. It runs the module's compute graphs on **$arch** through Taichi's C
runtime, with no Python: the way a game engine, an app or a robot would.

Graphs (args in order; `[n]` is a symbolic dim):

$graphs

## Build

With the system C compiler (what `graphlab.export.hostgen.build_host` does):

    mkdir -p build && cc -std=c99 -O2 -I$c_api/include main.c npy.c -o build/$exe \\
       -L$c_api/lib -ltaichi_c_api -Wl,-rpath,$c_api/lib \\
       -DGRAPHLAB_TI_LIB_DIR='"$c_api/runtime"'

or with CMake: `cmake -S . -B build && cmake --build build`.

## Run

From the export folder (the one holding `module/` and `manifest.json`):

    host/build/$exe --in inputs --out outputs --frames 100 --time

- Each arg is read from `inputs/<arg>.npy` when that file exists (save it with `numpy.save`, with
  the arg's dtype; an ndarray has its field dims then its element dims). Scalars and matrices can
  also be given as `--set dt=0.001` or `--set gravity=0,-9.8`.
- An ndarray without an input file starts at zero, sized from the dims: the values the input files
  set, `--dim n=8192`, or the defaults in `main.c` (the notebook's values). Args with the role
  `input` must have a file.
- Each frame launches every graph in order (`--graph NAME` picks graphs). Afterwards every ndarray
  arg is written to `outputs/<arg>.npy`.
- `--time` prints the first frame's time (it includes one-off pipeline set-up) and the mean of the
  others.
- A graph with conditionals or loops runs as compute graphs (segments) with decisions between them:
  the host reads a one-element i32 flag the device wrote (one small copy that waits for the device)
  and picks the branch, or stops a loop (a `while` loop runs its body, then reads its flag, and stops
  at 0 or after `max_iter`; a `count` loop reads an i32 scalar). `--events` prints each decision:
  `event frame=0 graph=poisson node=solve loop=412` (`limit_reached` when it stopped at `max_iter`),
  `event frame=0 graph=branchy node=branch cond=then` (`else`, or `skip` without an else branch).
- Any C-API error is printed with its `ti_get_last_error` code and message; the exit status is 1.

An x64 or CUDA module needs `TI_LIB_DIR` (the folder with `runtime_x64.bc` / `runtime_cuda.bc`,
`taichi/_lib/c_api/runtime` in the wheel); the build bakes in a default. A Vulkan module needs a
Vulkan driver (on a CPU-only Debian: `apt-get install mesa-vulkan-drivers libvulkan1`).

## Change it

`main.c` starts with tables generated from `manifest.json` (args, the module's compute graphs as
`SEGMENTS`, each graph's program as a range of `OPS`, default dims) and then plain functions:
`load_values` (inputs), `allocate_buffers` and `upload`/`download`/`read_flag` (device memory),
`build_arguments`, `run_ops` and `run_frames` (launching and deciding), `write_outputs`. Replace
the .npy input and output with your own data source and keep the rest.
""")

MAIN_BODY = r"""/* ---- Options ------------------------------------------------------------------------------ */

#define MAX_SETS 64

typedef struct Options {
  const char *module_dir; /* the AOT module folder (what ti.aot.Module.save wrote) */
  const char *in_dir;     /* <arg>.npy inputs */
  const char *out_dir;    /* <arg>.npy results */
  long frames;
  int time;
  int events;      /* print each decision: the branch taken, the iterations of a loop */
  int graph_count; /* graphs to launch each frame, in order; 0 means all, in manifest order */
  int graphs[MAX_SETS];
  int dim_count; /* --dim NAME=VALUE */
  const char *dims[MAX_SETS];
  int set_count; /* --set NAME=VALUE[,VALUE...] */
  const char *sets[MAX_SETS];
} Options;

static void usage(FILE *to) {
  fprintf(to,
          "usage: %s [--module DIR] [--in DIR] [--out DIR] [--frames N] [--graph NAME]...\n"
          "       [--dim NAME=VALUE]... [--set NAME=VALUE[,VALUE...]]... [--time] [--events]\n"
          "Runs the graphs of a Taichi AOT module with Taichi's C runtime.\n"
          "  --module DIR   the module folder (default: %s)\n"
          "  --in DIR       read each arg from DIR/<arg>.npy where present (default: inputs)\n"
          "  --out DIR      write each ndarray arg to DIR/<arg>.npy (default: outputs)\n"
          "  --frames N     launch the graphs N times (default: 1)\n"
          "  --graph NAME   launch this graph each frame (repeatable; default: every graph)\n"
          "  --dim N=V      size of a symbolic dim, for ndarrays without an input file\n"
          "  --set A=V      value of a scalar or matrix arg (overrides DIR/A.npy)\n"
          "  --time         print the time per frame\n"
          "  --events       print each decision of a graph with conditionals or loops:\n"
          "                 event frame=F graph=G node=N cond=then|else|skip\n"
          "                 event frame=F graph=G node=N loop=ITERATIONS [limit_reached]\n",
          PROGRAM_NAME, DEFAULT_MODULE_DIR);
}

static void die(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "%s: error: ", PROGRAM_NAME);
  vfprintf(stderr, fmt, args);
  fprintf(stderr, "\n");
  va_end(args);
  exit(1);
}

static int find_graph(const char *name) {
  for (int g = 0; g < GRAPH_COUNT; ++g)
    if (strcmp(GRAPHS[g].name, name) == 0) return g;
  return -1;
}

static int find_arg(const char *name, size_t len) {
  for (int a = 0; a < ARG_COUNT; ++a)
    if (strlen(ARGS[a].name) == len && strncmp(ARGS[a].name, name, len) == 0) return a;
  return -1;
}

static void parse_options(int argc, char **argv, Options *opt) {
  opt->module_dir = DEFAULT_MODULE_DIR;
  opt->in_dir = "inputs";
  opt->out_dir = "outputs";
  opt->frames = 1;
  for (int i = 1; i < argc; ++i) {
    const char *flag = argv[i];
    if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
      usage(stdout);
      exit(0);
    }
    if (strcmp(flag, "--time") == 0 || strcmp(flag, "--events") == 0) {
      if (flag[2] == 't') opt->time = 1;
      else opt->events = 1;
      continue;
    }
    if (i + 1 >= argc) die("%s needs a value (see --help)", flag);
    const char *value = argv[++i];
    if (strcmp(flag, "--module") == 0) {
      opt->module_dir = value;
    } else if (strcmp(flag, "--in") == 0) {
      opt->in_dir = value;
    } else if (strcmp(flag, "--out") == 0) {
      opt->out_dir = value;
    } else if (strcmp(flag, "--frames") == 0) {
      char *end;
      opt->frames = strtol(value, &end, 10);
      if (*end != '\0' || opt->frames < 1) die("--frames takes a positive integer, got '%s'", value);
    } else if (strcmp(flag, "--graph") == 0) {
      int g = find_graph(value);
      if (g < 0) die("the module has no graph '%s' (see the GRAPHS table in main.c)", value);
      if (opt->graph_count == MAX_SETS) die("too many --graph options");
      opt->graphs[opt->graph_count++] = g;
    } else if (strcmp(flag, "--dim") == 0 || strcmp(flag, "--set") == 0) {
      int is_dim = flag[2] == 'd';
      if (strchr(value, '=') == NULL) die("%s takes NAME=VALUE, got '%s'", flag, value);
      if ((is_dim ? opt->dim_count : opt->set_count) == MAX_SETS) die("too many %s options", flag);
      if (is_dim) opt->dims[opt->dim_count++] = value;
      else opt->sets[opt->set_count++] = value;
    } else {
      die("unknown option '%s' (see --help)", flag);
    }
  }
  if (opt->graph_count == 0)
    for (int g = 0; g < GRAPH_COUNT; ++g) opt->graphs[opt->graph_count++] = g;
}

/* ---- Checking every C-API call -------------------------------------------------------------- */

static const char *error_name(TiError error) {
  switch (error) {
    case TI_ERROR_SUCCESS: return "TI_ERROR_SUCCESS";
    case TI_ERROR_NOT_SUPPORTED: return "TI_ERROR_NOT_SUPPORTED";
    case TI_ERROR_CORRUPTED_DATA: return "TI_ERROR_CORRUPTED_DATA";
    case TI_ERROR_NAME_NOT_FOUND: return "TI_ERROR_NAME_NOT_FOUND";
    case TI_ERROR_INVALID_ARGUMENT: return "TI_ERROR_INVALID_ARGUMENT";
    case TI_ERROR_ARGUMENT_NULL: return "TI_ERROR_ARGUMENT_NULL";
    case TI_ERROR_ARGUMENT_OUT_OF_RANGE: return "TI_ERROR_ARGUMENT_OUT_OF_RANGE";
    case TI_ERROR_ARGUMENT_NOT_FOUND: return "TI_ERROR_ARGUMENT_NOT_FOUND";
    case TI_ERROR_INVALID_INTEROP: return "TI_ERROR_INVALID_INTEROP";
    case TI_ERROR_INVALID_STATE: return "TI_ERROR_INVALID_STATE";
    case TI_ERROR_INCOMPATIBLE_MODULE: return "TI_ERROR_INCOMPATIBLE_MODULE";
    case TI_ERROR_OUT_OF_MEMORY: return "TI_ERROR_OUT_OF_MEMORY";
    default: return "unknown TiError";
  }
}

/* Exit with the pending C-API error, if any. Called after every C-API call: Taichi reports
 * errors only through ti_get_last_error, and keeps an error until the next one, so checking
 * late would blame the wrong call. */
static void check(const char *call) {
  char message[1024];
  uint64_t size = sizeof message;
  TiError error = ti_get_last_error(&size, message);
  if (error < TI_ERROR_SUCCESS) die("%s failed: %s (%d): %s", call, error_name(error), (int)error, message);
}

/* ---- Symbolic dims -------------------------------------------------------------------------- */

typedef struct Dim {
  const char *name;
  int64_t value;
  char source[96]; /* where the value came from, for messages */
  int is_default;  /* from manifest.json: an input file may override it */
} Dim;

static Dim dims[MAX_SETS];
static int dim_count;

static Dim *find_dim(const char *name) {
  for (int d = 0; d < dim_count; ++d)
    if (strcmp(dims[d].name, name) == 0) return &dims[d];
  return NULL;
}

static void bind_dim(const char *name, int64_t value, const char *source, int is_default) {
  Dim *dim = find_dim(name);
  if (dim != NULL && !dim->is_default && dim->value != value)
    die("dim '%s' is %lld from %s but %lld from %s; they must agree", name, (long long)value, source,
        (long long)dim->value, dim->source);
  if (dim != NULL && !dim->is_default) return;
  if (dim == NULL) {
    if (dim_count == MAX_SETS) die("too many dims");
    dim = &dims[dim_count++];
  }
  dim->name = name;
  dim->value = value;
  dim->is_default = is_default;
  snprintf(dim->source, sizeof dim->source, "%s", source);
}

/* ---- Per-arg state ------------------------------------------------------------------------- */

typedef struct Buffer {
  TiMemory memory;  /* device memory, shared by the temps of one memory-plan slot */
  TiMemory staging; /* host-visible twin on GPUs, where device memory cannot be mapped */
  size_t nbytes;
} Buffer;

typedef struct ArgState {
  int known;                       /* shape (ndarray) or value (scalar, matrix) is set */
  int64_t shape[MAX_DIMS + 2];     /* field dims then element dims, as in the .npy file */
  NpyArray host;                   /* the data on the host: input, then results */
  int buffer;                      /* index into buffers, ndarrays only */
  unsigned char value[128];        /* scalar or matrix value, packed at the dtype's width */
} ArgState;

static ArgState state[ARG_COUNT];
static int used[ARG_COUNT]; /* args of the graphs this run launches; the others are ignored */
static Buffer buffers[ARG_COUNT];
static int buffer_count;

static void mark_used(const Options *opt) {
  for (int i = 0; i < opt->graph_count; ++i)
    for (int j = 0; j < GRAPHS[opt->graphs[i]].arg_count; ++j) used[GRAPHS[opt->graphs[i]].args[j]] = 1;
}

static int full_ndim(const ArgSpec *arg) { return arg->ndim + arg->elem_ndim; }

/* Check an input array against its arg and bind the symbolic dims its shape sets. */
static void take_input(int a, const NpyArray *array, const char *path) {
  const ArgSpec *arg = &ARGS[a];
  if (array->dtype != arg->dtype)
    die("%s: dtype %s, but arg '%s' is %s; save it with a.astype(np.%s)", path, npy_dtype_name(array->dtype),
        arg->name, npy_dtype_name(arg->dtype), npy_dtype_numpy(arg->dtype));
  int ndim = arg->kind == KIND_NDARRAY ? full_ndim(arg) : arg->elem_ndim;
  int first_elem = arg->kind == KIND_NDARRAY ? arg->ndim : 0;
  int count_ok = arg->kind == KIND_SCALAR && npy_count(array->ndim, array->shape) == 1;
  if (!count_ok && array->ndim != ndim)
    die("%s: %d dims, but arg '%s' has %d (%d field dims, element shape of %d dims)", path, array->ndim,
        arg->name, ndim, arg->kind == KIND_NDARRAY ? arg->ndim : 0, arg->elem_ndim);
  for (int e = 0; e < arg->elem_ndim; ++e)
    if (array->shape[first_elem + e] != arg->elem_shape[e])
      die("%s: shape[%d] is %lld, but the element shape of '%s' needs %u", path, first_elem + e,
          (long long)array->shape[first_elem + e], arg->name, arg->elem_shape[e]);
  if (arg->kind == KIND_NDARRAY) {
    for (int d = 0; d < arg->ndim; ++d) {
      const char *dim = arg->shape[d];
      char source[96];
      if (array->shape[d] > (int64_t)UINT32_MAX)
        die("%s: shape[%d] is %lld, over the %lu a Taichi shape can hold", path, d, (long long)array->shape[d],
            (unsigned long)UINT32_MAX);
      snprintf(source, sizeof source, "%s.npy shape[%d]", arg->name, d);
      if (dim != NULL && isdigit((unsigned char)dim[0]) && atoll(dim) != array->shape[d])
        die("%s: shape[%d] is %lld, but '%s' needs %s", path, d, (long long)array->shape[d], arg->name, dim);
      if (dim != NULL && !isdigit((unsigned char)dim[0])) bind_dim(dim, array->shape[d], source, 0);
    }
    memcpy(state[a].shape, array->shape, sizeof(int64_t) * (size_t)ndim);
  } else {
    if (array->nbytes > sizeof state[a].value) die("%s: too large for a scalar or matrix", path);
    memcpy(state[a].value, array->data, array->nbytes);
  }
}

/* Store one number given on the command line at `out`, in the arg's dtype; -1 if it does not fit. */
static int store_number(NpyDtype dtype, const char *text, char **end, unsigned char *out) {
  if (dtype == NPY_F32 || dtype == NPY_F64) {
    double f = strtod(text, end);
    float f32 = (float)f;
    memcpy(out, dtype == NPY_F32 ? (void *)&f32 : (void *)&f, npy_dtype_size(dtype));
    return *end == text ? -1 : 0;
  }
  long long n = strtoll(text, end, 10); /* only the integer dtypes a C-API scalar can be */
  if (*end == text) return -1;
  if (dtype == NPY_I32 && n >= INT32_MIN && n <= INT32_MAX) { int32_t v = (int32_t)n; memcpy(out, &v, 4); return 0; }
  if (dtype == NPY_I16 && n >= INT16_MIN && n <= INT16_MAX) { int16_t v = (int16_t)n; memcpy(out, &v, 2); return 0; }
  if (dtype == NPY_U16 && n >= 0 && n <= UINT16_MAX) { uint16_t v = (uint16_t)n; memcpy(out, &v, 2); return 0; }
  return -1;
}

/* Parse "--set name=v1,v2" into the arg's value bytes; returns the arg, or -1 for an unknown name. */
static int take_set(const char *set) {
  const char *eq = strchr(set, '=');
  int a = find_arg(set, (size_t)(eq - set));
  if (a < 0 || ARGS[a].kind == KIND_NDARRAY) return -1;
  const ArgSpec *arg = &ARGS[a];
  int count = 1;
  for (int e = 0; e < arg->elem_ndim; ++e) count *= (int)arg->elem_shape[e];
  char *p = (char *)eq + 1;
  for (int i = 0; i < count; ++i) {
    unsigned char *out = state[a].value + npy_dtype_size(arg->dtype) * (size_t)i;
    if (store_number(arg->dtype, p, &p, out) != 0 || (*p != (i + 1 < count ? ',' : '\0')))
      die("--set %s: expected %d comma-separated %s value(s)", set, count, npy_dtype_name(arg->dtype));
    p += *p == ',';
  }
  return a;
}

/* Read inputs, apply --dim and --set, then size every ndarray that had no input file. */
static void load_values(const Options *opt) {
  for (int d = 0; DIM_DEFAULTS[d].name != NULL; ++d)
    bind_dim(DIM_DEFAULTS[d].name, DIM_DEFAULTS[d].value, "manifest.json dims", 1);
  for (int i = 0; i < opt->dim_count; ++i) {
    const char *eq = strchr(opt->dims[i], '=');
    char *end;
    errno = 0;
    long long size = strtoll(eq + 1, &end, 10);
    if (!isdigit((unsigned char)eq[1]) || *end != '\0' || errno != 0 || size > (long long)UINT32_MAX)
      die("--dim %s: the size must be an integer from 0 to %lu (Taichi shapes are 32-bit)", opt->dims[i],
          (unsigned long)UINT32_MAX);
    char *name = strndup(opt->dims[i], (size_t)(eq - opt->dims[i])); /* kept: dims point to it */
    bind_dim(name, size, "--dim", 0);
  }
  for (int a = 0; a < ARG_COUNT; ++a) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s.npy", opt->in_dir, ARGS[a].name);
    NpyArray array;
    if (!used[a] || access(path, F_OK) != 0) continue;
    if (npy_read(path, &array, err, sizeof err) != 0) die("%s: %s", path, err);
    take_input(a, &array, path);
    state[a].known = 1;
    if (ARGS[a].kind == KIND_NDARRAY) state[a].host = array;
    else npy_free(&array);
  }
  for (int i = 0; i < opt->set_count; ++i) {
    int a = take_set(opt->sets[i]);
    if (a < 0) die("--set %s: no scalar or matrix arg of that name", opt->sets[i]);
    if (!used[a]) continue;
    state[a].known = 1;
  }
  for (int a = 0; a < ARG_COUNT; ++a) {
    const ArgSpec *arg = &ARGS[a];
    if (!used[a] || state[a].known) continue;
    if (arg->kind != KIND_NDARRAY)
      die("no value for '%s': give %s/%s.npy or --set %s=...", arg->name, opt->in_dir, arg->name, arg->name);
    if (arg->role == ROLE_INPUT)
      die("missing input %s/%s.npy (arg '%s' is an input)", opt->in_dir, arg->name, arg->name);
    for (int d = 0; d < arg->ndim; ++d) {
      const char *dim = arg->shape[d];
      Dim *bound = dim != NULL && !isdigit((unsigned char)dim[0]) ? find_dim(dim) : NULL;
      if (dim == NULL || (!isdigit((unsigned char)dim[0]) && bound == NULL))
        die("cannot size '%s': shape[%d] is %s; give %s/%s.npy or --dim %s=N", arg->name, d,
            dim ? dim : "unknown", opt->in_dir, arg->name, dim ? dim : "NAME");
      state[a].shape[d] = bound ? bound->value : atoll(dim);
    }
    for (int e = 0; e < arg->elem_ndim; ++e) state[a].shape[arg->ndim + e] = arg->elem_shape[e];
    NpyArray *host = &state[a].host;
    host->dtype = arg->dtype;
    host->ndim = full_ndim(arg);
    memcpy(host->shape, state[a].shape, sizeof(int64_t) * (size_t)host->ndim);
    if (npy_nbytes(host->ndim, host->shape, npy_dtype_size(arg->dtype), &host->nbytes) != 0)
      die("'%s' is too large: its byte size overflows (check the dims)", arg->name);
    host->data = calloc(host->nbytes ? host->nbytes : 1, 1); /* outputs and temps start at zero */
    if (host->data == NULL) die("out of memory for '%s' (%zu bytes)", arg->name, host->nbytes);
    state[a].known = 1;
  }
}

/* ---- Device memory ----------------------------------------------------------------------- */

/* The LLVM archs map device memory directly (x64 memory is host memory; CUDA's map copies through
 * a host buffer), and their ti_copy_memory_device_to_device is "Not supported". On Vulkan,
 * device-local memory cannot be mapped on a real GPU: data goes through a host-visible staging
 * allocation and ti_copy_memory_device_to_device. */
static const int DIRECT_MAPPING = MODULE_ARCH == TI_ARCH_X64 || MODULE_ARCH == TI_ARCH_CUDA;

static TiMemory allocate(TiRuntime runtime, size_t nbytes, int host_visible) {
  TiMemoryAllocateInfo info;
  memset(&info, 0, sizeof info);
  info.size = nbytes ? nbytes : 4;
  info.host_read = info.host_write = host_visible ? TI_TRUE : TI_FALSE;
  info.usage = TI_MEMORY_USAGE_STORAGE_BIT;
  TiMemory memory = ti_allocate_memory(runtime, &info);
  check("ti_allocate_memory");
  return memory;
}

static void allocate_buffers(TiRuntime runtime) {
  int slot_buffer[ARG_COUNT];
  for (int a = 0; a < ARG_COUNT; ++a) slot_buffer[a] = -1;
  for (int a = 0; a < ARG_COUNT; ++a) {
    if (!used[a] || ARGS[a].kind != KIND_NDARRAY) continue;
    int slot = ARGS[a].slot; /* temps of one memory-plan slot share one buffer */
    int b = slot >= 0 && slot < ARG_COUNT && slot_buffer[slot] >= 0 ? slot_buffer[slot] : buffer_count++;
    if (slot >= 0 && slot < ARG_COUNT) slot_buffer[slot] = b;
    if (buffers[b].nbytes < state[a].host.nbytes) buffers[b].nbytes = state[a].host.nbytes;
    state[a].buffer = b;
  }
  for (int b = 0; b < buffer_count; ++b) {
    buffers[b].memory = allocate(runtime, buffers[b].nbytes, DIRECT_MAPPING);
    if (!DIRECT_MAPPING) buffers[b].staging = allocate(runtime, buffers[b].nbytes, 1);
  }
}

static void copy_on_device(TiRuntime runtime, TiMemory dst, TiMemory src, size_t nbytes) {
  TiMemorySlice to = {dst, 0, nbytes}, from = {src, 0, nbytes};
  ti_copy_memory_device_to_device(runtime, &to, &from);
  check("ti_copy_memory_device_to_device");
}

static void upload(TiRuntime runtime, int a) {
  const Buffer *buf = &buffers[state[a].buffer];
  TiMemory target = DIRECT_MAPPING ? buf->memory : buf->staging;
  void *mapped = ti_map_memory(runtime, target);
  check("ti_map_memory");
  memcpy(mapped, state[a].host.data, state[a].host.nbytes);
  ti_unmap_memory(runtime, target);
  check("ti_unmap_memory");
  if (!DIRECT_MAPPING) {
    copy_on_device(runtime, buf->memory, buf->staging, state[a].host.nbytes);
    ti_wait(runtime); /* the staging buffer may be reused by the next upload */
    check("ti_wait");
  }
}

/* Read the first i32 of a flag the device writes: wait for the device, then copy 4 bytes to the
 * host. This wait is what a host-side decision costs. */
static int32_t read_flag(TiRuntime runtime, int a) {
  const Buffer *buf = &buffers[state[a].buffer];
  if (!DIRECT_MAPPING) copy_on_device(runtime, buf->staging, buf->memory, sizeof(int32_t));
  ti_wait(runtime);
  check("ti_wait");
  TiMemory source = DIRECT_MAPPING ? buf->memory : buf->staging;
  void *mapped = ti_map_memory(runtime, source);
  check("ti_map_memory");
  int32_t flag;
  memcpy(&flag, mapped, sizeof flag);
  ti_unmap_memory(runtime, source);
  check("ti_unmap_memory");
  return flag;
}

static void download(TiRuntime runtime, int a) {
  const Buffer *buf = &buffers[state[a].buffer];
  if (!DIRECT_MAPPING) copy_on_device(runtime, buf->staging, buf->memory, state[a].host.nbytes);
  ti_wait(runtime);
  check("ti_wait");
  TiMemory source = DIRECT_MAPPING ? buf->memory : buf->staging;
  void *mapped = ti_map_memory(runtime, source);
  check("ti_map_memory");
  memcpy(state[a].host.data, mapped, state[a].host.nbytes);
  ti_unmap_memory(runtime, source);
  check("ti_unmap_memory");
}

/* ---- Launching --------------------------------------------------------------------------- */

/* The named arguments of one segment. Taichi 1.7.4 takes 32-bit scalars as TI_ARGUMENT_TYPE_F32 or
 * _I32; TI_ARGUMENT_TYPE_SCALAR accepts only 16-bit types; matrices go as TI_ARGUMENT_TYPE_TENSOR. */
static void build_arguments(int s, TiNamedArgument *out) {
  for (int i = 0; i < SEGMENTS[s].arg_count; ++i) {
    int a = SEGMENTS[s].args[i];
    const ArgSpec *arg = &ARGS[a];
    TiNamedArgument *named = &out[i];
    memset(named, 0, sizeof *named);
    named->name = arg->name;
    TiArgument *value = &named->argument;
    if (arg->kind == KIND_NDARRAY) {
      value->type = TI_ARGUMENT_TYPE_NDARRAY;
      value->value.ndarray.memory = buffers[state[a].buffer].memory;
      value->value.ndarray.shape.dim_count = (uint32_t)arg->ndim;
      for (int d = 0; d < arg->ndim; ++d) value->value.ndarray.shape.dims[d] = (uint32_t)state[a].shape[d];
      value->value.ndarray.elem_shape.dim_count = (uint32_t)arg->elem_ndim;
      for (int e = 0; e < arg->elem_ndim; ++e) value->value.ndarray.elem_shape.dims[e] = arg->elem_shape[e];
      value->value.ndarray.elem_type = arg->ti_dtype;
    } else if (arg->kind == KIND_MATRIX) {
      value->type = TI_ARGUMENT_TYPE_TENSOR;
      value->value.tensor.type = arg->ti_dtype;
      value->value.tensor.contents.length = arg->elem_shape[0] * (arg->elem_ndim > 1 ? arg->elem_shape[1] : 1);
      memcpy(value->value.tensor.contents.data.x8, state[a].value, sizeof value->value.tensor.contents.data);
    } else if (arg->dtype == NPY_F32) {
      value->type = TI_ARGUMENT_TYPE_F32;
      memcpy(&value->value.f32, state[a].value, 4);
    } else if (arg->dtype == NPY_I32) {
      value->type = TI_ARGUMENT_TYPE_I32;
      memcpy(&value->value.i32, state[a].value, 4);
    } else { /* i16, u16 */
      value->type = TI_ARGUMENT_TYPE_SCALAR;
      value->value.scalar.type = arg->ti_dtype;
      memcpy(&value->value.scalar.value.x16, state[a].value, 2);
    }
  }
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* What running a graph's ops needs at hand. */
typedef struct Runner {
  TiRuntime runtime;
  TiComputeGraph *segments;                /* per SEGMENTS entry */
  TiNamedArgument (*arguments)[ARG_COUNT]; /* per SEGMENTS entry */
  int events;                              /* --events */
  long frame;
  const char *graph; /* the graph running, for --events */
} Runner;

static void run_ops(const Runner *run, int start, int count);

/* Run the body when the flag is non-zero, else the other block (if any). */
static void run_cond(const Runner *run, const Op *op) {
  int taken = read_flag(run->runtime, op->flag) != 0;
  const char *branch = taken ? "then" : op->other >= 0 ? "else" : "skip";
  if (run->events) printf("event frame=%ld graph=%s node=%s cond=%s\n", run->frame, run->graph, op->node, branch);
  if (taken) run_ops(run, op->body, op->body_len);
  else if (op->other >= 0) run_ops(run, op->other, op->other_len);
}

/* A count loop runs its body ARGS[count] times. A while loop runs the body, then reads the flag:
 * it stops when the flag is 0, or after max_iter iterations ("limit_reached"), as graphlab does. */
static void run_loop(const Runner *run, const Op *op) {
  long iterations = 0;
  int limit_reached = 0;
  if (op->count >= 0) {
    int32_t count;
    memcpy(&count, state[op->count].value, sizeof count);
    for (; iterations < count; ++iterations) run_ops(run, op->body, op->body_len);
  } else {
    long max_iter = op->times > 0 ? op->times : 1;
    for (;;) {
      run_ops(run, op->body, op->body_len);
      ++iterations;
      if (read_flag(run->runtime, op->flag) == 0) break;
      if (iterations >= max_iter) {
        limit_reached = 1;
        break;
      }
    }
  }
  if (run->events)
    printf("event frame=%ld graph=%s node=%s loop=%ld%s\n", run->frame, run->graph, op->node, iterations,
           limit_reached ? " limit_reached" : "");
}

/* Run a block: OPS[start] to OPS[start + count - 1]. Launches are queued; decisions wait. */
static void run_ops(const Runner *run, int start, int count) {
  for (int i = start; i < start + count; ++i) {
    const Op *op = &OPS[i];
    if (op->kind == OP_SEGMENT) {
      int s = op->segment;
      ti_launch_compute_graph(run->runtime, run->segments[s], (uint32_t)SEGMENTS[s].arg_count, run->arguments[s]);
      check("ti_launch_compute_graph");
    } else if (op->kind == OP_REPEAT) {
      for (long t = 0; t < op->times; ++t) run_ops(run, op->body, op->body_len);
    } else if (op->kind == OP_COND) {
      run_cond(run, op);
    } else {
      run_loop(run, op);
    }
  }
}

static void launch_frame(Runner *run, const Options *opt) {
  for (int i = 0; i < opt->graph_count; ++i) {
    const GraphSpec *graph = &GRAPHS[opt->graphs[i]];
    run->graph = graph->name;
    run_ops(run, graph->body, graph->body_len);
  }
  ++run->frame;
}

/* Launch the graphs opt->frames times. With --time the first frame is timed on its own (it
 * includes one-off work such as pipeline creation) and the rest together, waiting once. */
static void run_frames(TiRuntime runtime, const Options *opt, TiComputeGraph *segments) {
  static TiNamedArgument arguments[SEGMENT_COUNT][ARG_COUNT];
  for (int s = 0; s < SEGMENT_COUNT; ++s) build_arguments(s, arguments[s]);
  Runner run = {runtime, segments, arguments, opt->events, 0, NULL};
  double start = now_ms();
  launch_frame(&run, opt);
  ti_wait(runtime);
  check("ti_wait");
  double first = now_ms() - start;
  start = now_ms();
  for (long f = 1; f < opt->frames; ++f) launch_frame(&run, opt);
  ti_wait(runtime);
  check("ti_wait");
  double rest = now_ms() - start;
  if (opt->time) {
    printf("first frame: %.3f ms\n", first);
    if (opt->frames > 1)
      printf("%.3f ms per frame (mean of the %ld frames after the first)\n", rest / (double)(opt->frames - 1),
             opt->frames - 1);
  }
}

static void write_outputs(TiRuntime runtime, const Options *opt) {
  if (mkdir(opt->out_dir, 0777) != 0 && errno != EEXIST)
    die("cannot create %s: %s", opt->out_dir, strerror(errno));
  for (int a = 0; a < ARG_COUNT; ++a) {
    if (!used[a] || ARGS[a].kind != KIND_NDARRAY) continue;
    char path[4096], err[512];
    download(runtime, a);
    snprintf(path, sizeof path, "%s/%s.npy", opt->out_dir, ARGS[a].name);
    if (npy_write(path, &state[a].host, err, sizeof err) != 0) die("%s: %s", path, err);
  }
}

/* The x64 loader crashes on a folder that is not an x64 module, so look before loading. */
static void check_module_dir(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, MODULE_MARKER_FILE);
  if (access(path, R_OK) != 0)
    die("%s is missing: %s is not a %s AOT module folder (see --module)", path, dir, MODULE_ARCH_NAME);
}

int main(int argc, char **argv) {
  Options opt;
  memset(&opt, 0, sizeof opt);
  parse_options(argc, argv, &opt);
  mark_used(&opt);
  load_values(&opt);

  /* The LLVM runtimes (x64, CUDA) load their runtime bitcode from TI_LIB_DIR. */
  if ((MODULE_ARCH == TI_ARCH_X64 || MODULE_ARCH == TI_ARCH_CUDA) && getenv("TI_LIB_DIR") == NULL) {
#ifdef GRAPHLAB_TI_LIB_DIR
    setenv("TI_LIB_DIR", GRAPHLAB_TI_LIB_DIR, 0);
#else
    die("set TI_LIB_DIR to the folder with runtime_*.bc (taichi/_lib/c_api/runtime in the taichi wheel)");
#endif
  }
  check_module_dir(opt.module_dir);
  /* Note: without a CUDA driver, Taichi 1.7.4 answers a CUDA runtime request by falling back to
   * x64 with only a warning; a CUDA module then fails to load (or worse), so run it on a GPU. */
  TiRuntime runtime = ti_create_runtime(MODULE_ARCH, 0);
  check("ti_create_runtime(" MODULE_ARCH_NAME ")");
  TiAotModule module = ti_load_aot_module(runtime, opt.module_dir);
  check("ti_load_aot_module");
  TiComputeGraph segments[SEGMENT_COUNT];
  for (int s = 0; s < SEGMENT_COUNT; ++s) {
    segments[s] = ti_get_aot_module_compute_graph(module, SEGMENTS[s].name);
    check("ti_get_aot_module_compute_graph");
  }

  allocate_buffers(runtime);
  for (int a = 0; a < ARG_COUNT; ++a)
    if (used[a] && ARGS[a].kind == KIND_NDARRAY) upload(runtime, a);
  run_frames(runtime, &opt, segments);
  write_outputs(runtime, &opt);

  /* Memory goes with the runtime (x64 cannot free single allocations in Taichi 1.7.4). */
  ti_destroy_aot_module(module);
  check("ti_destroy_aot_module");
  ti_destroy_runtime(runtime);
  check("ti_destroy_runtime");
  for (int a = 0; a < ARG_COUNT; ++a) npy_free(&state[a].host);
  return 0;
}
"""

NPY_H = r"""/*
 * npy.h: read and write NumPy .npy files (format versions 1.0 to 3.0).
 *
 * Only what a host program exchanges with Python: little-endian, C-order arrays of the
 * primitive types Taichi ndarrays hold. Anything else (big-endian, Fortran order, structured
 * or object dtypes) is refused with a message that says how to re-save the array.
 */
#ifndef GRAPHLAB_NPY_H
#define GRAPHLAB_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef enum NpyDtype {
  NPY_F16, NPY_F32, NPY_F64,
  NPY_I8, NPY_I16, NPY_I32, NPY_I64,
  NPY_U8, NPY_U16, NPY_U32, NPY_U64,
  NPY_DTYPE_COUNT
} NpyDtype;

#define NPY_MAX_DIMS 16

typedef struct NpyArray {
  NpyDtype dtype;
  int ndim;                      /* 0 for a scalar saved with np.save(path, np.float32(1)) */
  int64_t shape[NPY_MAX_DIMS];
  size_t nbytes;                 /* element count times element size */
  void *data;                    /* malloc'ed, C order; release with npy_free */
} NpyArray;

/* "f32", "float32", "<f4" and 4 for NPY_F32, and so on. */
const char *npy_dtype_name(NpyDtype dtype);
const char *npy_dtype_numpy(NpyDtype dtype);
const char *npy_dtype_descr(NpyDtype dtype);
size_t npy_dtype_size(NpyDtype dtype);

/* Number of elements of a shape (1 for ndim 0). */
int64_t npy_count(int ndim, const int64_t *shape);

/* Bytes of a shape of `item`-byte elements into `out`. Returns 0, or -1 on a negative dim or an overflow. */
int npy_nbytes(int ndim, const int64_t *shape, size_t item, size_t *out);

/* Read `path` into `out`. Returns 0, or -1 with a message in `err`. */
int npy_read(const char *path, NpyArray *out, char *err, size_t err_size);

/* Write `array` to `path` as format 1.0. Returns 0, or -1 with a message in `err`. */
int npy_write(const char *path, const NpyArray *array, char *err, size_t err_size);

void npy_free(NpyArray *array);

#endif /* GRAPHLAB_NPY_H */
"""

NPY_C = r"""/*
 * npy.c: see npy.h. The format: a 6-byte magic "\x93NUMPY", a major and a minor version byte,
 * the header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then a Python dict
 * literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (8, 2), } padded with spaces
 * and a newline, then the raw data.
 */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name, *numpy, *descr;
  size_t size;
} DTYPES[NPY_DTYPE_COUNT] = {
    {"f16", "float16", "<f2", 2}, {"f32", "float32", "<f4", 4}, {"f64", "float64", "<f8", 8},
    {"i8", "int8", "|i1", 1},     {"i16", "int16", "<i2", 2},   {"i32", "int32", "<i4", 4},
    {"i64", "int64", "<i8", 8},   {"u8", "uint8", "|u1", 1},    {"u16", "uint16", "<u2", 2},
    {"u32", "uint32", "<u4", 4},  {"u64", "uint64", "<u8", 8},
};

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

const char *npy_dtype_name(NpyDtype dtype) { return DTYPES[dtype].name; }
const char *npy_dtype_numpy(NpyDtype dtype) { return DTYPES[dtype].numpy; }
const char *npy_dtype_descr(NpyDtype dtype) { return DTYPES[dtype].descr; }
size_t npy_dtype_size(NpyDtype dtype) { return DTYPES[dtype].size; }

int64_t npy_count(int ndim, const int64_t *shape) {
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) count *= shape[i];
  return count;
}

int npy_nbytes(int ndim, const int64_t *shape, size_t item, size_t *out) {
  uint64_t total = item;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && total > (uint64_t)INT64_MAX / (uint64_t)shape[i]) return -1;
    total *= (uint64_t)shape[i];
  }
  if (total > (uint64_t)SIZE_MAX) return -1;
  *out = (size_t)total;
  return 0;
}

static int fail(char *err, size_t err_size, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, err_size, fmt, args);
  va_end(args);
  return -1;
}

/* The text after 'key': in the header dict, or NULL. */
static const char *find_key(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *at = strstr(header, quoted);
  if (at == NULL) return NULL;
  at += strlen(quoted);
  while (*at == ' ' || *at == ':') ++at;
  return at;
}

static int parse_header(const char *header, NpyArray *out, char *err, size_t err_size) {
  const char *descr = find_key(header, "descr");
  const char *order = find_key(header, "fortran_order");
  const char *shape = find_key(header, "shape");
  if (descr == NULL || order == NULL || shape == NULL || *descr != '\'' || *shape != '(')
    return fail(err, err_size, "not a .npy header: %s", header);
  int found = -1;
  for (int i = 0; i < NPY_DTYPE_COUNT; ++i) {
    size_t n = strlen(DTYPES[i].descr);
    /* numpy writes '|i1' for one-byte types; '<i1' means the same. */
    if (strncmp(descr + 1, DTYPES[i].descr, n) == 0 && descr[1 + n] == '\'') found = i;
    if (DTYPES[i].size == 1 && descr[1] == '<' && strncmp(descr + 2, DTYPES[i].descr + 1, 2) == 0 &&
        descr[4] == '\'')
      found = i;
  }
  if (found < 0) {
    int len = (int)strcspn(descr + 1, "'");
    if (descr[1] == '>')
      return fail(err, err_size, "big-endian dtype '%.*s'; save a.astype(a.dtype.newbyteorder('<'))", len,
                  descr + 1);
    return fail(err, err_size, "dtype '%.*s' is not one of f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64", len,
                descr + 1);
  }
  if (strncmp(order, "False", 5) != 0)
    return fail(err, err_size, "Fortran-order data; save np.ascontiguousarray(a) instead");
  out->dtype = (NpyDtype)found;
  out->ndim = 0;
  for (const char *p = shape + 1; *p != ')';) {
    if (isdigit((unsigned char)*p)) {
      if (out->ndim == NPY_MAX_DIMS) return fail(err, err_size, "more than %d dims", NPY_MAX_DIMS);
      out->shape[out->ndim++] = strtoll(p, (char **)&p, 10);
    } else if (*p == ',' || *p == ' ' || *p == 'L') {
      ++p;
    } else {
      return fail(err, err_size, "bad shape in header: %s", header);
    }
  }
  if (npy_nbytes(out->ndim, out->shape, DTYPES[found].size, &out->nbytes) != 0)
    return fail(err, err_size, "shape too large: its byte size overflows: %s", header);
  return 0;
}

int npy_read(const char *path, NpyArray *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE *file = fopen(path, "rb");
  if (file == NULL) return fail(err, err_size, "cannot open (%s)", strerror(errno));
  unsigned char head[12];
  char *header = NULL;
  int status = -1;
  if (fread(head, 1, 10, file) != 10 || memcmp(head, MAGIC, 6) != 0) {
    fail(err, err_size, "not a .npy file (no \\x93NUMPY magic); write it with numpy.save");
    goto done;
  }
  size_t header_len = head[8] | (size_t)head[9] << 8;
  if (head[6] >= 2) { /* versions 2.0 and 3.0 have a 4-byte header length */
    if (fread(head + 10, 1, 2, file) != 2) goto truncated;
    header_len |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  }
  header = malloc(header_len + 1);
  if (header == NULL || fread(header, 1, header_len, file) != header_len) goto truncated;
  header[header_len] = '\0';
  if (parse_header(header, out, err, err_size) != 0) goto done;
  out->data = malloc(out->nbytes ? out->nbytes : 1);
  if (out->data == NULL) {
    fail(err, err_size, "out of memory for %zu bytes", out->nbytes);
    goto done;
  }
  if (fread(out->data, 1, out->nbytes, file) != out->nbytes) goto truncated;
  status = 0;
  goto done;
truncated:
  fail(err, err_size, "file is truncated");
done:
  free(header);
  fclose(file);
  if (status != 0) npy_free(out);
  return status;
}

int npy_write(const char *path, const NpyArray *array, char *err, size_t err_size) {
  char header[64 + 24 * NPY_MAX_DIMS];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   DTYPES[array->dtype].descr);
  for (int i = 0; i < array->ndim; ++i)
    n += snprintf(header + n, sizeof header - (size_t)n, "%s%lld", i ? ", " : "", (long long)array->shape[i]);
  n += snprintf(header + n, sizeof header - (size_t)n, array->ndim == 1 ? ",), }" : "), }"); /* (8,) is a tuple */
  /* Pad with spaces so that the data starts on a 64-byte boundary, as numpy does. */
  while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
  header[n++] = '\n';
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                              (unsigned char)(n >> 8)};
  FILE *file = fopen(path, "wb");
  if (file == NULL) return fail(err, err_size, "cannot create (%s)", strerror(errno));
  int ok = fwrite(prefix, 1, 10, file) == 10 && fwrite(header, 1, (size_t)n, file) == (size_t)n &&
           fwrite(array->data, 1, array->nbytes, file) == array->nbytes;
  if (fclose(file) != 0) ok = 0;
  return ok ? 0 : fail(err, err_size, "write failed (%s)", strerror(errno));
}

void npy_free(NpyArray *array) {
  free(array->data);
  array->data = NULL;
}
"""
