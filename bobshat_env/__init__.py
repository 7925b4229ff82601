"""bobshat: vectorized environments for Where's Bob's Hat? and Oh Hell.

``import bobshat_env`` stays light (NumPy only); the PettingZoo and Gymnasium
adapters are imported on use: ``from bobshat_env import bobs_hat_v0``.

Importing it sets ``OMP_WAIT_POLICY=PASSIVE`` where the user has not set it:
the OpenMP runtime reads it once, when it loads, and the engine's kernels
share torch's runtime; see :mod:`bobshat_env.core.compiled` (OpenMP waits).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch or numba load an OpenMP runtime

from .core.config import BobsHatConfig, ConfigError, OhHellConfig

__all__ = ["BobsHatConfig", "OhHellConfig", "ConfigError"]
__version__ = "0.1.0"
