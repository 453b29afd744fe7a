"""Kubernetes API servers run inside this process: the embedded managed clusters that
``pyocm join`` and ``pyocm up`` start when no real cluster is given.

This layer joins the server and the client sides (it starts :mod:`pyocm.apiserver`
servers and talks to them through :mod:`pyocm.runtime` like any client); features below
it never see the server.
"""
