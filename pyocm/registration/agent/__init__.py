"""The klusterlet registration agent: joins a managed cluster to a hub and keeps it reported.

Its logic talks to the hub through the Kubernetes API and to the managed cluster through
the small :class:`~pyocm.registration.agent.managed.ManagedSide` protocol, so the fleet
simulator can run thousands of agents in one process over in-memory managed sides.
"""
