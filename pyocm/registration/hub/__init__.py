"""The hub side of registration: controllers that act on ManagedClusters and their CSRs.

They use only the Kubernetes API (through :mod:`pyocm.runtime`), so they run inside
``pyocm hub`` or on their own against any API server (``pyocm controller``).
"""
