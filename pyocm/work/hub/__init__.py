"""The hub side of ManifestWork: controllers the hub runs for works."""
