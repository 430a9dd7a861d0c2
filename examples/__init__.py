"""Runnable examples, each a script: ``python examples/NAME.py`` from a checkout, or
``autodiff demo NAME`` wherever autodiff is installed (it ships as ``autodiff.examples``)."""
