"""The ManifestWorks that deploy an add-on's agent to a cluster (addon-framework's
``agentdeploy`` work builder, default install mode).

The deploy works are ``addon-<addon>-deploy-<i>`` in the cluster namespace, labelled
with the add-on's name and owned (controller reference) by the ManagedClusterAddOn, so
deleting the add-on deletes them. Each carries the add-on's configs' spec hashes as the
``open-cluster-management.io/config-spec-hash`` annotation (the work agent tells a config
change from it), the manifest configs the health prober and the add-on ask for, and a
``SelectivelyOrphan`` delete option for objects annotated to be left behind.

Jobs and Pods annotated (or labelled) as pre-delete hooks are not deployed with the
agent: they go, with WellKnownStatus feedback, into the work ``addon-<addon>-pre-delete``
applied only when the add-on is being deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from pyocm.addon.deploy import workbuilder
from pyocm.addon.hub.spechash import go_json
from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.meta_v1 import ObjectMeta, OwnerReference
from pyocm.api.models.work_v1 import (
    ManifestWork,
    ManifestWorkSpecDeleteOption,
    ManifestWorkSpecDeleteOptionSelectivelyOrphansOrphaningRule,
    ManifestWorkSpecManifestConfig,
)

Obj = dict[str, Any]
#: The manifests limit upstream's deploy controller sets (500 KiB; works are filled to 80%).
MANIFESTS_LIMIT = 500 * 1024
#: The kinds a pre-delete hook may be, and their resources.
_HOOK_RESOURCES = {"Job": "jobs", "Pod": "pods"}


def deploy_work_prefix(addon: str) -> str:
    """``DeployWorkNamePrefix``."""
    return f"addon-{addon}-deploy"


def pre_delete_work_name(addon: str) -> str:
    """``PreDeleteHookWorkName``."""
    return f"addon-{addon}-pre-delete"


def owner_reference(mca: ManagedClusterAddOn) -> OwnerReference:
    """``metav1.NewControllerRef`` to the add-on, as ``v1beta1``."""
    meta = mca["metadata"]
    return {
        "apiVersion": ocm.MANAGED_CLUSTER_ADDON.api_version,
        "kind": ocm.MANAGED_CLUSTER_ADDON.kind,
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def config_spec_hashes(mca: ManagedClusterAddOn) -> dict[str, str] | None:
    """``configsToAnnotations``: the annotation naming each desired config's spec hash
    (``<resource>.<group>/<namespace>/<name>``), or None when the add-on has no config
    references (an add-on whose references name no desired config gets ``{}``)."""
    references = mca.get("status", {}).get("configReferences") or []
    if not references:
        return None
    hashes: dict[str, str] = {}
    for reference in references:
        desired = reference.get("desiredConfig")
        if desired is None:
            continue
        resource = reference["resource"]
        if reference.get("group"):
            resource += f".{reference['group']}"
        where = f"{resource}/{desired.get('namespace', '')}/{desired['name']}"
        hashes[where] = desired.get("specHash", "")
    return {wellknown.CONFIG_SPEC_HASH_ANNOTATION: go_json(hashes)}


def guess_resource(kind: str) -> str:
    """``meta.UnsafeGuessKindToResource``: the lowercase plural of a kind."""
    singular = kind.lower()
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _group(obj: Mapping[str, Any]) -> str:
    group, _, _version = str(obj.get("apiVersion", "")).rpartition("/")
    return group


def hook_config(obj: Mapping[str, Any]) -> ManifestWorkSpecManifestConfig | None:
    """``isPreDeleteHookObject``: for a Job or Pod annotated or labelled
    ``addon-pre-delete``, the manifest config asking for its WellKnownStatus."""
    resource = _HOOK_RESOURCES.get(str(obj.get("kind", "")))
    if resource is None:
        return None
    meta = _meta(obj)
    key = wellknown.ADDON_PRE_DELETE_ANNOTATION
    if key not in (meta.get("labels") or {}) and key not in (meta.get("annotations") or {}):
        return None
    return {
        "resourceIdentifier": {
            "group": _group(obj),
            "resource": resource,
            "name": str(meta.get("name", "")),
            "namespace": str(meta.get("namespace", "")),
        },
        "feedbackRules": [{"type": "WellKnownStatus"}],
    }


def orphaning_rule(
    obj: Mapping[str, Any],
) -> ManifestWorkSpecDeleteOptionSelectivelyOrphansOrphaningRule | None:
    """``getDeletionOrphaningRule``: objects annotated ``deletion-orphan`` stay on the
    cluster when the work is deleted."""
    meta = _meta(obj)
    if wellknown.ADDON_DELETION_ORPHAN_ANNOTATION not in (meta.get("annotations") or {}):
        return None
    return {
        "group": _group(obj),
        "resource": guess_resource(str(obj.get("kind", ""))),
        "name": str(meta.get("name", "")),
        "namespace": str(meta.get("namespace", "")),
    }


def _work_meta(mca: ManagedClusterAddOn, name: str) -> ObjectMeta:
    meta = mca["metadata"]
    return {
        "name": name,
        "namespace": meta.get("namespace", ""),
        "labels": {wellknown.ADDON_NAME_LABEL: meta["name"]},
        "ownerReferences": [owner_reference(mca)],
    }


def with_server_defaults(work: ManifestWork) -> ManifestWork:
    """``work`` with the defaults the ManifestWork CRD gives its spec filled in, so it
    compares equal to the stored work it would become and an unchanged work is never
    written again (upstream's applier gets there with a cache of what it wrote)."""
    spec = work.get("spec", {})
    if "deleteOption" in spec:
        spec["deleteOption"].setdefault("propagationPolicy", "Foreground")
    for config in spec.get("manifestConfigs") or []:
        config.setdefault("feedbackScrapeType", "Poll")
        strategy = config.get("updateStrategy")
        if strategy is None:
            continue
        strategy.setdefault("type", "Update")
        server_side = strategy.get("serverSideApply")
        if server_side is not None:
            server_side.setdefault("fieldManager", "work-agent")
            for ignored in server_side.get("ignoreFields") or []:
                ignored.setdefault("condition", "OnSpokePresent")
    return work


def build_deploy_works(
    mca: ManagedClusterAddOn,
    objects: Sequence[Obj],
    *,
    manifest_configs: Sequence[ManifestWorkSpecManifestConfig],
    existing: Sequence[ManifestWork],
    manifests_limit: int = MANIFESTS_LIMIT,
) -> workbuilder.Built | None:
    """``BuildDeployWorks``: the deploy works for ``objects`` (hooks left out), or None
    when there is nothing to deploy (then, as upstream, existing works are left as they
    are). Raises :class:`~pyocm.addon.deploy.workbuilder.BuildError`."""
    deployed = [obj for obj in objects if hook_config(obj) is None]
    if not deployed:
        return None
    rules = [rule for rule in map(orphaning_rule, deployed) if rule is not None]
    delete_option: ManifestWorkSpecDeleteOption | None = None
    if rules:
        delete_option = {
            "propagationPolicy": "SelectivelyOrphan",
            "selectivelyOrphans": {"orphaningRules": rules},
        }
    prefix = deploy_work_prefix(mca["metadata"]["name"])
    options = workbuilder.Options(
        manifest_configs=manifest_configs,
        delete_option=delete_option,
        annotations=config_spec_hashes(mca),
    )
    return workbuilder.build(
        deployed,
        lambda index: _work_meta(mca, f"{prefix}-{index}"),
        existing=sorted(existing, key=lambda work: work["metadata"]["name"]),
        options=options,
        limit=workbuilder.limit_of(manifests_limit),
    )


def build_hook_work(mca: ManagedClusterAddOn, objects: Sequence[Obj]) -> ManifestWork | None:
    """``BuildHookWork``: the pre-delete work, or None when the add-on has no hooks."""
    hooks = [(obj, config) for obj in objects if (config := hook_config(obj)) is not None]
    if not hooks:
        return None
    return {
        "apiVersion": ocm.MANIFEST_WORK.api_version,
        "kind": ocm.MANIFEST_WORK.kind,
        "metadata": _work_meta(mca, pre_delete_work_name(mca["metadata"]["name"])),
        "spec": {
            "workload": {"manifests": [copy.deepcopy(obj) for obj, _ in hooks]},
            "manifestConfigs": [config for _, config in hooks],
        },
    }
