"""The fleet simulator: many managed clusters in one process, each a real agent.

Every simulated cluster runs the registration agent itself (its own key, CSR, client
certificate and mutual-TLS connection to the hub) over :class:`MemoryCluster`, an
in-memory stand-in for the cluster's own API. Only what the agent reads from a managed
cluster is simulated; everything between agent and hub is the real thing.
"""
