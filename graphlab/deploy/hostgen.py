"""Generate, and build, a C host program that runs an exported module without Python.

``generate_host(out)`` writes ``out/host/``: ``main.c`` (tables generated from ``manifest.json``,
then plain functions a user can keep and change), ``npy.h``/``npy.c`` (a small .npy reader and
writer, so inputs and results travel as numpy files), ``CMakeLists.txt`` and ``README.md``.
``build_host(out)`` compiles it with the system C compiler against the taichi wheel's C runtime, so
a test or a notebook needs no cmake.

The C, CMake and Markdown sources are files of this package, in ``graphlab/deploy/host/`` (read
with :mod:`importlib.resources`, so they work from a wheel): ``npy.c`` and ``npy.h`` are copied as
they are; ``main.c.in``, ``CMakeLists.txt.in`` and ``README.md.in`` have ``@NAME@`` placeholders, as
CMake's ``configure_file`` writes them, filled here with escaped text. This module only makes that
text: the tables from the manifest. The tests compile the result with ``-Wall -Wextra -Werror``.

For example (needs a Taichi runtime and buffers; see the tests)::

    exe = build_host("out/mpm88")
    subprocess.run([exe, "--module", "out/mpm88/module", "--frames", "10", "--time"])
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from importlib.resources import files
from pathlib import Path

from graphlab._version import __version__
from graphlab.bridge.aot_files import MODULE_FILES, metadata_file
from graphlab.bridge.texture_formats import (
    TEXEL_CHANNELS,
    TEXTURE_KINDS,
    download_graph,
    format_problem,
    texel_format,
    upload_graph,
)
from graphlab.core.errors import ToolMissingError
from graphlab.core.names import MAX_DIM_SIZE, name_problem, shown
from graphlab.core.spec import Arg
from graphlab.deploy.capi import C_SCALARS
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.cruntime import Manifest, read_manifest
from graphlab.deploy.embedgen import generate_embedding, module_name, readme_example
from graphlab.deploy.errors import HostBuildError, HostGenError
from graphlab.model.plan import Branch, Iterate, Op, Plan, Repeat, Segment

__all__ = ["build_host", "c_string_literal", "cmake_string", "generate_host"]

EXECUTABLE = "graphlab_host"
COMPILERS = ("cc", "gcc", "clang")
#: The package-data folder holding the host's sources and templates.
SOURCES = files("graphlab.deploy") / "host"
#: A placeholder in those templates, as CMake's configure_file has them: C's and CMake's own ``$``
#: (``${VAR}``, ``$<...>``) and a lone ``@`` are plain text.
PLACEHOLDER = re.compile(r"@([A-Z][A-Z_]*)@")


def _check_manifest(manifest: Manifest) -> None:
    """Refuse what would not fit the host's tables: names and dim sizes are checked again here (a
    manifest.json can be edited by hand), even though every string is written as an escaped literal."""
    if manifest.arch not in MODULE_FILES:
        raise HostGenError(f"manifest.json: arch {shown(manifest.arch)} is not one of {', '.join(MODULE_FILES)}")
    for name, size in manifest.dims.items():
        problem = name_problem(name)
        if problem is not None:
            raise HostGenError(f"manifest.json: dims key {shown(name)} is not a dim name ({problem}); re-export")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_DIM_SIZE:
            raise HostGenError(f"manifest.json: dims[{name!r}] = {shown(size)} is not a size in 0..{MAX_DIM_SIZE:,}")
    for graph in manifest.graphs:  # its args are spec.Args: they checked their names, kinds and sizes
        problem = name_problem(graph.name)
        if problem is not None:
            where = f"manifest.json: graph {shown(graph.name)}"
            raise HostGenError(f"{where}: not a valid name ({problem}); rename it and re-export")


def _args_of(manifest: Manifest) -> dict[str, Arg]:
    """Every arg of every graph, once: graphs that name the same arg share its buffer in the host."""
    _check_manifest(manifest)
    args: dict[str, Arg] = {}
    for graph in manifest.graphs:
        for arg in graph.args:
            where = f"manifest.json: graph {graph.name!r}, arg {arg.name!r}"
            if arg.ndim > 8 or len(arg.element_shape) > 2:
                raise HostGenError(f"{where}: the host takes up to 8 field dims and 2 element dims")
            if arg.kind in TEXTURE_KINDS:
                problem = format_problem(_texel_format(manifest, arg))
                if problem is not None:
                    raise HostGenError(f"{where}: {problem}; re-export it with such a format")
            if arg.kind == "scalar" and arg.dtype not in C_SCALARS:
                fix = f"use one of {', '.join(C_SCALARS)} or a 1-element ndarray"
                raise HostGenError(f"{where}: a {arg.dtype} scalar cannot cross Taichi 1.7.4's C-API; {fix}")
            seen = args.setdefault(arg.name, arg)
            same = (seen.kind, seen.dtype, seen.ndim, seen.element_shape, seen.shape)
            if same != (arg.kind, arg.dtype, arg.ndim, arg.element_shape, arg.shape):
                fix = "the host shares one buffer per name, so rename one of them"
                raise HostGenError(f"{where}: differs from the arg of that name in another graph; {fix}")
            if arg.role == "input":  # an input anywhere must be given
                args[arg.name] = dataclasses.replace(seen, role="input")
    if not args:  # C has no empty arrays, and a host without args could neither feed nor read a graph
        raise HostGenError("manifest.json: no graph takes an arg, so the host has nothing to pass; give one an arg")
    return args


def _texel_format(manifest: Manifest, arg: Arg) -> str:
    sample = manifest.samples.get(arg.name)
    return texel_format(arg.kind, arg.fmt, sample.fmt if sample else None)


def _texture_rows(manifest: Manifest, args: dict[str, Arg], index: dict[str, int]) -> list[str]:
    """The TEXTURES table: each texture arg's image format and the module graphs that fill and read it."""
    rows = []
    for arg in (a for a in args.values() if a.kind in TEXTURE_KINDS):
        fmt = _texel_format(manifest, arg)
        upload, download = _c_string(upload_graph(fmt, arg.ndim)), _c_string(download_graph(fmt, arg.ndim))
        rows.append([str(index[arg.name]), f"TI_FORMAT_{fmt.upper()}", upload, download])
    lines = _c_rows(rows, ["arg", "format", "upload", "download"]) if rows else []
    return [*lines, "    {-1, TI_FORMAT_UNKNOWN, NULL, NULL}, /* end */"]


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


def _c_list(items: Iterable[object]) -> str:
    """A C array initializer; ``{0}`` when empty (C99 has no empty braces; the row's count says 0)."""
    return "{" + (", ".join(map(str, items)) or "0") + "}"


def _tables(manifest: Manifest) -> dict[str, str]:
    """The generated parts of main.c (``@NAME@`` -> text): what the module expects, as C tables."""
    args = _args_of(manifest)
    index = {name: i for i, name in enumerate(args)}
    slot_ids = {slot: i for i, slot in enumerate(sorted(manifest.slots))}  # renumbered 0.. for the C arrays
    slot_of = {name: slot_ids[slot] for slot, names in manifest.slots.items() for name in names}
    rows = []
    for arg in args.values():
        dtype = (arg.dtype or "").upper()
        element = arg.element_shape
        if arg.kind in TEXTURE_KINDS:  # on the host: float32 texels, one axis of channels
            dtype, element = "F32", (TEXEL_CHANNELS[_texel_format(manifest, arg)],)
        shape = ", ".join(_c_string(d) for d in (arg.shape or [None] * arg.ndim)) or "NULL"
        rows.append([
            _c_string(arg.name), f"KIND_{arg.kind.upper()}", f"ROLE_{arg.role.upper()}", f"NPY_{dtype}",
            f"TI_DATA_TYPE_{dtype}", str(arg.ndim), f"{{{shape}}}", str(len(element)),
            _c_list(element), str(slot_of.get(arg.name, -1)),
        ])  # fmt: skip
    header = ["name", "kind", "role", "dtype", "ti_dtype", "ndim", "shape", "elem_ndim", "elem_shape", "slot"]
    segments, graphs, ops = _program_rows(manifest, index)
    dims = [[_c_string(name), str(value)] for name, value in manifest.dims.items()]
    return {
        "VERSION": _c_comment(__version__),
        "TAICHI": _c_comment(manifest.taichi_version),
        "TI_ARCH": f"TI_ARCH_{manifest.arch.upper()}",
        "ARCH": manifest.arch,  # one of MODULE_FILES (checked), so plain text in a string or comment
        "MARKER": metadata_file(manifest.arch),  # the x64 loader crashes on a folder without it
        "ARGS": "\n".join(_c_rows(rows, header)),
        "SEGMENTS": "\n".join(_c_rows(segments, ["name", "arg_count", "args"])),
        "OPS": "\n".join(_c_rows(ops, OP_HEADER)),
        "GRAPHS": "\n".join(_c_rows(graphs, ["name", "arg_count", "args", "body", "body_len"])),
        "DIMS": "\n".join([*(_c_rows(dims) if dims else []), "    {NULL, 0}, /* end */"]),
        "TEXTURES": "\n".join(_texture_rows(manifest, args, index)),
        "RELATIONS": "\n".join(_relation_rows(manifest, index)),
    }


#: Loop extents a relation's row holds (each must be non-empty for the relation to apply); a relation
#: under more nested loops than this is left to the Python side (load_module, verify) to check.
MAX_GUARDS = 8


def _relation_rows(manifest: Manifest, index: Mapping[str, int]) -> list[str]:
    """The shape relations (:mod:`graphlab.kernelfacts.shape_facts`) as C rows, checked before anything runs.

    A row: the arg and axis, the source arg and axis (-1: a constant ``minimum``), the loop extents
    (arg, axis; -1: every axis) that must be non-empty, and the access for the message.
    """
    rows = []
    for graph in manifest.graphs:
        for rel in graph.relations:
            if len(rel.guards) > MAX_GUARDS:
                continue
            guards = [v for name, axis in rel.guards for v in (index[name], -1 if axis is None else axis)]
            source = -1 if rel.source is None else index[rel.source]
            rows.append([
                str(index[rel.arg]), str(rel.axis), str(source), str(rel.source_axis or 0), str(rel.minimum or 0),
                str(len(rel.guards)), _c_list(guards), _c_string(rel.node), _c_string(rel.access),
            ])  # fmt: skip
    end = ["-1", "0", "-1", "0", "0", "0", "{0}", "NULL", "NULL"]
    header = ["arg", "axis", "source", "source_axis", "minimum", "guard_count", "guards", "node", "access"]
    return _c_rows([*rows, end], header)


def _fill(name: str, **values: str) -> str:
    """The package-data template ``name`` with every ``@NAME@`` replaced by ``values[NAME]`` (a
    placeholder without a value is a ``KeyError``); values are inserted as they are, not scanned again."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], (SOURCES / name).read_text(encoding="utf-8"))


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
        The manifest has something the host cannot pass (an integer-format texture, an f64 scalar) or two graphs
        disagree about an arg of one name.
    """
    out = Path(out_dir)
    manifest = manifest or read_manifest(out)
    tables = _tables(manifest)  # checks the manifest first: nothing is written for a bad one
    graphs = "\n".join(
        f"- `{g.name}`({', '.join(f'{a.name}: {_describe(a)}' for a in g.args)})" for g in manifest.graphs
    )
    c_api = taichi_c_api_dir().as_posix()
    readme = {
        "VERSION": __version__,
        "ARCH": manifest.arch,
        "GRAPHS": graphs,
        "EXE": EXECUTABLE,
        "C_API": c_api,
        **readme_example(manifest, module_name(out)),
    }
    sources = {
        "main.c": _fill("main.c.in", **tables),
        "npy.h": (SOURCES / "npy.h").read_text(encoding="utf-8"),
        "npy.c": (SOURCES / "npy.c").read_text(encoding="utf-8"),
        "CMakeLists.txt": _fill("CMakeLists.txt.in", C_API=cmake_string(c_api)),
        "README.md": _fill("README.md.in", **readme),
    }
    host = out / "host"
    host.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        _write(host / name, text)
    generate_embedding(out, manifest=manifest)
    return host


def _describe(arg: Arg) -> str:
    if arg.kind in TEXTURE_KINDS:
        return f"{arg.kind}[{', '.join(map(str, arg.shape)) if arg.shape else f'{arg.ndim} dims'}] {arg.role}"
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
    compiled as it is, so a user's edits are kept; with ``-Wall -Wextra``, whose warnings come back
    as a Python ``UserWarning`` (the program is still built).

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
        command = [compiler, "-std=c99", "-O2", "-Wall", "-Wextra", "-isystem", str(c_api / "include"),
                   f"-DGRAPHLAB_TI_LIB_DIR={runtime}", str(host / "main.c"), str(host / "npy.c"),
                   "-o", str(built), f"-L{lib}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{lib}"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        said = f"$ {' '.join(command)}\n{done.stdout}{done.stderr}"
        if done.returncode != 0:
            raise HostBuildError(f"building {host} failed:\n{said}")
        if (done.stdout + done.stderr).strip():
            warnings.warn(f"building {host}: the C compiler warned (the program was built):\n{said}", stacklevel=2)
        built.replace(exe)
    return exe


# --- The plans as main.c's SEGMENTS, GRAPHS and OPS rows -----------------------------------------
# The only part of this module that reads the control-flow types (graphlab.model.plan). In: the manifest and
# each arg's row in ARGS. Out: the rows of those three tables, as C initializer cells.


Rows = list[list[str]]


def _program_rows(manifest: Manifest, index: dict[str, int]) -> tuple[Rows, Rows, Rows]:
    """``(segments, graphs, ops)``: the rows of main.c's SEGMENTS, GRAPHS and OPS tables."""
    plans = [g.plan for g in manifest.graphs]
    segments = [s for plan in plans for s in plan.segments]  # main.c's SEGMENTS, every graph's in turn
    rows_of = {(plan.graph, s.id): i for i, (plan, s) in enumerate((p, s) for p in plans for s in p.segments)}
    program = _Program(index, rows_of)
    graphs: Rows = []
    for g, plan in zip(manifest.graphs, plans):
        body, count = program.flatten(plan, plan.body)
        graphs.append([_c_string(g.name), str(len(g.args)), _c_list(index[a.name] for a in g.args), str(body),
                       str(count)])  # fmt: skip
    segment_rows = [[_c_string(s.name), str(len(s.args)), _c_list(index[a] for a in s.args)] for s in segments]
    return segment_rows, graphs, program.rows


OP_HEADER = [
    "kind", "node", "segment", "flag", "count", "times", "body", "body_len", "other", "other_len", "check_every",
    "guarded", "saves_len", "saves",
]  # fmt: skip
_NOT_GUARDED = ["0", "0", "{0}"]  # the last three cells of a row that is no guarded loop


class _Program:
    """Plans as the rows of main.c's OPS table: each block is a contiguous range of rows.

    ``segments`` maps ``(graph, segment id)`` to the segment's row in main.c's SEGMENTS table.
    """

    def __init__(self, args: dict[str, int], segments: dict[tuple[str, int], int]) -> None:
        self.args, self.segments = args, segments
        self.rows: list[list[str]] = []

    def flatten(self, plan: Plan, ops: tuple[Op, ...]) -> tuple[int, int]:
        """Reserve the block's rows, then fill them (their own blocks go after): ``(start, count)``."""
        start = len(self.rows)
        self.rows.extend([[]] * len(ops))
        for i, op in enumerate(ops):
            self.rows[start + i] = self._row(plan, op)
        return start, len(ops)

    def _row(self, plan: Plan, op: Op) -> list[str]:
        if isinstance(op, Segment):
            return ["OP_SEGMENT", "NULL", str(self.segments[plan.graph, op.id]), "-1", "-1", "0", "0", "0", "-1", "0",
                    "0", *_NOT_GUARDED]  # fmt: skip
        if isinstance(op, Repeat):
            return ["OP_REPEAT", "NULL", "-1", "-1", "-1", str(op.times), *map(str, self.flatten(plan, op.body)),
                    "-1", "0", "0", *_NOT_GUARDED]  # fmt: skip
        if isinstance(op, Branch):
            then = self.flatten(plan, op.then)
            other = (-1, 0) if op.else_ is None else self.flatten(plan, op.else_)
            return ["OP_COND", _c_string(op.node_id), "-1", str(self.args[op.flag]), "-1", "0",
                    *map(str, then), *map(str, other), "0", *_NOT_GUARDED]  # fmt: skip
        assert isinstance(op, Iterate)
        flag = -1 if op.while_ is None else self.args[op.while_]
        count = -1 if op.count is None else self.args[op.count]
        guarded = [str(int(op.guarded)), str(len(op.saves)), _c_list(self.args[a] for a in op.saves)]
        return ["OP_LOOP", _c_string(op.node_id), "-1", str(flag), str(count), str(op.max_iter or 0),
                *map(str, self.flatten(plan, op.body)), "-1", "0", str(op.check_every), *guarded]  # fmt: skip
