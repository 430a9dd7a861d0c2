"""Codegen: graph to Python source (:mod:`.python`) and source to function (:mod:`.compile`)."""

from autodiff.codegen.compile import compile_generated
from autodiff.codegen.python import GeneratedSource, generate

__all__ = ["GeneratedSource", "compile_generated", "generate"]
