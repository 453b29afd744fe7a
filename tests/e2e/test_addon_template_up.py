"""Seed 003's add-on template on ``pyocm up`` as a person uses it (issue 22): the seed's
own YAML applied with kubectl, the hub rendering and deploying the agent through a
ManifestWork to two embedded clusters, registering it (a KubeClient certificate with its
hub permissions, a CustomSigner certificate signed with the seed's CA Secret), telling
its health from the Deployment's availability, upgrading it to the v2 template through a
placement, removing it from one cluster, and saying so when a template is missing.

The embedded clusters run no container: the agent's Deployment is applied for real, its
status (and so the add-on's Available) is simulated, as pyocm up says.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID

from pyocm.addon.hub.spechash import spec_hash
from pyocm.pki.ca import CertificateAuthority
from tests.cli import pyocm, running_up
from tests.e2e.test_work_up import get_json, kubectl, until
from tests.reference import shared

INSTALL_NS = "open-cluster-management-agent-addon"
EXAMPLES = ("seeds", "addon-template-examples")
ADDON = "hello-template"
CLUSTERS = ("cluster1", "cluster2", "cluster3")


@dataclass
class Up:
    hub: Path
    clusters: dict[str, Path]

    def apply(self, *parts: str) -> None:
        done = kubectl(self.hub, "apply", "-f", str(shared(*EXAMPLES, *parts)))
        assert done.returncode == 0, done.stderr

    def apply_text(self, text: str) -> None:
        done = kubectl(self.hub, "apply", "-f", "-", stdin=text)
        assert done.returncode == 0, done.stderr

    def mca(self, cluster: str, name: str = ADDON) -> dict[str, Any] | None:
        return get_json(
            self.hub, "managedclusteraddon.addon.open-cluster-management.io", name, "-n", cluster
        )

    def condition(self, cluster: str, type: str, name: str = ADDON) -> tuple[str, str, str] | None:
        found = {
            c["type"]: c
            for c in ((self.mca(cluster, name) or {}).get("status") or {}).get("conditions", [])
        }
        state = found.get(type)
        return None if state is None else (state["status"], state["reason"], state["message"])


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    with running_up(tmp_path, clusters=len(CLUSTERS)) as fleet:
        yield Up(fleet.hub, fleet.clusters)


def ca_secret(ca: CertificateAuthority) -> str:
    """The seed's signer-ca.yaml with a real CA in it."""
    secret = yaml.safe_load(shared(*EXAMPLES, "signer-ca.yaml").read_text())
    secret["data"] = {
        "tls.crt": base64.b64encode(ca.cert_pem).decode(),
        "tls.key": base64.b64encode(ca.key_pem).decode(),
    }
    return json.dumps(secret)


def assert_holds(found: Any, wanted: Any, path: str = "") -> None:
    """Every field of ``wanted`` is in ``found`` with the same value (lists item by item,
    of the same length); ``found`` may have more fields (the API server's defaults)."""
    if isinstance(wanted, dict):
        assert isinstance(found, dict), f"{path}: {found!r}"
        for key, value in wanted.items():
            assert key in found, f"{path}.{key} missing"
            assert_holds(found[key], value, f"{path}.{key}")
    elif isinstance(wanted, list):
        assert isinstance(found, list) and len(found) == len(wanted), f"{path}: {found!r}"
        for index, (mine, theirs) in enumerate(zip(found, wanted, strict=True)):
            assert_holds(mine, theirs, f"{path}[{index}]")
    else:
        assert found == wanted, f"{path}: {found!r} != {wanted!r}"


def deployment_of(work: dict[str, Any]) -> dict[str, Any]:
    manifests = work["spec"]["workload"]["manifests"]
    [found] = [m for m in manifests if m["kind"] == "Deployment"]
    return found


def deployed_registered_and_healthy(up: Up) -> None:
    for namespace in ("open-cluster-management", "open-cluster-management-hub"):
        kubectl(up.hub, "create", "namespace", namespace)
    ca = CertificateAuthority.create("hello-template-signer", valid_for=timedelta(days=1))
    up.apply_text(ca_secret(ca))
    # The signca files grant upstream's add-on manager the CA Secret: without them the
    # hub does not sign (as upstream's manager could not read it).
    for name in ("roles.yaml", "signca-secret-role.yaml", "signca-secret-rolebinding.yaml",
                 "addon-template.yaml", "cluster-management-addon.yaml",
                 "addon-deployment-config.yaml", "managed-cluster-addon.yaml"):  # fmt: skip
        up.apply(name)
    done = pyocm(
        "addon", "enable", "--names", ADDON, "--clusters", "cluster2,cluster3",
        "--kubeconfig", str(up.hub),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    # The configs resolve with upstream's spec hashes.
    template = get_json(up.hub, "addontemplate", ADDON)
    adc = get_json(up.hub, "addondeploymentconfig", ADDON, "-n", "cluster1")
    assert template is not None and adc is not None

    def configured() -> bool:
        refs = {
            r["resource"]: r["desiredConfig"]
            for r in (up.mca("cluster1") or {}).get("status", {}).get("configReferences", [])
        }
        return refs.get("addontemplates", {}).get("specHash") == spec_hash(template) and refs.get(
            "addondeploymentconfigs", {}
        ).get("specHash") == spec_hash(adc)

    until(configured)

    # Deployed: the rendered Deployment in the add-on's work and on every cluster, as
    # the seed's agent-deployment-output.yaml shows it, with the cluster's own name.
    expected = shared(*EXAMPLES, "agent-deployment-output.yaml").read_text()
    for cluster in CLUSTERS:
        work = until(
            lambda c=cluster: get_json(up.hub, "manifestwork", f"addon-{ADDON}-deploy-0", "-n", c)
        )
        deployment = deployment_of(work)
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert f"--cluster-name={cluster}" in container["args"] and "--v=4" in container["args"]
        assert {"name": "CLUSTER_NAME", "value": cluster} in container["env"]
        applied = until(
            lambda c=cluster: get_json(
                up.clusters[c], "deployment", f"{ADDON}-agent", "-n", INSTALL_NS
            )
        )
        assert applied["spec"]["template"]["spec"]["containers"][0]["args"] == container["args"]
        wanted = yaml.safe_load(expected.replace("cluster1", cluster))
        assert_holds(applied, wanted)

    # Registered: both certificates issued, the custom one by the seed's CA.
    def secret(name: str) -> dict[str, Any] | None:
        return get_json(up.clusters["cluster1"], "secret", name, "-n", INSTALL_NS)

    kubeconfig = until(lambda: secret(f"{ADDON}-hub-kubeconfig"))
    assert b"kind: Config" in base64.b64decode(kubeconfig["data"]["kubeconfig"])
    custom = until(lambda: secret(f"{ADDON}-example.com-signer-name-client-cert"))
    issued = x509.load_pem_x509_certificate(base64.b64decode(custom["data"]["tls.crt"]))
    assert issued.issuer == ca.certificate.subject

    def names(oid: x509.ObjectIdentifier) -> set[str]:
        return {str(a.value) for a in issued.subject.get_attributes_for_oid(oid)}

    assert names(NameOID.COMMON_NAME) == {"user1"}
    assert names(NameOID.ORGANIZATION_NAME) == {"g1", "g2"}
    assert names(NameOID.ORGANIZATIONAL_UNIT_NAME) == {"o1", "o2"}

    # Its hub permissions: the ClusterRole in the cluster's namespace, the Role in its own.
    current = until(
        lambda: get_json(
            up.hub,
            "rolebinding",
            f"open-cluster-management:{ADDON}:clusterrole:agent",
            "-n",
            "cluster1",
        )
    )
    assert current["roleRef"]["name"] == "cm-admin"
    assert current["metadata"]["ownerReferences"][0]["kind"] == "ManagedClusterAddOn"
    single = until(
        lambda: get_json(
            up.hub,
            "rolebinding",
            f"open-cluster-management:{ADDON}:role:agent",
            "-n",
            "open-cluster-management",
        )
    )
    assert single["roleRef"]["name"] == "cm-reader"

    # Healthy from the Deployment's (simulated) availability.
    until(
        lambda: (
            up.condition("cluster1", "Available")
            == ("True", "ProbeAvailable", f"{ADDON} add-on is available.")
        ),
        timeout=90,
    )
    mca = up.mca("cluster1")
    assert mca is not None and mca["status"]["healthCheck"]["mode"] == "Customized"
    assert up.condition("cluster1", "RegistrationApplied")[:2] == ("True", "SetPermissionApplied")  # type: ignore[index]
    assert up.condition("cluster1", "ManifestApplied")[:2] == ("True", "AddonManifestApplied")  # type: ignore[index]


def template_version(up: Up, cluster: str) -> str | None:
    """The addon-template-version label of the agent's Deployment on ``cluster`` ("" for
    v1, None while there is none)."""
    found = get_json(up.clusters[cluster], "deployment", f"{ADDON}-agent", "-n", INSTALL_NS)
    return None if found is None else found["metadata"]["labels"].get("addon-template-version", "")


def mirrored_by_cluster_annotation(up: Up) -> None:
    """A cluster's image-registries annotation re-renders its agent with the mirror."""
    mirrors = {
        "registries": [
            {"mirror": "mirror.example.com/ocm", "source": "quay.io/open-cluster-management"}
        ]
    }
    done = kubectl(
        up.hub, "annotate", "managedcluster", "cluster3",
        f"open-cluster-management.io/image-registries={json.dumps(mirrors)}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    def image() -> str:
        work = get_json(up.hub, "manifestwork", f"addon-{ADDON}-deploy-0", "-n", "cluster3")
        spec = deployment_of(work)["spec"]["template"]["spec"] if work else {}
        return str(spec.get("containers", [{}])[0].get("image"))

    until(lambda: image() == "mirror.example.com/ocm/addon-examples:latest")


def rolled_out_to_v2(up: Up) -> None:
    """The seed's upgrade/ example. First with its placement narrowed to the clusters
    labelled for it: only those move to v2, cluster3 (enabled by hand, not selected)
    keeps v1. Then the seed's placement unchanged (the global set): every cluster."""
    for name in ("addon-template-v2.yaml", "managed-cluster-setbinding.yaml"):
        up.apply("upgrade", name)
    v2 = get_json(up.hub, "addontemplate", f"{ADDON}-v2")
    assert v2 is not None
    for cluster in ("cluster1", "cluster2"):
        done = kubectl(up.hub, "label", "managedcluster", cluster, "upgrade=v2")
        assert done.returncode == 0, done.stderr
    narrowed = yaml.safe_load(shared(*EXAMPLES, "upgrade", "placement.yaml").read_text())
    narrowed["spec"]["predicates"] = [
        {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"upgrade": "v2"}}}}
    ]
    up.apply_text(json.dumps(narrowed))
    # The CMA's `rolloutStrategy.all.timeout` is older OCM's name of progressDeadline:
    # today's CRD has no such field, pyocm's takes it (kubectl validates strictly).
    up.apply("upgrade", "cluster-management-addon.yaml")
    cma = get_json(up.hub, "clustermanagementaddon", ADDON)
    assert cma is not None
    assert cma["spec"]["installStrategy"]["placements"][0]["rolloutStrategy"]["all"] == {
        "timeout": "30m",
        "maxFailures": 0,
        "minSuccessTime": "0",
        "progressDeadline": "None",
    }

    # cluster2's MCA (deleted before) comes back through the install strategy.
    until(lambda: template_version(up, "cluster1") == "v2", timeout=90)
    until(lambda: template_version(up, "cluster2") == "v2", timeout=90)
    assert template_version(up, "cluster3") == ""

    def progression_completed() -> bool:
        found = get_json(up.hub, "clustermanagementaddon", ADDON) or {}
        [progression] = found.get("status", {}).get("installProgressions") or [{}]
        state = {c["type"]: c for c in progression.get("conditions", [])}.get("Progressing", {})
        applied = {
            r["resource"]: r.get("lastAppliedConfig", {})
            for r in progression.get("configReferences", [])
        }
        return state.get("reason") == "Completed" and applied.get("addontemplates") == {
            "name": f"{ADDON}-v2",
            "specHash": spec_hash(v2),
        }

    until(progression_completed, timeout=90)
    until(lambda: (up.condition("cluster1", "Available") or ("",))[0] == "True", timeout=90)

    # The seed's placement as it is: every cluster of the global set.
    up.apply("upgrade", "placement.yaml")
    until(lambda: template_version(up, "cluster3") == "v2", timeout=90)


def missing_template_reported(up: Up) -> None:
    """A CMA whose default template does not exist: the MCA says so on ManifestApplied;
    the template made, the add-on deploys."""
    name = "lost-template"
    cma = {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": name,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
        },
        "spec": {
            "supportedConfigs": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addontemplates",
                    "defaultConfig": {"name": name},
                }
            ]
        },
    }
    up.apply_text(json.dumps(cma))
    done = pyocm(
        "addon", "enable", "--names", name, "--clusters", "cluster1", "--kubeconfig", str(up.hub)
    )
    assert done.returncode == 0, done.stderr
    message = (
        "failed to get manifest from agent interface: "
        f'addontemplate.addon.open-cluster-management.io "{name}" not found'
    )
    until(
        lambda: (
            up.condition("cluster1", "ManifestApplied", name)
            == ("False", "ManifestWorkApplyFailed", message)
        )
    )
    template = {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnTemplate",
        "metadata": {"name": name},
        "spec": {
            "addonName": name,
            "agentSpec": {
                "workload": {
                    "manifests": [
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": "lost", "namespace": "default"},
                            "data": {"a": "{{CLUSTER_NAME}}"},
                        }
                    ]
                }
            },
        },
    }
    up.apply_text(json.dumps(template))
    until(lambda: (up.condition("cluster1", "ManifestApplied", name) or ("",))[0] == "True")
    found = until(lambda: get_json(up.clusters["cluster1"], "configmap", "lost", "-n", "default"))
    assert found["data"] == {"a": "cluster1"}

    # Deleting the CMA removes its MCAs and what they deployed.
    done = kubectl(up.hub, "delete", "clustermanagementaddon", name)
    assert done.returncode == 0, done.stderr
    until(lambda: up.mca("cluster1", name) is None)
    until(lambda: get_json(up.clusters["cluster1"], "configmap", "lost", "-n", "default") is None)


def disabled_on_one_cluster(up: Up) -> None:
    until(
        lambda: get_json(up.clusters["cluster2"], "deployment", f"{ADDON}-agent", "-n", INSTALL_NS)
    )
    until(
        lambda: get_json(
            up.hub,
            "rolebinding",
            f"open-cluster-management:{ADDON}:clusterrole:agent",
            "-n",
            "cluster2",
        )
    )
    done = kubectl(
        up.hub,
        "delete",
        "managedclusteraddon.addon.open-cluster-management.io",
        ADDON,
        "-n",
        "cluster2",
    )
    assert done.returncode == 0, done.stderr

    def removed() -> bool:
        return (
            get_json(up.hub, "manifestwork", f"addon-{ADDON}-deploy-0", "-n", "cluster2") is None
            and get_json(up.clusters["cluster2"], "deployment", f"{ADDON}-agent", "-n", INSTALL_NS)
            is None
            and get_json(
                up.hub,
                "rolebinding",
                f"open-cluster-management:{ADDON}:clusterrole:agent",
                "-n",
                "cluster2",
            )
            is None
        )

    until(removed, timeout=90)
    # cluster1 keeps it.
    assert (
        get_json(up.clusters["cluster1"], "deployment", f"{ADDON}-agent", "-n", INSTALL_NS)
        is not None
    )


def test_seed_003_on_pyocm_up(up: Up) -> None:
    """One person's walk through the seed, in order (each step stands on the last)."""
    deployed_registered_and_healthy(up)
    # Before the upgrade's placement, which installs the add-on on every cluster (an MCA
    # deleted there would be made again).
    mirrored_by_cluster_annotation(up)
    disabled_on_one_cluster(up)
    rolled_out_to_v2(up)
    missing_template_reported(up)
