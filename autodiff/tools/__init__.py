"""Tools built on the public transforms: gradient checking, the SymPy route, the
side-by-side comparison and its figures, and the command line."""
