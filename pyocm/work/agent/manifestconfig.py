"""Which ``spec.manifestConfigs`` entry configures a manifest, and in which order the
manifests are applied.

Matching is upstream's ``FindManifestConfiguration``: an entry matches when its
``resourceIdentifier`` has the manifest's group and resource exactly, and its name and
namespace match as wildcards (``*`` is any run of characters). The first matching
entry with condition rules gives those, the first with feedback rules gives those, the
first with an update strategy gives that; the feedback scrape type is the last
matching entry's. No rules and no strategy means no configuration (None).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfig

ManifestConfig = ManifestWorkSpecManifestConfig

#: Upstream's ``resourceApplyOrder``: manifests are applied by these ranks, lowest
#: first (CRDs and Namespaces before what lives in them, RBAC and config before
#: workloads, webhooks last); kinds not listed rank 1000, keeping their spec order.
APPLY_RANK: Mapping[str, int] = {
    **dict.fromkeys(
        (
            "PriorityClass",
            "Namespace",
            "CustomResourceDefinition",
            "StorageClass",
            "PersistentVolume",
            "PodSecurityPolicy",
        ),
        0,
    ),
    **dict.fromkeys(("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), 1),
    **dict.fromkeys(
        ("NetworkPolicy", "ResourceQuota", "LimitRange", "PodDisruptionBudget", "ServiceAccount"),
        2,
    ),
    **dict.fromkeys(("Secret", "ConfigMap", "PersistentVolumeClaim"), 3),
    "Service": 4,
    **dict.fromkeys(
        (
            "DaemonSet",
            "Pod",
            "ReplicationController",
            "ReplicaSet",
            "Deployment",
            "HorizontalPodAutoscaler",
            "StatefulSet",
            "Job",
            "CronJob",
        ),
        5,
    ),
    **dict.fromkeys(
        (
            "APIService",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        ),
        6,
    ),
}
UNLISTED_RANK = 1000
#: A manifest that is not an object at all goes last.
UNREADABLE_RANK = 1001


def apply_order(manifests: Sequence[Any]) -> list[int]:
    """The indexes of ``manifests`` in the order to apply them (a stable sort by rank)."""
    return sorted(range(len(manifests)), key=lambda index: _rank(manifests[index]))


def _rank(manifest: Any) -> int:
    if not isinstance(manifest, dict):
        return UNREADABLE_RANK
    return APPLY_RANK.get(str(manifest.get("kind") or ""), UNLISTED_RANK)


def find_manifest_config(
    *, group: str, resource: str, namespace: str, name: str, configs: Sequence[ManifestConfig]
) -> ManifestConfig | None:
    """The configuration of one resource merged from ``configs`` (see the module)."""
    found: ManifestConfig = {
        "resourceIdentifier": {
            "group": group,
            "resource": resource,
            "name": name,
            "namespace": namespace,
        }
    }
    for config in configs:
        ident = config["resourceIdentifier"]
        if not (
            ident.get("group", "") == group
            and ident.get("resource", "") == resource
            and wildcard_match(namespace, ident.get("namespace", ""))
            and wildcard_match(name, ident.get("name", ""))
        ):
            continue
        if not found.get("conditionRules") and config.get("conditionRules"):
            found["conditionRules"] = config["conditionRules"]
        if not found.get("feedbackRules") and config.get("feedbackRules"):
            found["feedbackRules"] = config["feedbackRules"]
        if "updateStrategy" not in found and config.get("updateStrategy") is not None:
            found["updateStrategy"] = config["updateStrategy"]
        if config.get("feedbackScrapeType"):
            found["feedbackScrapeType"] = config["feedbackScrapeType"]
        else:
            found.pop("feedbackScrapeType", None)
    if not (found.get("feedbackRules") or found.get("conditionRules") or "updateStrategy" in found):
        return None
    return found


def wildcard_match(value: str, pattern: str) -> bool:
    """Upstream's ``wildcardMatch``: equal, ``*``, or ``pattern`` with ``*`` as ``.*``."""
    if value == pattern or pattern == "*":
        return True
    return _compiled(pattern).fullmatch(value) is not None


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))
