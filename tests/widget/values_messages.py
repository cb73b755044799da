"""The values panel's messages as the browser sends them, and its trait's rows, for the widget tests.

The Values tests (args and dims) and the export tests that give a value first all speak to the panel the same
way: a ``values`` message per op, Debug's ``start``, and a look at one row of the ``values`` trait.
"""


def values(widget, op, request=1, **fields):
    """Send the values panel's ``op`` (``scalar``, ``allocate``, ``dim``, ``clear`` ...); return the reply."""
    return widget.handle_message({"kind": "values", "op": op, "request": request, **fields})


def start(widget, request=9):
    """Press Debug's start; return the reply."""
    return widget.handle_message({"kind": "debug", "action": "start", "request": request})


def entry(widget, arg):
    """The ``values`` trait's row of an arg."""
    return next(e for e in widget.values["entries"] if e["arg"] == arg)


def dim(widget, name):
    """The ``values`` trait's row of a symbolic dim."""
    return next(d for d in widget.values["dims"] if d["dim"] == name)
