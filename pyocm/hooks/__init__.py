"""OCM's admission and conversion rules as plain functions, for any server to apply.

Upstream serves these as webhooks beside kube-apiserver (``pkg/registration/webhook``,
``pkg/work/webhook``, ``pkg/addon/webhook``). pyocm's API server applies them in its
admission chain (:mod:`pyocm.apiserver.admission.ocm`) and converts the add-on kinds with
:mod:`.conversion`; ``pyocm webhook`` (:mod:`pyocm.webhook`) serves the same rules to a
real kube-apiserver. The rules stand only on the pure foundations and reach the world
through two seams (:mod:`.request`): an authorizer and a lookup.
"""
