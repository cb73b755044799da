"""Generate, and build, a C host program that runs an exported module without Python.

``generate_host(out)`` writes ``out/host/``: ``main.c`` (a command-line front-end over the runtime
library in ``out/runtime/``, which reads ``manifest.json`` itself: nothing in it is per-module but its
header comment), ``npy.h``/``npy.c`` (a small .npy reader and writer, so inputs and results travel as
numpy files), ``CMakeLists.txt`` (``add_subdirectory(../runtime)``) and ``README.md``. ``build_host(out)``
compiles it, with the library's sources, with the system C compiler against the taichi wheel's C
runtime, so a test or a notebook needs no cmake.

The C, CMake and Markdown sources are files of this package, in ``graphlab/deploy/host/`` (read
with :mod:`importlib.resources`, so they work from a wheel): ``npy.c`` and ``npy.h`` are copied as
they are; ``main.c.in``, ``CMakeLists.txt.in`` and ``README.md.in`` have ``@NAME@`` placeholders, as
CMake's ``configure_file`` writes them, filled here with escaped text. The manifest is checked here
for what the host cannot pass (so an export fails early, with the arg named); the library checks it
again when it opens. The tests compile the result with ``-Wall -Wextra -Werror``.

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
from importlib.resources import files
from pathlib import Path

from graphlab._version import __version__
from graphlab.bridge.aot_files import MODULE_FILES
from graphlab.bridge.texture_formats import TEXTURE_KINDS, format_problem, texel_format
from graphlab.core.errors import ToolMissingError
from graphlab.core.names import MAX_DIM_SIZE, name_problem, shown
from graphlab.core.spec import Arg
from graphlab.deploy.capi import C_SCALARS
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.cruntime import Manifest, read_manifest
from graphlab.deploy.embedgen import RUNTIME_SOURCES, generate_embedding, module_name, readme_example
from graphlab.deploy.errors import HostBuildError, HostGenError

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


def _c_comment(text: str) -> str:
    """``text`` safe inside a ``/* */`` comment: printable ASCII only, no ``*/``."""
    return "".join(c if " " <= c < "\x7f" else "?" for c in text).replace("*/", "*?/")


def cmake_string(text: str) -> str:
    """``text`` escaped for the inside of a quoted CMake argument (no variable expansion, no breaking out).

    A ``;`` stays: inside quotes it does not split the argument (``\\;`` would keep its backslash).
    """
    escapes = {"\\": "\\\\", '"': '\\"', "$": "\\$", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(escapes.get(c, c) for c in text)


def _tables(manifest: Manifest) -> dict[str, str]:
    """The placeholders of main.c.in (``@NAME@`` -> text): only its header comment names the module."""
    _args_of(manifest)  # refuse what the host cannot pass before anything is written
    return {
        "VERSION": _c_comment(__version__),
        "TAICHI": _c_comment(manifest.taichi_version),
        "ARCH": manifest.arch,  # one of MODULE_FILES (checked), so plain text in a comment
    }


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


#: The runtime library's C sources, compiled into the host program.
LIBRARY_SOURCES = ("graphlab_runtime.c", "gl_manifest.c", "gl_capture.c", "gl_json.c", "gl_sha256.c")


def _library_dir(out: Path) -> Path:
    """The library sources the host is built with: the export's ``runtime/``, else this package's own
    (a host folder copied without it). main.c includes ``../runtime/graphlab_runtime.h``: beside
    ``host/`` it finds the export's; through ``-I<library>`` it finds ``<library>/../runtime/``, the same
    folder, in either case."""
    runtime = out / "runtime"
    if all((runtime / name).is_file() for name in LIBRARY_SOURCES):
        return runtime
    return Path(str(RUNTIME_SOURCES))


def build_host(out_dir: str | os.PathLike[str], *, cc: str | os.PathLike[str] | None = None) -> Path:
    """Compile ``out_dir/host`` (generated first if missing) into ``out_dir/host/build/graphlab_host``.

    The compiler is called directly (no cmake) with the runtime library's sources (``out_dir/runtime``),
    the wheel's headers and library, and an rpath to the library so the program runs without
    ``LD_LIBRARY_PATH``. An existing ``main.c`` is compiled as it is, so a user's edits are kept; with
    ``-Wall -Wextra``, whose warnings come back as a Python ``UserWarning`` (the program is still built).

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
        library = _library_dir(out)
        command = [compiler, "-std=c99", "-O2", "-Wall", "-Wextra", "-isystem", str(c_api / "include"),
                   f"-I{library}", f"-DGRAPHLAB_TI_LIB_DIR={runtime}", str(host / "main.c"), str(host / "npy.c"),
                   *(str(library / name) for name in LIBRARY_SOURCES),
                   "-o", str(built), f"-L{lib}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{lib}"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        said = f"$ {' '.join(command)}\n{done.stdout}{done.stderr}"
        if done.returncode != 0:
            raise HostBuildError(f"building {host} failed:\n{said}")
        if (done.stdout + done.stderr).strip():
            warnings.warn(f"building {host}: the C compiler warned (the program was built):\n{said}", stacklevel=2)
        built.replace(exe)
    return exe
