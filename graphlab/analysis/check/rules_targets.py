"""Rules for one export target: what an arch's AOT runtime can pass (only when a target is given)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.analysis.check.context import CheckContext
from graphlab.bridge.texture_formats import format_problem
from graphlab.core.diagnostics import Diagnostic
from graphlab.core.errors import GraphError

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

TARGETS = ("x64", "arm64", "cuda", "vulkan", "metal", "opengl", "gles", "dx12")
#: dtypes each target's code generator cannot use without optional device capabilities.
UNSUPPORTED_DTYPES = {
    "vulkan": {"f64": "shaderFloat64", "i64": "shaderInt64", "u64": "shaderInt64"},
    "metal": {"f64": "no f64 on Metal"},
    "opengl": {"f64": "GL_ARB_gpu_shader_fp64", "i64": "GL_ARB_gpu_shader_int64", "u64": "GL_ARB_gpu_shader_int64"},
    "gles": {"f64": "no f64 on GLES", "i64": "no i64 on GLES", "u64": "no u64 on GLES"},
}
#: Archs without textures: Taichi's LLVM backends, whose code generator aborts the process on a texture kernel.
NO_TEXTURES = {"x64", "arm64", "cuda", "amdgpu"}


def check_runnable(graph: Graph, arch: str) -> None:
    """Raise :class:`GraphError` when the live ``arch`` cannot run the graph, before Taichi is asked to.

    A texture arg on an LLVM arch compiles, then aborts the process at the first launch (and even
    at exit): no exception a notebook could catch, so it is refused here.
    """
    if arch not in NO_TEXTURES:
        return
    textures = [a for a in graph.args.values() if a.kind in ("texture", "rw_texture") and graph.uses_of(a.name)]
    if textures:
        listed = ", ".join(f"{a.name!r} ({a.kind})" for a in textures)
        raise GraphError(
            f"graph {graph.name!r} cannot run on {arch}: arg(s) {listed} are textures, and Taichi's {arch} "
            "backend has none (a kernel taking one aborts the process). Run it on a graphics arch: "
            "ti.init(arch=ti.vulkan)"
        )


def validate_target(graph: Graph, ctx: CheckContext) -> Iterator[Diagnostic]:
    """GL018: args the target cannot take (f64 on Vulkan, textures on LLVM targets...)."""
    target = ctx.target
    if target is None:
        return
    if target not in TARGETS:
        raise GraphError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    for arg in graph.args.values():
        if arg.kind in ("texture", "rw_texture") and target in NO_TEXTURES:
            yield Diagnostic(
                "GL018",
                "error",
                f"arg {arg.name!r} is a {arg.kind}, which {target} AOT modules cannot take",
                None,
                arg.name,
                "export for vulkan (or another graphics API)",
            )
        elif arg.kind == "rw_texture" and target == "vulkan" and arg.fmt and format_problem(arg.fmt):
            yield Diagnostic(
                "GL018",
                "error",
                f"arg {arg.name!r} is a rw_texture of {arg.fmt}, which {target} modules cannot take: "
                f"{format_problem(arg.fmt)}",
                None,
                arg.name,
                "declare it with a float or normalised format such as ti.Format.r32f or ti.Format.rgba8",
            )
        needs = UNSUPPORTED_DTYPES.get(target, {}).get(arg.dtype or "")
        if needs:
            yield Diagnostic(
                "GL018",
                "warning",
                f"arg {arg.name!r} is {arg.dtype}, which {target} supports only with {needs}",
                None,
                arg.name,
                "use a 32-bit dtype, or make sure the deployment device has that capability",
            )


RULE_FUNCTIONS = (validate_target,)
