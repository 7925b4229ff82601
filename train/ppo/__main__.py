"""``python -m train.ppo --config ...``: the same as ``bobshat train``."""

import sys

from train.ppo.run import main

sys.exit(main())
