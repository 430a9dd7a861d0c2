"""``python -m autodiff``: the command line (see :mod:`autodiff.tools.cli`)."""

import sys

from autodiff.tools.cli import main

sys.exit(main())
