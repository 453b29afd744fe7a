"""Cluster registration: the hub controllers and the klusterlet agent (double opt-in join)."""
