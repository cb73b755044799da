"""The table of diagnostic codes: one line per rule, used by docs, the CLI and tests."""

from __future__ import annotations

RULES: dict[str, str] = {
    "GL001": "a kernel parameter is left unbound",
    "GL002": "a binding's kind does not fit the parameter (ndarray, scalar, matrix, texture)",
    "GL003": "a binding's dtype, ndim or element shape does not fit the parameter",
    "GL004": "one arg name is declared twice with different specs",
    "GL005": "a kernel has template or struct parameters (cannot go into a ti.graph)",
    "GL006": "a kernel returns a value (the value is lost in a graph)",
    "GL007": "an arg that no dispatch uses",
    "GL008": "an input arg is written by a dispatch",
    "GL009": "a temp is (or may be) read before anything writes it (uninitialised; a warning where not certain)",
    "GL010": "a temp is written and nothing reads it afterwards (dead write)",
    "GL011": "an output arg that nothing writes",
    "GL012": "one buffer bound to two parameters of one kernel, one of them written (aliasing)",
    "GL013": "an empty graph or sequence",
    "GL014": "a repeat count below 1",
    "GL015": "a sequence that contains itself",
    "GL016": "a name that cannot survive export (not a C identifier, or a reserved word)",
    "GL017": "two names that become the same after export's mangling",
    "GL018": "an arg the target cannot take",
    "GL019": "a while_ loop whose check_every is larger than max_iter (its flag is read only at the end)",
    "GL020": "a flag that is not a one-element i32 ndarray, or a loop count that is not an integer scalar",
    "GL021": "a conditional whose flag no dispatch writes before the decision",
    "GL022": "a while_ loop without max_iter (refused when the loop is made)",
    "GL023": "a while_ loop whose body never writes its flag",
    "GL024": "a graph too large once unrolled: over 10,000,000 dispatches to compile, or too many to check",
    "GL025": "a declared shape smaller than a kernel's loop needs (error), or declared apart from it (info)",
    "GL026": "a guarded loop whose body writes a texture (it could not be copied aside to go back to)",
    "GL027": "a kernel draws random numbers (ti.random): runs, replays and comparisons do not repeat",
    "GL028": "a parallel loop writes a buffer at one index and reads it at another (a race on a GPU)",
    "GL029": "ndarray accesses the kernels' source cannot prove in bounds (info: run once with bounds='check')",
}


def rule_table() -> str:
    """The codes and what they mean, one per line."""
    return "\n".join(f"{code}  {text}" for code, text in RULES.items())
