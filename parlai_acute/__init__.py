"""parlai_acute: evaluate open-domain dialogue models with people and automatic measures.

Importing the package installs the compatibility fixes in :mod:`parlai_acute.compat`
(needed before ``mephisto`` is imported on Python 3.11).
"""
from parlai_acute import compat as _compat

__version__ = "0.1.0"

_compat.install()
