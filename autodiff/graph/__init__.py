"""The static computational graph shared by every stage."""

from autodiff.graph.ir import Const, Graph, Location, Node, SliceSpec, Value

__all__ = ["Const", "Graph", "Location", "Node", "SliceSpec", "Value"]
