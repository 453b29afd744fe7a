"""What upstream's ``templateagent/decorator.go`` adds to a rendered template.

Each Deployment's and DaemonSet's pod template gets, in this order: the preset env, the
registration volumes, the node placement, the image registries, the proxy env (and the
proxy CA volume) and the resource requirements. Every object then gets the install
namespace. All of it mutates the object in place, as upstream mutates its typed copy.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from pyocm.addon.template.values import (
    INSTALL_NAMESPACE,
    NODE_PLACEMENT,
    PROXY,
    REGISTRIES,
    RESOURCE_REQUIREMENTS,
    RegexRequirement,
    RenderError,
    Values,
    matches,
)
from pyocm.api.models.addon_v1alpha1 import AddOnTemplateSpec
from pyocm.api.models.addon_v1beta1 import (
    AddOnDeploymentConfigSpecProxyConfig,
    AddOnDeploymentConfigSpecRegistry,
)

Obj = dict[str, Any]
HUB_KUBECONFIG_MOUNT = "/managed/hub-kubeconfig"
PROXY_CA_MOUNT = "/managed/proxy-ca"
PROXY_CA_KEY = "ca-bundle.crt"
#: Where the injected proxy CA ConfigMap goes before the install namespace decorates it.
DEFAULT_NAMESPACE = "open-cluster-management-agent-addon"
#: The field a namespace decorator sets, by kind (every list item on the way).
_NAMESPACE_PATHS = {
    "ClusterRoleBinding": ("subjects", "namespace"),
    "RoleBinding": ("subjects", "namespace"),
    "Namespace": ("metadata", "name"),
}


def decorate_pod(
    *, addon_name: str, spec: AddOnTemplateSpec, values: Values, resource: str, name: str, pod: Obj
) -> None:
    """Decorate one workload's pod template (``resource`` is ``deployments`` or
    ``daemonsets``, ``name`` the workload's name, for resource requirements)."""
    add_env(pod, values.preset)
    add_registration_volumes(pod, addon_name=addon_name, spec=spec)
    place(pod, values.private)
    override_images(pod, values.private)
    add_proxy(pod, addon_name=addon_name, private=values.private)
    set_resources(pod, values.private, container_id_prefix=f"{resource}:{name}")


def containers(pod: Obj) -> list[Obj]:
    return [c for c in pod.get("spec", {}).get("containers") or [] if isinstance(c, dict)]


def add_env(pod: Obj, pairs: Sequence[tuple[str, str]]) -> None:
    """Append the pairs to every container's env, after what the template has."""
    for container in containers(pod):
        env = container.get("env") or []
        container["env"] = [*env, *({"name": k, "value": v} for k, v in pairs)]


def add_volumes(pod: Obj, mounts: list[Obj], volumes: list[Obj]) -> None:
    for container in containers(pod):
        container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
    spec = pod.setdefault("spec", {})
    spec["volumes"] = [*(spec.get("volumes") or []), *volumes]


def add_registration_volumes(pod: Obj, *, addon_name: str, spec: AddOnTemplateSpec) -> None:
    """The hub kubeconfig secret of a KubeClient registration and the client certificate
    secret of each CustomSigner one, mounted in every container. Upstream sets no
    ``defaultMode``: the 420 seen on a cluster is the API server's default."""
    mounts: list[Obj] = []
    volumes: list[Obj] = []
    for registration in spec.get("registration") or []:
        if registration.get("type") == "KubeClient":
            mounts.append({"name": "hub-kubeconfig", "mountPath": HUB_KUBECONFIG_MOUNT})
            secret = f"{addon_name}-hub-kubeconfig"
            volumes.append({"name": "hub-kubeconfig", "secret": {"secretName": secret}})
        if registration.get("type") == "CustomSigner":
            signer = registration.get("customSigner")
            if signer is None:
                raise RenderError("custom signer is nil")
            dashed = signer.get("signerName", "").replace("/", "-")
            volume = "cert-" + dashed.replace(".", "-")
            mounts.append({"name": volume, "mountPath": f"/managed/{dashed}"})
            secret = f"{addon_name}-{dashed}-client-cert"
            volumes.append({"name": volume, "secret": {"secretName": secret}})
    if mounts:
        add_volumes(pod, mounts, volumes)


def place(pod: Obj, private: Mapping[str, object]) -> None:
    """The config's node selector and tolerations. Upstream's quirk: both are applied
    only when the config has a node selector (tolerations alone change nothing), and
    then both replace the template's."""
    if NODE_PLACEMENT not in private:
        return
    placement = private[NODE_PLACEMENT]
    if not isinstance(placement, Mapping):
        raise RenderError("node placement value is invalid")
    if placement.get("nodeSelector") is not None:
        spec = pod.setdefault("spec", {})
        spec["nodeSelector"] = placement["nodeSelector"]
        spec["tolerations"] = placement.get("tolerations")


def override_images(pod: Obj, private: Mapping[str, object]) -> None:
    if REGISTRIES not in private:
        return
    registries = private[REGISTRIES]
    if not isinstance(registries, list):
        raise RenderError("registries value is invalid")
    for container in containers(pod):
        container["image"] = override_image(registries, container.get("image") or "")


def override_image(registries: Sequence[AddOnDeploymentConfigSpecRegistry], image: str) -> str:
    """The framework's ``OverrideImage``: each registry in turn is tried on the original
    image and the last one that changes it wins."""
    result = image
    for registry in registries:
        name = _override(registry.get("source", ""), registry.get("mirror", ""), image)
        if name != image:
            result = name
    return result


def _override(source: str, mirror: str, image: str) -> str:
    source, mirror = source.removesuffix("/"), mirror.removesuffix("/")
    last = image.split("/")[-1]
    if not source:
        return f"{mirror}/{last}" if mirror else last
    if not image.startswith(source):
        return image
    return mirror + image[len(source) :]


def proxy_config(private: Mapping[str, object]) -> AddOnDeploymentConfigSpecProxyConfig | None:
    """The proxy config; a private value of another type is ignored, as upstream only
    logs it."""
    proxy = private.get(PROXY)
    return proxy if isinstance(proxy, dict) else None  # type: ignore[return-value]


def add_proxy(pod: Obj, *, addon_name: str, private: Mapping[str, object]) -> None:
    """``HTTP_PROXY``/``http_proxy``, ``HTTPS_PROXY``/``https_proxy``, ``NO_PROXY``/
    ``no_proxy`` for the fields set; with a CA bundle too, ``CA_BUNDLE_FILE_PATH`` and the
    CA ConfigMap's volume. A CA bundle alone adds nothing here (upstream returns before
    the bundle when there is no proxy env), though the ConfigMap is still injected."""
    proxy = proxy_config(private)
    if proxy is None:
        return
    pairs: list[tuple[str, str]] = []
    for field, name in (
        ("httpProxy", "HTTP_PROXY"),
        ("httpsProxy", "HTTPS_PROXY"),
        ("noProxy", "NO_PROXY"),
    ):
        value = str(proxy.get(field) or "")
        if value:
            pairs += [(name, value), (name.lower(), value)]
    if not pairs:
        return
    add_env(pod, pairs)
    if proxy.get("caBundle"):
        add_env(pod, [("CA_BUNDLE_FILE_PATH", f"{PROXY_CA_MOUNT}/{PROXY_CA_KEY}")])
        mount = {"name": "proxy-ca-bundle", "mountPath": PROXY_CA_MOUNT}
        volume = {"name": "proxy-ca-bundle", "configMap": {"name": f"{addon_name}-proxy-ca"}}
        add_volumes(pod, [mount], [volume])


def proxy_objects(*, addon_name: str, private: Mapping[str, object]) -> list[Obj]:
    """The ConfigMap ``<addon>-proxy-ca`` carrying the config's CA bundle (decoded: the
    config holds it base64-encoded, as Go's ``[]byte`` does), or nothing."""
    proxy = proxy_config(private)
    if proxy is None or not proxy.get("caBundle"):
        return []
    bundle = _decode_bundle(proxy["caBundle"])
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "creationTimestamp": None,
                "name": f"{addon_name}-proxy-ca",
                "namespace": DEFAULT_NAMESPACE,
            },
            "data": {PROXY_CA_KEY: bundle},
        }
    ]


def _decode_bundle(encoded: str) -> str:
    try:
        # Go's decoder skips line breaks, as a PEM bundle pasted in base64 may have.
        raw = base64.b64decode(encoded.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        raise RenderError(f"illegal base64 data in proxyConfig.caBundle: {encoded!r}") from None
    # Go's string([]byte) keeps the bytes; JSON then writes invalid UTF-8 as U+FFFD.
    return raw.decode("utf-8", errors="replace")


def set_resources(pod: Obj, private: Mapping[str, object], *, container_id_prefix: str) -> None:
    """Each container whose ``<resource>:<name>:<container>`` an entry matches gets that
    entry's resources, replacing its own; the last matching entry wins."""
    if RESOURCE_REQUIREMENTS not in private:
        return
    requirements = private[RESOURCE_REQUIREMENTS]
    if not isinstance(requirements, list):
        raise RenderError("resource requirements value is invalid")
    for container in containers(pod):
        container_id = f"{container_id_prefix}:{container.get('name', '')}"
        for requirement in reversed(requirements):
            if isinstance(requirement, RegexRequirement) and matches(
                requirement.pattern, container_id
            ):
                container["resources"] = dict(requirement.resources)
                break


def set_namespace(obj: Obj, private: Mapping[str, object]) -> None:
    """The config's ``agentInstallNamespace`` on a namespaced object (one with a
    namespace), on every subject of a (Cluster)RoleBinding, whatever the subject's kind,
    and as the name of a Namespace. A binding without ``subjects`` is an error."""
    namespace = private.get(INSTALL_NAMESPACE)
    if not isinstance(namespace, str) or not namespace:
        return
    metadata = obj.get("metadata")
    if (
        isinstance(metadata, dict)
        and isinstance(metadata.get("namespace"), str)
        and metadata["namespace"]
    ):
        metadata["namespace"] = namespace
    path = _NAMESPACE_PATHS.get(obj.get("kind") if isinstance(obj.get("kind"), str) else "")  # type: ignore[arg-type]
    if path is not None:
        _set_nested(obj, namespace, path)


def _set_nested(node: object, value: str, path: Sequence[str]) -> None:
    """Upstream's ``setUnstructuredNestedField``: lists are walked item by item, a missing
    map key on the way is an error, anything else is left alone."""
    if isinstance(node, list):
        for item in node:
            _set_nested(item, value, path)
    elif isinstance(node, dict):
        if len(path) == 1:
            node[path[0]] = value
            return
        if path[0] not in node:
            raise RenderError(f"failed to find field {path[0]}")
        _set_nested(node[path[0]], value, path[1:])
