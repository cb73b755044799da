"""A small AOT module exported by hand with Taichi's own API, for the C-runtime tests.

Taichi allows one ``ti.aot.Module`` per ``ti.init`` and exports only for the current arch, so the
tests run this file in a child process::

    python tests/aot_kernels.py ARCH OUT_DIR [FRAMES]

It writes ``OUT_DIR/module/`` (``ti.aot.Module.save``), a hand-written ``OUT_DIR/manifest.json``,
the inputs as ``OUT_DIR/inputs/<arg>.npy`` and what Taichi's Python runtime computes from them
(``FRAMES`` frames of ``update`` then ``scale``) as ``OUT_DIR/expected/<arg>.npy``.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import taichi as ti

N, G = 64, 8

# name, kind, dtype, ndim, element_shape, role, shape
UPDATE_ARGS = [
    ("a", "scalar", "f32", 0, [], "input", None),
    ("x", "ndarray", "f32", 1, [], "input", ["n"]),
    ("y", "ndarray", "f32", 1, [], "state", ["n"]),
    ("pos", "ndarray", "f32", 1, [2], "state", ["n"]),
    ("vel", "ndarray", "f32", 1, [2], "state", ["n"]),
    ("dt", "scalar", "f32", 0, [], "input", None),
    ("gravity", "matrix", "f32", 0, [2], "input", None),
    ("src", "ndarray", "f32", 2, [], "input", ["G", "G"]),
    ("k", "scalar", "i32", 0, [], "input", None),
    ("tmp", "ndarray", "f32", 2, [], "temp", ["G", "G"]),
    ("dst", "ndarray", "f32", 2, [], "output", ["G", "G"]),
]
SCALE_ARGS = [
    ("y", "ndarray", "f32", 1, [], "state", ["n"]),
    ("s", "scalar", "i16", 0, [], "input", None),
]


@ti.kernel
def saxpy(a: ti.f32, x: ti.types.ndarray(ti.f32, ndim=1), y: ti.types.ndarray(ti.f32, ndim=1)):
    for i in x:
        y[i] = a * x[i] + y[i]


@ti.kernel
def advect(
    pos: ti.types.ndarray(ti.math.vec2, ndim=1),
    vel: ti.types.ndarray(ti.math.vec2, ndim=1),
    dt: ti.f32,
    gravity: ti.math.vec2,
):
    for i in pos:
        vel[i] += dt * gravity
        pos[i] += dt * vel[i]


@ti.kernel
def blur_rows(src: ti.types.ndarray(ti.f32, ndim=2), tmp: ti.types.ndarray(ti.f32, ndim=2), k: ti.i32):
    for i, j in src:
        tmp[i, j] = k * src[i, j] + 0.5 * src[(i + 1) % src.shape[0], j]


@ti.kernel
def blur_cols(tmp: ti.types.ndarray(ti.f32, ndim=2), dst: ti.types.ndarray(ti.f32, ndim=2)):
    for i, j in tmp:
        dst[i, j] = tmp[i, j] + 0.25 * tmp[i, (j + 1) % tmp.shape[1]]


@ti.kernel
def scale(y: ti.types.ndarray(ti.f32, ndim=1), s: ti.i16):
    for i in y:
        y[i] = y[i] * ti.cast(s, ti.f32)


def _graph_arg(name: str, kind: str, dtype: str, ndim: int, element_shape: list[int], *_: object):
    base = getattr(ti, dtype)
    if kind == "scalar":
        return ti.graph.Arg(ti.graph.ArgKind.SCALAR, name, base)
    if kind == "matrix":
        return ti.graph.Arg(ti.graph.ArgKind.MATRIX, name, ti.types.vector(element_shape[0], base))
    vec = ti.types.vector(element_shape[0], base) if element_shape else base
    return ti.graph.Arg(ti.graph.ArgKind.NDARRAY, name, vec, ndim=ndim)


def build_graphs() -> dict[str, object]:
    """The two compiled graphs, built with plain ti.graph."""
    u = {spec[0]: _graph_arg(*spec) for spec in UPDATE_ARGS}
    update = ti.graph.GraphBuilder()
    update.dispatch(saxpy, u["a"], u["x"], u["y"])
    update.dispatch(advect, u["pos"], u["vel"], u["dt"], u["gravity"])
    update.dispatch(blur_rows, u["src"], u["tmp"], u["k"])
    update.dispatch(blur_cols, u["tmp"], u["dst"])
    s = {spec[0]: _graph_arg(*spec) for spec in SCALE_ARGS}
    scaled = ti.graph.GraphBuilder()
    scaled.dispatch(scale, s["y"], s["s"])
    return {"update": update.compile(), "scale": scaled.compile()}


def make_inputs(seed: int = 0) -> dict[str, object]:
    """Inputs for both graphs; ``dst`` and ``tmp`` start at zero."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "a": 1.5, "dt": 0.125, "k": 3, "s": 2, "gravity": np.array([0.0, -9.8], f32),
        "x": rng.random(N, f32), "y": rng.random(N, f32), "pos": rng.random((N, 2), f32),
        "vel": rng.random((N, 2), f32), "src": rng.random((G, G), f32), "dst": np.zeros((G, G), f32),
    }  # fmt: skip


def manifest(arch: str, folder: Path) -> dict[str, object]:
    """The manifest for the module in ``folder/module``, written by hand as the exporter would."""
    keys = ("name", "kind", "dtype", "ndim", "element_shape", "role", "shape")

    def args(specs: list[tuple]) -> list[dict[str, object]]:
        return [{k: v for k, v in zip(keys, spec) if v is not None} for spec in specs]

    files = sorted(p for p in (folder / "module").iterdir() if p.is_file())
    return {
        "format": "graphlab.module/1",
        "arch": arch,
        "taichi_version": ".".join(map(str, ti.__version__)),
        "graphs": [{"name": "update", "args": args(UPDATE_ARGS)}, {"name": "scale", "args": args(SCALE_ARGS)}],
        "dims": {"n": N, "G": G},
        "memory_plan": {"slots": [{"slot": 0, "bytes": G * G * 4, "args": ["tmp"]}]},
        "files": {f"module/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
    }


def reference(graphs: dict[str, object], values: dict[str, object], frames: int) -> dict[str, np.ndarray]:
    """Run ``frames`` frames (``update`` then ``scale``) in Taichi's Python runtime."""
    arrays = {}
    for name, _, dtype, ndim, esh, _, _ in UPDATE_ARGS:
        if ndim:
            shape = (G, G) if name in ("src", "tmp", "dst") else (N,)
            arr = ti.ndarray(ti.types.vector(esh[0], ti.f32) if esh else getattr(ti, dtype), shape)
            if name in values:
                arr.from_numpy(values[name])
            arrays[name] = arr
    scalars = {k: (ti.math.vec2(*values[k]) if k == "gravity" else values[k]) for k in ("a", "dt", "gravity", "k")}
    for _ in range(frames):
        graphs["update"].run({**arrays, **scalars})
        graphs["scale"].run({"y": arrays["y"], "s": values["s"]})
    return {name: arr.to_numpy() for name, arr in arrays.items() if name != "tmp"}


def main(arch: str, out: str, frames: int = 3) -> None:
    folder = Path(out)
    ti.init(arch=getattr(ti, arch), cpu_max_num_threads=1, offline_cache=False)
    graphs = build_graphs()
    (folder / "module").mkdir(parents=True, exist_ok=True)
    # A Vulkan module is compiled for no device capabilities unless told: without this one the i16
    # scalar of `scale` fails with "Type i16 not supported".
    module = ti.aot.Module(getattr(ti, arch), caps=["spirv_has_int16"] if arch == "vulkan" else None)
    for name, graph in graphs.items():
        module.add_graph(name, graph)
    module.save(str(folder / "module"))
    (folder / "manifest.json").write_text(json.dumps(manifest(arch, folder), indent=2))
    values = make_inputs()
    dtypes = {spec[0]: np.dtype(spec[2].replace("f", "float").replace("i", "int")) for spec in UPDATE_ARGS + SCALE_ARGS}
    for sub, data in (("inputs", values), ("expected", reference(graphs, values, frames))):
        (folder / sub).mkdir(exist_ok=True)
        for name, value in data.items():
            np.save(folder / sub / f"{name}.npy", np.asarray(value, dtypes[name]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:4]))
