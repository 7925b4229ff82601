"""``python -m bobshat ARGS`` runs the ``bobshat`` command line (as ``python -m bobshat.cli``)."""

import sys

from .cli import main

sys.exit(main())
