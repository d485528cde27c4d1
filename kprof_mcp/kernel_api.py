"""Former home of the kernel contract, kept so packages written against it still load.
New code imports :mod:`kprof_mcp.kernel`."""

from .kernel.api import *  # noqa: F401,F403
from .kernel.api import NAME_RE, ParamError  # noqa: F401
