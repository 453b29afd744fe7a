"""ManifestWork: the work agent (spoke side) and the hub side of OCM's work API."""
