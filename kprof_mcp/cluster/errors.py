"""The cluster's one exception, shared by every module of the package."""


class ClusterError(RuntimeError):
    """A cluster set-up or transport failure the caller can act on (the message says how)."""
