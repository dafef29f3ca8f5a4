"""The optimized group coordinator: the production counterpart of `groupspec.spec`.

It imports nothing from `groupspec.spec` at run time; conformance tests hold it to the spec.
"""
