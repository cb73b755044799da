"""The step debugger: device-side statistics, watch expressions, snapshots and pictures.

The lead fills in the public re-exports; the building blocks live in ``stats``, ``expr``,
``snapshots`` and ``pictures``.
"""
