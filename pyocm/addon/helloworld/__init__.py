"""The helloworld add-on, upstream addon-framework's example in Python: the test add-on
of pyocm's end-to-end tests and README.

Its agent (:mod:`.agent`) copies the ConfigMaps of its cluster's namespace on the hub
into its install namespace on the managed cluster, and renews its Lease there, with the
hub credential the add-on's registration issued it.
"""

#: The add-on's name (its ClusterManagementAddOn and ManagedClusterAddOns).
ADDON_NAME = "helloworld"
#: Upstream's default install namespace for this example.
INSTALL_NAMESPACE = "default"
