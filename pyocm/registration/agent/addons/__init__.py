"""The registration agent's add-on side (upstream ``pkg/registration/spoke/addon``): a
client certificate and Secret for each registration of each ManagedClusterAddOn of the
cluster, and the add-ons' health from their Leases (registrar.py wires it together)."""
