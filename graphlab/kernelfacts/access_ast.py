"""The ``"ast"`` source of :mod:`graphlab.kernelfacts.access`: a kernel's buffer reads and writes, from its Python code.

A conservative reading, used when Vulkan is missing or a kernel cannot be compiled alone: calls
into ``ti.func`` are followed (a few levels deep), and whatever it does not understand counts as
read and written. The :class:`AccessFlag` both sources answer in (Taichi's ``arr_access`` values)
and the kernel's buffer parameters are here too, so :mod:`graphlab.kernelfacts.access` imports this module
and not the reverse.
"""

import ast
import builtins
import enum
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from graphlab.bridge import is_taichi_function
from graphlab.child.carry import referenced_globals
from graphlab.child.payload import function_source

__all__ = [
    "AccessFlag", "ast_access", "buffer_params", "load_access", "module_of", "parse_function", "resolve_callee",
    "texture_access",
]  # fmt: skip

_MAX_DEPTH = 8
_METADATA_ATTRS = frozenset({"shape", "dtype", "element_shape", "ndim"})
_PURE_METHODS = frozenset({
    "all", "any", "cast", "cross", "determinant", "dot", "inverse", "max", "min", "norm",
    "norm_inv", "norm_sqr", "normalized", "outer_product", "sum", "trace", "transpose",
})  # fmt: skip


class AccessFlag(enum.IntFlag):
    """How a kernel uses a buffer parameter; the values are Taichi's own ``arr_access`` flags."""

    NONE = 0
    READ = 1
    WRITE = 2
    READ_WRITE = 3


# ---------------------------------------------------------------- parameters
def buffer_params(kernel: Callable[..., Any]) -> dict[str, str]:
    """``{name: "ndarray" | "texture" | "rw_texture"}`` for the kernel's buffer parameters."""
    from graphlab.bridge.types import annotation_kind, kernel_parameters  # import cost: Taichi

    kinds = {name: annotation_kind(annotation) for name, annotation in kernel_parameters(kernel)}
    return {name: kind for name, kind in kinds.items() if kind in ("ndarray", "texture", "rw_texture")}


def texture_access(kind: str) -> AccessFlag:
    return AccessFlag.READ if kind == "texture" else AccessFlag.READ_WRITE


# ---------------------------------------------------------------- source: ast
def _parse(fn: Callable[..., Any]) -> tuple[ast.FunctionDef, dict[str, object]]:
    tree = ast.parse(function_source(fn))
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return fdef, referenced_globals(fn)


def parse_function(fn: Callable[..., Any]) -> tuple[ast.FunctionDef, dict[str, object]]:
    """A kernel's (or ``ti.func``'s) definition and the globals it names.

    :mod:`graphlab.kernelfacts.shape_facts` reads it too."""
    return _parse(fn)


def resolve_callee(expr: ast.expr, scope: Mapping[str, object]) -> object:
    """The object a call's function expression names (``ti.ndrange``, ``range``), or ``None``."""
    return _resolve(expr, scope)


def _resolve(expr: ast.expr, scope: Mapping[str, object]) -> object:
    """The object a call's function expression names (``ti.atomic_add``, ``helper``), or ``None``."""
    if isinstance(expr, ast.Name):
        return scope[expr.id] if expr.id in scope else getattr(builtins, expr.id, None)
    if isinstance(expr, ast.Attribute):
        base = _resolve(expr.value, scope)
        if inspect.ismodule(base) or inspect.isclass(base):
            return getattr(base, expr.attr, None)
    return None


def module_of(obj: object) -> str:
    return getattr(obj, "__module__", None) or ""


def _by_reference(func: Callable[..., Any], param: str) -> bool:
    """Whether a ``@ti.func`` parameter aliases its argument (``ti.template()``, ``ti.types.ref``)."""
    from taichi.types.annotations import template  # import cost: Taichi
    from taichi.types.primitive_types import RefType  # import cost: Taichi

    annotation = inspect.signature(func).parameters[param].annotation
    if annotation is inspect.Parameter.empty:
        return False
    return isinstance(annotation, (template, RefType, str))


def _callee_param(func: Callable[..., Any], call: ast.Call, arg: ast.expr, kw: ast.keyword | None) -> str | None:
    names = list(inspect.signature(func).parameters)
    if kw is not None:
        return kw.arg if kw.arg in names else None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    pos = next(i for i, a in enumerate(call.args) if a is arg)
    return names[pos] if pos < len(names) else None


def _call_use(
    call: ast.Call, arg: ast.expr, kw: ast.keyword | None, scope: Mapping[str, object], depth: int, element: bool
) -> AccessFlag:
    """Access through passing a buffer (or one of its elements) to a call."""
    callee = _resolve(call.func, scope)
    name = getattr(callee, "__name__", "")
    module = module_of(callee)
    if module == "taichi" or module.startswith("taichi."):
        if name.startswith("atomic_"):
            return AccessFlag.READ_WRITE if call.args and call.args[0] is arg else AccessFlag.READ
        if name == "grouped" and not element:
            return AccessFlag.NONE
        return AccessFlag.READ if element else AccessFlag.READ_WRITE
    if module in ("builtins", "math") and element:
        return AccessFlag.READ
    if not is_taichi_function(callee) or depth >= _MAX_DEPTH:
        return AccessFlag.READ_WRITE
    func = callee.__wrapped__  # type: ignore[attr-defined]
    param = _callee_param(func, call, arg, kw)
    if param is None:
        return AccessFlag.READ_WRITE
    if element and not _by_reference(func, param):
        return AccessFlag.READ
    fdef, inner = _parse(callee)  # type: ignore[arg-type]
    return _uses(fdef, param, inner, depth + 1, element=element)


def _use(
    name: ast.Name, parents: Mapping[ast.AST, ast.AST], scope: Mapping[str, object], depth: int, element: bool
) -> AccessFlag:
    """Access through one load of the name: climb ``x[i].y[j]`` to its top and look at its use."""
    top: ast.expr = name
    indexed = element
    while True:
        parent = parents.get(top)
        if isinstance(parent, ast.Subscript) and parent.value is top:
            top, indexed = parent, True
            continue
        if isinstance(parent, ast.Attribute) and parent.value is top:
            call = parents.get(parent)
            is_method = isinstance(call, ast.Call) and call.func is parent
            if not indexed:  # an attribute of the buffer itself
                if parent.attr in _METADATA_ATTRS:
                    return AccessFlag.NONE
                return AccessFlag.WRITE if is_method and parent.attr == "fill" else AccessFlag.READ_WRITE
            if is_method:
                return AccessFlag.READ if parent.attr in _PURE_METHODS else AccessFlag.READ_WRITE
            top = parent
            continue
        break
    if isinstance(top.ctx, ast.Store):  # type: ignore[attr-defined]
        holder = parents.get(top)
        while isinstance(holder, (ast.Tuple, ast.List, ast.Starred)):
            holder = parents.get(holder)
        return AccessFlag.READ_WRITE if isinstance(holder, ast.AugAssign) else AccessFlag.WRITE
    if isinstance(top.ctx, ast.Del):  # type: ignore[attr-defined]
        return AccessFlag.READ_WRITE
    parent = parents.get(top)
    kw = parent if isinstance(parent, ast.keyword) else None
    if kw is not None:
        parent = parents.get(kw)
    if isinstance(parent, ast.Call) and parent.func is not top:
        return _call_use(parent, top, kw, scope, depth, indexed)
    if indexed:
        return AccessFlag.READ
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is top:
        return AccessFlag.NONE  # a struct-for over the buffer's shape
    return AccessFlag.READ_WRITE  # aliased, returned, ...: not modelled


def load_access(name: ast.Name, parents: Mapping[ast.AST, ast.AST], scope: Mapping[str, object]) -> AccessFlag:
    """Access through one load of a buffer parameter in a kernel body.

    :mod:`graphlab.kernelfacts.access_order` orders them."""
    return _use(name, parents, scope, 0, element=False)


def _uses(
    fdef: ast.FunctionDef, name: str, scope: Mapping[str, object], depth: int, *, element: bool = False
) -> AccessFlag:
    """Access to ``name`` (a buffer, or an element if ``element``) in a function body."""
    parents = {child: node for node in ast.walk(fdef) for child in ast.iter_child_nodes(node)}
    found = AccessFlag.NONE
    for stmt in fdef.body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Name) or node.id != name:
                continue
            if not isinstance(node.ctx, ast.Load):
                return AccessFlag.READ_WRITE  # the name is rebound: an alias we do not follow
            found |= _use(node, parents, scope, depth, element)
            if found == AccessFlag.READ_WRITE:
                return found
    return found


def ast_access(kernel: Callable[..., Any]) -> dict[str, AccessFlag]:
    params = buffer_params(kernel)
    fdef, scope = _parse(kernel)
    return {
        name: _uses(fdef, name, scope, 0) if kind == "ndarray" else texture_access(kind)
        for name, kind in params.items()
    }
