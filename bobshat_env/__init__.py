"""bobshat: vectorized environments for Where's Bob's Hat? and Oh Hell.

``import bobshat_env`` stays light (NumPy only); the PettingZoo and Gymnasium
adapters are imported on use: ``from bobshat_env import bobs_hat_v0``.
"""

from .config import BobsHatConfig, ConfigError, OhHellConfig

__all__ = ["BobsHatConfig", "OhHellConfig", "ConfigError"]
__version__ = "0.1.0"
