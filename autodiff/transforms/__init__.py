"""Transforms from graph to graph: activity analysis, reverse mode, optimisation."""

from autodiff.transforms.activity import active_values
from autodiff.transforms.optimize import optimize
from autodiff.transforms.reverse import reverse_mode

__all__ = ["active_values", "optimize", "reverse_mode"]
