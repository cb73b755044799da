"""The one rule for sizing a run: which dims hold, and the shape of every temp nobody passed.

A graph's temps (``role="temp"``) are allocated by whoever runs it: ``g.run()`` and ``g.debug()``
in the notebook, ``load_module`` and the C host for an exported module, ``gl.verify`` on both of
its sides, ``compare`` against an arch or a module, and the CLI's ``export``/``verify``/``compare``
with ``--dim``. Each used to size them its own way, so a graph one of them ran another refused.
:func:`resolve_sizes` is the rule they all ask:

1. The values given set dims through their shapes (checked to agree by :func:`dims_problem` as
   each value is checked). A temp may be given too; its
   shape then counts like any other value's.
2. Dims given by name (``g.run(..., n=1024)``, ``gl.export(dims=...)``, ``--dim n=1024``) add the
   sizes no value sets, and must agree with the values where both say one.
3. Default dims (an exported module's ``manifest.json`` ``dims``) fill what is still open.
4. A temp nobody passed gets its declared shape with those dims. A 0-d temp holds one element, so
   its shape is ``()`` with or without ``shape=()``. A temp with no declared shape, or a dim nothing
   sizes, is refused before anything runs, naming the temp, the dim and how to give it.

Each caller raises the error of its own API (``GraphRunError``, ``VerifyError``, ``ExportError``...)
through the ``error`` factory, with its own way of giving a dim in the fix (``n=SIZE``,
``--dim n=SIZE``, ``dims={'n': SIZE}``).

>>> from graphlab.core.spec import Arg
>>> args = [Arg("x", "ndarray", "f32", 1, shape=("n",), role="input"),
...         Arg("grid", "ndarray", "f32", 2, shape=("G", "G"), role="temp"),
...         Arg("total", "ndarray", "f32", 0, role="temp")]
>>> sizes = resolve_sizes(args, {"n": 8}, dims={"G": 4}, error=lambda m, a: ValueError(m))
>>> sizes.dims, sizes.temps
({'n': 8, 'G': 4}, {'grid': (4, 4), 'total': ()})
>>> resolve_sizes(args, {"n": 8}, error=lambda m, a: ValueError(m))  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
ValueError: temp 'grid' has shape ('G', 'G'), but no value or dim sizes 'G'; pass G=SIZE, or pass grid itself
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from graphlab.core.errors import GraphlabError
from graphlab.core.names import check_dim_size, shown

__all__ = ["SizedArg", "Sizes", "dim_names", "dims_problem", "resolve_sizes"]

#: Builds the caller's error from a message and the arg it is about (None: no one arg).
ErrorFactory = Callable[[str, "str | None"], Exception]


class SizedArg(Protocol):
    """What sizing reads of an arg: a :class:`graphlab.core.spec.Arg`, of a graph or of manifest.json."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def ndim(self) -> int: ...
    @property
    def shape(self) -> tuple[int | str, ...] | None: ...


@dataclass(frozen=True)
class Sizes:
    """The dims of a run (every one known) and the field shape of each temp left to allocate."""

    dims: dict[str, int] = field(default_factory=dict)
    temps: dict[str, tuple[int, ...]] = field(default_factory=dict)


def dim_names(args: Iterable[SizedArg]) -> list[str]:
    """The symbolic dims the args' declared shapes name, in order of first use."""
    return list(dict.fromkeys(d for arg in args for d in arg.shape or () if isinstance(d, str)))


def resolve_sizes(
    args: Iterable[SizedArg],
    given_dims: Mapping[str, int],
    *,
    given: Collection[str] = (),
    dims: Mapping[str, object] | None = None,
    defaults: Mapping[str, int] | None = None,
    dim_fix: str = "pass {dim}=SIZE",
    error: ErrorFactory,
) -> Sizes:
    """Dims and temp shapes of one run by the rule of this module, or ``error(message, arg)`` raised.

    Parameters
    ----------
    args
        The args of the graph (or of a module's graph) being run.
    given_dims
        Dims the given values' shapes set (already checked to agree with one another).
    given
        Names of the args given a value: those temps are not allocated.
    dims
        Dims given by name; each must be a dim of some arg, a size, and agree with ``given_dims``.
    defaults
        Sizes for dims nothing else sets (an exported module's ``manifest.json`` ``dims``).
    dim_fix
        How this caller's user gives a dim, with ``{dim}`` for its name (``--dim {dim}=SIZE``).
    error
        Makes the caller's exception from a message and the arg it names.
    """
    args = list(args)
    known = dim_names(args)
    resolved = dict(given_dims)
    for name, value in (dims or {}).items():
        if name not in known:
            listed = ", ".join(map(repr, known)) or "none"
            raise error(f"{shown(name)} is not a dim of any arg's shape (the dims: {listed})", None)
        try:
            size = check_dim_size(value, f"dim {name!r}", error=GraphlabError)
        except GraphlabError as exc:
            raise error(str(exc), None) from None
        if resolved.setdefault(name, size) != size:
            owner = _setter(args, name, given)
            raise error(
                f"dim {name!r} is given as {size}, but the value of {owner!r} has {name!r} = {resolved[name]}; "
                f"give one size (or leave {name!r} out: the values set it)",
                owner,
            )
    for name, size in (defaults or {}).items():
        resolved.setdefault(name, size)
    temps: dict[str, tuple[int, ...]] = {}
    for arg in args:
        if arg.kind != "ndarray" or arg.role != "temp" or arg.name in given:
            continue
        if arg.ndim == 0:  # one element, declared shape=() or not
            temps[arg.name] = ()
            continue
        if arg.shape is None:
            axes = ", ".join(["'n'"] * arg.ndim)
            raise error(
                f"temp {arg.name!r} declares no shape, so nothing can allocate it; declare its shape with dims "
                f"(shape=({axes},)) or pass {arg.name} itself",
                arg.name,
            )
        missing = [d for d in arg.shape if isinstance(d, str) and d not in resolved]
        if missing:
            fix = dim_fix.format(dim=missing[0])
            raise error(
                f"temp {arg.name!r} has shape {arg.shape}, but no value or dim sizes {missing[0]!r}; "
                f"{fix}, or pass {arg.name} itself",
                arg.name,
            )
        temps[arg.name] = tuple(d if isinstance(d, int) else resolved[d] for d in arg.shape)
    return Sizes(resolved, temps)


def dims_problem(arg: SizedArg, shape: tuple[int, ...], dims: dict[str, int], owners: dict[str, str]) -> str | None:
    """Why ``shape`` (the field dims of ``arg``'s value) disagrees with the arg's declared shape, or None.

    Symbolic dims are bound in ``dims`` (dim name -> size) and ``owners`` (dim name -> the arg that
    set it) as they are first seen, so that later args sharing a dim are checked against them.
    """
    for axis, (want, have) in enumerate(zip(arg.shape or (), shape)):
        if isinstance(want, int):
            if want != have:
                return f"shape[{axis}] is {have}, but the arg's declared shape {arg.shape} fixes it at {want}"
            continue
        bound = dims.setdefault(want, have)
        owner = owners.setdefault(want, arg.name)
        if bound != have and owner == arg.name:  # two axes of this one array share the dim
            first = (arg.shape or ()).index(want)
            return (
                f"has shape {shape}, but its axes {first} and {axis} share dim {want!r}, so they must be "
                f"equal (they are {bound} and {have})"
            )
        if bound != have:
            return (
                f"has shape {shape}, so dim {want!r} = {have}, but arg {owner!r} set {want!r} = {bound}; "
                "arrays sharing a dim must agree (Taichi would index out of bounds)"
            )
    return None


def _setter(args: list[SizedArg], dim: str, given: Collection[str]) -> str | None:
    """The first given arg whose shape names ``dim`` (who set it)."""
    return next((a.name for a in args if a.name in given and dim in (a.shape or ())), None)
