"""Placement: OCM's scheduler, choosing clusters for a Placement into PlacementDecisions."""
