"""``python -m train.ppo --config ...``: the same training as ``bobshat train``, with its one-line errors.

``bobshat`` (the app's CLI) turns a refused setting or a missing file into
one line and exit status 2, and Ctrl-C into exit status 130; this entry does
the same here (it printed a traceback), without importing the app, which
sits on a higher floor than train.
"""

import sys

from bobshat_env.core.config import ConfigError
from train.ppo.run import main
from train.runtime.pool import caused_by_interrupt, sigint_after_compiles


def _main() -> int:
    try:
        with sigint_after_compiles():  # a Ctrl-C inside a numba compile is deferred past it
            return main()
    except Exception as err:
        if caused_by_interrupt(err):  # a Ctrl-C that a library turned into its own error (train/runtime/pool.py)
            print("\npython -m train.ppo: interrupted", file=sys.stderr)
            return 130
        if not isinstance(err, (ConfigError, ValueError, FileNotFoundError)):
            raise
        print(f"python -m train.ppo: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\npython -m train.ppo: interrupted", file=sys.stderr)
        return 130


sys.exit(_main())
