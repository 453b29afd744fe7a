"""The klusterlet: the registration agent and the work agent of one managed cluster, run together."""
