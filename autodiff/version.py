"""The version of autodiff."""

__version__ = "0.1.0"
