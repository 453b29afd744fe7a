"""The work agent: applies a cluster's ManifestWorks to it and reports back."""
