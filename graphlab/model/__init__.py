"""The graph as plain data: nodes, ids, kernels' signatures, the control plan, unrolling, the
model's Graph with its editing API, sizes, and the graph file. Knows no algorithm over it.
"""
