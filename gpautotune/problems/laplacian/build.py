"""Moved to :mod:`gpautotune.problems.opencl.build` (shared by every OpenCL problem)."""

from gpautotune.problems.opencl.build import BuildCache, BuildFailure, BuiltProgram, build_key

__all__ = ["BuildCache", "BuildFailure", "BuiltProgram", "build_key"]
