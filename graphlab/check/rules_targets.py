"""Rules for one export target: what an arch's AOT runtime can pass (only when a target is given)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlab.check.context import CheckContext
from graphlab.diagnostics import Diagnostic
from graphlab.errors import GraphError

if TYPE_CHECKING:
    from graphlab.graph import Graph

TARGETS = ("x64", "arm64", "cuda", "vulkan", "metal", "opengl", "gles", "dx12")
#: dtypes each target's code generator cannot use without optional device capabilities.
UNSUPPORTED_DTYPES = {
    "vulkan": {"f64": "shaderFloat64", "i64": "shaderInt64", "u64": "shaderInt64"},
    "metal": {"f64": "no f64 on Metal"},
    "opengl": {"f64": "GL_ARB_gpu_shader_fp64", "i64": "GL_ARB_gpu_shader_int64", "u64": "GL_ARB_gpu_shader_int64"},
    "gles": {"f64": "no f64 on GLES", "i64": "no i64 on GLES", "u64": "no u64 on GLES"},
}
NO_TEXTURES = {"x64", "arm64", "cuda"}


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
