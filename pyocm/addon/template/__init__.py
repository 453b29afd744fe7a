"""Add-on templates (seed 003): add-ons defined by an AddOnTemplate, run by the hub's add-on manager."""
