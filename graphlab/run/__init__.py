"""A graph on the Taichi runtime: the compiled graph, run values checked at the border,
guarded-loop rollback and the bounds-checked run.
"""
