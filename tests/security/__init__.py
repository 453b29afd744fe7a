"""Security regression tests: attacks on the hub with real clients against real processes."""
