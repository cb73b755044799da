"""The values panel: the run values the editor's Debug, Export and Compare use, given without code.

A graph's ``run()`` needs a value for every arg but the temps it allocates itself. In a notebook those
come from ``gl.editor(g, values={...})`` or ``editor.debug(x=...)``; the values panel lets a user who
writes no code give them too: a scalar typed in, an ndarray allocated at a shape (zeros, or uniform
random numbers from a seed, so a run can be repeated), or a notebook variable named in IPython's user
namespace; and a symbolic dim's size by name (``m=64``, as ``run(m=64)`` takes it) for a temp whose shape
no given value sizes. :class:`RunValues` holds them (the editor's one dict of values) with a line saying what each
one is, and :meth:`RunValues.view` lists what the graph needs, what is given and what is missing.

Every value is checked against its arg when it is given (kind, dtype, dims), so Debug never starts
on a value the panel accepted and Taichi would refuse; a refusal names the arg and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from IPython import get_ipython

from graphlab.core.errors import GraphlabError
from graphlab.core.names import a_or_an, check_dim_size
from graphlab.core.spec import NUMPY_DTYPES, Arg, is_float
from graphlab.model.graph import Graph
from graphlab.model.sizes import dim_names
from graphlab.widget.protocol import DimEntryView, ValueEntryView, ValueFill, ValuesView

__all__ = ["RunValues", "ValuesError"]

#: Elements of one array the panel allocates (4 GiB of f32): a typo in a shape must not fill the memory.
MAX_ELEMENTS = 1 << 30


class ValuesError(GraphlabError, ValueError):
    """The values panel was asked for a value that cannot be an arg's run value; names the arg and the fix."""


class RunValues:
    """The editor's run values by arg name (``None`` until some are given), and what each one is."""

    def __init__(self, values: Mapping[str, Any] | None) -> None:
        self._values: dict[str, Any] | None = dict(values) if values is not None else None
        self._summaries: dict[str, str] = {}
        self._renames: list[tuple[str, str]] = []  # (old, new) arg names, in the order they were renamed

    @property
    def values(self) -> dict[str, Any] | None:
        """The values by name (dims by name too, as ``m=64``), or None when none were ever given."""
        return self._values

    @values.setter
    def values(self, values: Mapping[str, Any] | None) -> None:
        """Replace them (``editor.debug(values)`` makes a session's values the editor's)."""
        old, self._values = self._values or {}, dict(values) if values is not None else None
        new = self._values or {}
        # a summary stays only with the very value it describes
        self._summaries = {k: v for k, v in self._summaries.items() if k in new and k in old and new[k] is old[k]}

    # --- giving values -----------------------------------------------------------------------------

    def give_scalar(self, graph: Graph, arg: str, value: float) -> None:
        """A scalar arg's value; an integer dtype takes only a whole number."""
        spec = _arg(graph, arg, "scalar", "type a number")
        if not is_float(spec.dtype or "f32"):
            if float(value) != int(value):
                raise ValuesError(f"arg {arg!r} is {spec.dtype}: give a whole number, not {value!r}")
            value = int(value)
        self._give(arg, value, f"{value!r}")

    def allocate(self, graph: Graph, arg: str, shape: Sequence[int], *, fill: ValueFill, seed: int = 0) -> None:
        """A new numpy array for an ndarray arg: ``shape`` its field dims, zeros or uniform in [0, 1)."""
        spec = _arg(graph, arg, "ndarray", "allocate ndarrays only")
        if len(shape) != spec.ndim:
            raise ValuesError(
                f"arg {arg!r} has {spec.ndim} dim(s) (ndim={spec.ndim}), but the shape given has {len(shape)}: "
                f"give {spec.ndim} size(s)"
            )
        if any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in shape):
            raise ValuesError(f"arg {arg!r}: every size of the shape must be an int >= 1, got {list(shape)}")
        declared = spec.shape or ()
        for axis, (want, got) in enumerate(zip(declared, shape, strict=False)):
            if isinstance(want, int) and want != got:
                raise ValuesError(f"arg {arg!r} declares size {want} for axis {axis}, got {got}: give {want} there")
        named = self._named_dims(graph)
        for axis, (want, got) in enumerate(zip(declared, shape, strict=False)):
            if isinstance(want, str) and want in named and named[want] != got:
                raise ValuesError(
                    f"arg {arg!r}: axis {axis} is dim {want!r}, given as {want}={named[want]} in this panel, but "
                    f"the shape has {got} there: allocate {named[want]}, or change {want} first"
                )
        full = (*shape, *spec.element_shape)
        count = int(np.prod(full, dtype=np.int64))
        if count > MAX_ELEMENTS:
            raise ValuesError(f"arg {arg!r}: shape {tuple(shape)} is {count:,} elements, over {MAX_ELEMENTS:,}")
        dtype = np.dtype(NUMPY_DTYPES[spec.dtype or "f32"])
        if fill == "zeros":
            array = np.zeros(full, dtype=dtype)
            how = "zeros"
        else:
            rng = np.random.default_rng(seed)
            array = rng.random(full).astype(dtype) if dtype.kind == "f" else rng.integers(0, 2, full).astype(dtype)
            how = f"random, seed {seed}"
        self._give(arg, array, f"{spec.dtype} ndarray {shape_words(shape)}, {how}")

    def from_variable(self, graph: Graph, arg: str, variable: str) -> None:
        """A notebook variable's value (IPython's user namespace), checked as ``run()`` would check it."""
        spec = _arg(graph, arg, None, "")
        shell = get_ipython()
        if shell is None:
            raise ValuesError(
                f"arg {arg!r}: notebook variables can be read only inside IPython or Jupyter; "
                f"give a value here instead, or in Python: editor.debug({arg}=...)"
            )
        namespace = shell.user_ns
        if variable not in namespace:
            raise ValuesError(
                f"arg {arg!r}: the notebook has no variable {variable!r}; define it in a cell first, "
                "or check the spelling"
            )
        value = namespace[variable]
        _check_value(graph, spec, value)
        self._give(arg, value, f"notebook variable {variable}")

    def give_dim(self, graph: Graph, dim: str, size: int | None) -> None:
        """A symbolic dim's size by name (``m=64``, as ``run(m=64)``): it sizes the temps no given value sizes.

        Checked as ``run()`` checks it: a dim of some used arg's shape, a valid size, and the size the given
        values' shapes set for it, if any. ``size`` None forgets it.
        """
        known = dim_names(_used(graph))
        if dim not in known:
            listed = ", ".join(map(repr, known)) or "none"
            raise ValuesError(
                f"{dim!r} is not a dim of any arg's shape in graph {graph.name!r} (its dims: {listed}); pick one "
                "of those, or declare an arg's shape with it"
            )
        if dim in graph.args:
            raise ValuesError(f"{dim!r} names an arg as well as a dim: give the arg {dim!r} a value instead")
        if size is None:
            self.clear_value(dim)
            return
        size = check_dim_size(size, f"dim {dim!r}", error=ValuesError)
        for name, axis, have in _axes_of_values(graph, self._values or {}):
            if axis == dim and have != size:
                raise ValuesError(
                    f"dim {dim!r} = {size}, but the value given for {name!r} has {dim!r} = {have}; give "
                    f"{dim}={have}, or give {name!r} a value of size {size} (or leave {dim!r} out: the values set it)"
                )
        self._give(dim, size, f"{dim} = {size}")

    def for_run(self, graph: Graph) -> dict[str, Any] | None:
        """The values a run of ``graph`` takes now: those of its args and dims. A deleted arg's value is kept
        (an undo brings the arg back) but not passed, or the run would refuse it as an unknown name."""
        if self._values is None:
            return None
        known = set(graph.args) | set(dim_names(graph.args.values()))
        return {name: value for name, value in self._values.items() if name in known}

    def follow_rename(self, graph: Graph, old: str, new: str) -> None:
        """An arg renamed from ``old`` to ``new`` keeps its value (and again after an undo or a redo)."""
        self._renames.append((old, new))
        self.follow(graph)

    def follow(self, graph: Graph) -> None:
        """Move each value of a renamed arg to the name the arg has now (the graph may have been undone)."""
        values = self._values
        if not values:
            return
        for old, new in reversed(self._renames):
            for was, now in ((old, new), (new, old)):
                if was in values and now not in values and was not in graph.args and now in graph.args:
                    values[now] = values.pop(was)
                    if was in self._summaries:
                        self._summaries[now] = self._summaries.pop(was)

    def clear_value(self, name: str) -> None:
        """Forget a value or a dim's size by name."""
        if self._values is not None:
            self._values.pop(name, None)
        self._summaries.pop(name, None)

    def clear(self, graph: Graph, arg: str) -> None:
        """Forget an arg's value."""
        _arg(graph, arg, None, "")
        self.clear_value(arg)

    def _give(self, arg: str, value: Any, summary: str) -> None:
        if self._values is None:
            self._values = {}
        self._values[arg] = value
        self._summaries[arg] = summary

    def _named_dims(self, graph: Graph) -> dict[str, int]:
        """The dims given by name (``m=64``): the values' names that are no arg's."""
        known = set(dim_names(_used(graph)))
        return {k: v for k, v in (self._values or {}).items() if k not in graph.args and k in known}

    # --- the view ----------------------------------------------------------------------------------

    def view(self, graph: Graph) -> ValuesView:
        """What the graph needs, what is given (and as what), what is missing."""
        given = self._values or {}
        entries = [self._entry(spec, given, used=bool(graph.uses_of(spec.name))) for spec in graph.args.values()]
        dims = self._dims(graph, [e["arg"] for e in entries if e["needed"] and not e["given"]])
        return {
            "entries": entries,
            "missing": [e["arg"] for e in entries if e["needed"] and not e["given"]],
            "dims": dims,
            "missing_dims": [d["dim"] for d in dims if d["needed"]],
            "in_notebook": get_ipython() is not None,
        }

    def _dims(self, graph: Graph, missing: list[str]) -> list[DimEntryView]:
        """Each symbolic dim of the used args: its size by name or from a given value, and whether a temp
        the run allocates still needs it (``model.sizes``' rule: a temp not given is sized by its dims) that
        no value still ``missing`` would size once given."""
        given = self._values or {}
        used = _used(graph)
        named = self._named_dims(graph)
        set_by: dict[str, tuple[str, int]] = {}
        for name, axis, have in _axes_of_values(graph, given):
            set_by.setdefault(axis, (name, have))
        views: list[DimEntryView] = []
        for dim in dim_names(used):
            sized = dim in named or dim in set_by or any(dim in (graph.args[a].shape or ()) for a in missing)
            temps = [a for a in used if _allocated_by_the_run(a) and a.name not in given and dim in (a.shape or ())]
            views.append(
                {
                    "dim": dim,
                    "size": named.get(dim, set_by[dim][1] if dim in set_by else None),
                    "given": dim in named,
                    "set_by": set_by[dim][0] if dim in set_by else None,
                    "args": [a.name for a in used if dim in (a.shape or ())],
                    "needed": bool(temps) and not sized,
                }
            )
        return views

    def _entry(self, spec: Arg, given: Mapping[str, Any], *, used: bool) -> ValueEntryView:
        has = spec.name in given
        summary = self._summaries.get(spec.name) or (_describe(given[spec.name]) if has else "")
        return {
            "arg": spec.name,
            "kind": spec.kind,
            "dtype": spec.dtype,
            "role": spec.role,
            "shape": list(spec.shape) if spec.shape is not None else None,
            "ndim": spec.ndim,
            "needed": used and not _allocated_by_the_run(spec),
            "given": has,
            "summary": summary,
        }


def _used(graph: Graph) -> list[Arg]:
    """The args some node binds: the ones ``run()`` takes (and whose dims it knows)."""
    return [spec for spec in graph.args.values() if graph.uses_of(spec.name)]


def _axes_of_values(graph: Graph, values: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """``(arg, dim, size)`` for every symbolic axis of the given ndarray values' declared shapes."""
    found = []
    for name, value in values.items():
        spec = graph.args.get(name)
        shape = getattr(value, "shape", None)
        if spec is None or spec.kind != "ndarray" or shape is None:
            continue
        for want, have in zip(spec.shape or (), tuple(shape)[: spec.ndim], strict=False):
            if isinstance(want, str):
                found.append((name, want, int(have)))
    return found


def _allocated_by_the_run(spec: Arg) -> bool:
    """A temp the run allocates itself (its shape declared, or one element): no value needed."""
    return spec.kind == "ndarray" and spec.role == "temp" and (spec.ndim == 0 or spec.shape is not None)


def _arg(graph: Graph, name: str, kind: str | None, fix: str) -> Arg:
    spec = graph.args.get(name)
    if spec is None:
        known = ", ".join(graph.args) or "none"
        raise ValuesError(f"graph {graph.name!r} has no arg {name!r} (its args: {known}); pick one from the list")
    if kind is not None and spec.kind != kind:
        raise ValuesError(f"arg {name!r} is {a_or_an(spec.kind)}, not {a_or_an(kind)}: {fix}")
    return spec


def _check_value(graph: Graph, spec: Arg, value: Any) -> None:
    """Refuse a value ``run()`` would refuse for this arg (run's own checks, on this one value)."""
    from graphlab.run.values import ValueChecker  # import cost: Taichi

    try:
        ValueChecker(graph.name, [spec]).prepare({spec.name: value})
    except GraphlabError as exc:
        raise ValuesError(f"arg {spec.name!r}: {exc}") from exc


def shape_words(shape: Any) -> str:
    """A shape as the panel's size fields take it: ``64``, ``64 x 3`` (not Python's ``(64,)``)."""
    return " x ".join(str(int(n)) for n in shape) or "one element"


_DTYPE_NAMES = {numpy_name: name for name, numpy_name in NUMPY_DTYPES.items()}


def _describe(value: Any) -> str:
    """A line about a value given in Python (``gl.editor(values=)``), in the canvas's words (``f32``, not
    ``VectorNdarray`` or ``float32``)."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None:
        name = _DTYPE_NAMES.get(str(dtype), str(dtype))
        element = tuple(getattr(value, "element_shape", ()) or ())
        each = f" of {'vectors' if len(element) == 1 else 'matrices'} of {shape_words(element)}" if element else ""
        return f"{name} ndarray {shape_words(shape)}{each}"
    return repr(value)[:40]
