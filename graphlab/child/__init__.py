"""Sending kernels to a child process: carrying their source (carry), the bundle the child rebuilds
them from (payload), and starting and watching the child (process).
"""
