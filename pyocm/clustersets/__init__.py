"""ManagedClusterSets and their bindings: membership, status, and the default sets."""
