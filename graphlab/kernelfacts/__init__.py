"""What a kernel reads, writes and indexes: from its source (access_ast, access_order,
shape_facts, effects) and from Taichi's compiler (access).
"""
