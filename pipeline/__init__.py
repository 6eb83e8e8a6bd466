"""The rulings corpus pipeline: normalize -> extract -> load -> compile -> generate.

Each stage is one module with a plain input and output type; :mod:`pipeline.cli`
only wires them together.
"""

__version__ = "0.1.0"
