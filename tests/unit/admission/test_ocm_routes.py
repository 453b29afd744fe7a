"""The in-process OCM plugins decide which writes they see without building the rules'
request (a hot path: every write asks every plugin); the answer must be the rules' own."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import cast

from pyocm.apiserver.admission.chain import Operation, Request
from pyocm.apiserver.admission.ocm import hook_request, routes
from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.hooks import webhooks

GROUPS = ("cluster.open-cluster-management.io", "work.open-cluster-management.io", "")
PLURALS = (
    "managedclusters", "managedclustersets", "managedclustersetbindings",
    "manifestworks", "manifestworkreplicasets", "configmaps",
)  # fmt: skip


def test_routes_agree_with_the_rules_for_every_write() -> None:
    user = UserInfo(name="someone", groups=("system:authenticated",))
    seen = 0
    for hook, group, plural, sub, operation in itertools.product(
        webhooks.ALL, GROUPS, PLURALS, ("", "status"), Operation
    ):
        resource = cast(ResourceInfo, SimpleNamespace(group=group, plural=plural, version="v1"))
        ctx = Context(user=user, namespace="", subresource=sub)
        obj = {"metadata": {"name": "x"}}
        request = Request(operation, resource, ctx, "", "x", obj, dict(obj))
        wanted = hook.handles(hook_request(request))
        assert routes(hook, request) == wanted, (hook.name, group, plural, sub, operation)
        seen += wanted
    assert seen  # some writes are routed, so the comparison means something
