"""``python -m autodiff``: the command line (see :mod:`autodiff.cli`)."""

import sys

from autodiff.cli import main

sys.exit(main())
