"""Deploying add-on agents through ManifestWorks and telling their health on the hub
(addon-framework's ``agentdeploy`` controller), for add-ons implemented in pyocm
(:class:`pyocm.addon.agent.AgentAddon`). Wire it with
:func:`pyocm.addon.deploy.manager.add_addon_deploy_controllers`."""
