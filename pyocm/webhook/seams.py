"""The rules' seams over the hub's API: permission checks as SubjectAccessReviews (the
requester's user, uid, groups and extra, as upstream's webhooks send them) and the
objects the rules read."""

from __future__ import annotations

from pyocm.api import kinds as ocm
from pyocm.hooks.request import Obj, Seams, UserInfo
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api


def api_seams(api: Api) -> Seams:
    return Seams(authorizer=ReviewAuthorizer(api), lookup=ApiLookup(api))


class ReviewAuthorizer:
    def __init__(self, api: Api) -> None:
        self._api = api

    async def allowed(
        self,
        user: UserInfo,
        *,
        verb: str,
        group: str,
        resource: str,
        subresource: str = "",
        namespace: str = "",
        name: str = "",
    ) -> bool:
        review = await self._api.create(kinds.SUBJECT_ACCESS_REVIEW, review_of(
            user, verb=verb, group=group, resource=resource, subresource=subresource,
            namespace=namespace, name=name,
        ))  # fmt: skip
        return bool((review.get("status") or {}).get("allowed"))


def review_of(
    user: UserInfo,
    *,
    verb: str,
    group: str,
    resource: str,
    subresource: str,
    namespace: str,
    name: str,
) -> Obj:
    attributes = {"verb": verb, "group": group, "resource": resource}
    for key, value in (("subresource", subresource), ("namespace", namespace), ("name", name)):
        if value:
            attributes[key] = value
    spec: Obj = {"user": user.name, "groups": list(user.groups), "resourceAttributes": attributes}
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


class ApiLookup:
    def __init__(self, api: Api) -> None:
        self._api = api

    async def namespace(self, name: str) -> Obj | None:
        return await self._get(kinds.NAMESPACE, name)

    async def managed_cluster(self, name: str) -> Obj | None:
        return await self._get(ocm.MANAGED_CLUSTER, name)

    async def _get(self, kind: Kind, name: str) -> Obj | None:
        if not name:
            return None
        try:
            return await self._api.get(kind, name)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
