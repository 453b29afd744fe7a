"""Add-ons: the hub's add-on manager (install strategies, configuration, registration,
health) and the interface an add-on implements (:mod:`pyocm.addon.agent`)."""
