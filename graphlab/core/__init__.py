"""What every layer may use: the error hierarchy, diagnostics, name and size limits, safe file
reading and writing, child-process hygiene, and the symbolic arg spec. Imports nothing above it.
"""
