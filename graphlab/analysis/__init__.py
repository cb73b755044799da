"""Questions answered over a graph without running it: data flow, the check rules, memory,
rendering, code generation, guarded loops, run-to-run variance.
"""
