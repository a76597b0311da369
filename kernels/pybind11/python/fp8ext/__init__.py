"""Python side of the fp8ext oracle extensions.

Importing this package does not import the extension modules or ``fp8ext.float8_tensor``: the
extensions import ``fp8ext.float8_tensor`` themselves, lazily, from ``init_extension()``, the way
TransformerEngine's ``transformer_engine_torch`` imports
``transformer_engine.pytorch.tensor.float8_tensor``.
"""
