"""The public graphlab.Graph (the model plus validate, compile, run, debug, render, save) and
what the documentation and examples build with it. Defined above every layer it calls.
"""
