"""``python -m bobshat_env.app ARGS`` runs the ``bobshat`` command line (as ``python -m bobshat_env.app.cli``)."""

import sys

from .cli import main

sys.exit(main())
