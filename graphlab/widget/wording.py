"""Model errors said in the widget's terms, with the Python call kept as a secondary hint.

The model's messages speak Python (``pass x_2=...``, ``g.rebind(...)``, ``overwrite=True``): right
in a notebook cell, puzzling to someone clicking in the widget. The model keeps its messages; the
widget rewrites the few that name a Python call into what to do in the widget, with the call after it
(``... (in Python: ...)``), so a user who codes still sees it. :func:`ui_text` is the one place.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["missing_args", "ui_text"]

_MISSING = re.compile(
    r"run\(\) of graph '(?P<graph>[^']*)' is missing (?P<args>'[^;]*'); pass (?P<call>[^\n]*?)(?=$|\n)"
)
_REBIND = re.compile(r"bind it: (?P<call>g\.rebind\((?P<node>'[^']*'), (?P<param>'[^']*'), arg\))")
_REMOVE_ARG = re.compile(r"remove it with (?P<call>g\.remove_arg\('[^']*'\))")
_OVERWRITE = re.compile(  # the rest of the clause moves before the hint, so the hint trails
    r"pass overwrite=True(?: \(--overwrite on the command line\))? to replace(?P<it> it(?:, or choose another path)?)?"
)
_AGAINST = re.compile(
    r"(?:DebugError: )?(?P<call>compare\(against=(?P<against>'[^']*'|\"[^\"]*\")\)): give an arch name, one of "
    r"(?P<archs>[\w, ]+?), the folder of a module gl\.export wrote, or a capture \(gl\.open_capture, or its folder\)"
)


def _missing(match: re.Match[str]) -> str:
    args = match["args"]
    many = "," in args
    return (
        f"Debug needs {'values' if many else 'a value'} for {args} (graph '{match['graph']}'): give "
        f"{'them' if many else 'it'} in the Values panel (in Python: editor.debug({match['call']}))"
    )


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (_MISSING, _missing),
    (
        _REBIND,
        lambda m: f"bind it: pick an arg for {m['param']} in the Node tab of {m['node']} (in Python: {m['call']})",
    ),
    (_REMOVE_ARG, lambda m: f"delete it in the arg's editor (in Python: {m['call']})"),
    (
        _OVERWRITE,
        lambda m: f"tick \u201coverwrite the folder\u201d to replace{m['it'] or ''} (in Python: overwrite=True)",
    ),
    (
        _AGAINST,
        lambda m: (
            f"compare against {m['against']}: that is no arch ({m['archs']}) and no folder of an exported "
            f"module or a capture; pick an arch from the list, or type the folder Export wrote (in Python: "
            f"{m['call']})"
        ),
    ),
]


def ui_text(message: str) -> str:
    """``message`` with its Python calls said in the widget's terms (unchanged when none applies).

    >>> ui_text("run() of graph 'g' is missing 'x_2'; pass x_2=...")
    "Debug needs a value for 'x_2' (graph 'g'): give it in the Values panel (in Python: editor.debug(x_2=...))"
    >>> ui_text("no such node")
    'no such node'
    """
    for pattern, replace in _RULES:
        message = pattern.sub(replace, message)
    return message


def missing_args(message: str) -> list[str]:
    """The args a "missing values" message names, for the widget's "Give value..." button.

    >>> missing_args("run() of graph 'g' is missing 'x', 'y'; pass x=..., y=...")
    ['x', 'y']
    """
    match = _MISSING.search(message)
    return re.findall(r"'([^']*)'", match["args"]) if match else []
