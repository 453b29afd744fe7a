"""Upstream's add-on conversion (pkg/addon/webhook/v1beta1 and the API's conversion.go):
upstream's own test cases, then every field it moves, both directions, and round trips."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.hooks import conversion
from pyocm.hooks.conversion import addon

Obj = dict[str, Any]
ALPHA = "addon.open-cluster-management.io/v1alpha1"
BETA = "addon.open-cluster-management.io/v1beta1"
ADC = {"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"}
ANNOTATION = "addon.open-cluster-management.io/v1alpha1-install-namespace"


def mca(api_version: str, **fields: Any) -> Obj:
    meta = {"name": "test-addon", "namespace": "cluster1", **fields.pop("metadata", {})}
    return {"apiVersion": api_version, "kind": "ManagedClusterAddOn", "metadata": meta, **fields}


def cma(api_version: str, **fields: Any) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "ClusterManagementAddOn",
        "metadata": {"name": "test-addon"},
        **fields,
    }


def converted(obj: Obj, version: str) -> Obj:
    """Convert, checking on the way that the input is left as it was."""
    before = copy.deepcopy(obj)
    out = conversion.convert(obj, version)
    assert obj == before, "conversion changed its argument"
    return out


# --- upstream's test cases (managedclusteraddon_conversion_test.go) -------------------

MCA_STATUS_COMMON: Obj = {
    "namespace": "open-cluster-management-agent-addon",
    "supportedConfigs": [ADC],
    "relatedObjects": [{"group": "apps", "resource": "deployments", "name": "test-deployment"}],
    "addOnMeta": {"displayName": "Test AddOn", "description": "Test description"},
    "healthCheck": {"mode": "Customized"},
}
CONFIG1 = {**ADC, "namespace": "default", "name": "config1"}
DESIRED1 = {"namespace": "default", "name": "config1", "specHash": "hash123"}

MCA_BETA_COMPLETE = mca(
    BETA,
    metadata={"annotations": {ANNOTATION: "test-namespace"}},
    spec={"configs": [CONFIG1]},
    status={
        **MCA_STATUS_COMMON,
        "registrations": [
            {"type": "kubeClient", "kubeClient": {"subject": {"user": "system:addon:test"}}}
        ],
        "configReferences": [{**ADC, "desiredConfig": DESIRED1}],
    },
)
MCA_ALPHA_COMPLETE = mca(
    ALPHA,
    spec={"installNamespace": "test-namespace", "configs": [CONFIG1]},
    status={
        **MCA_STATUS_COMMON,
        "registrations": [
            {
                "signerName": "kubernetes.io/kube-apiserver-client",
                "subject": {"user": "system:addon:test"},
            }
        ],
        "configReferences": [
            {**ADC, "namespace": "default", "name": "config1", "desiredConfig": DESIRED1}
        ],
    },
)


def test_upstream_mca_convert_to_hub_complete() -> None:
    assert converted(MCA_BETA_COMPLETE, "v1alpha1") == MCA_ALPHA_COMPLETE


def test_upstream_mca_convert_to_hub_keeps_user_annotations() -> None:
    src = mca(
        BETA,
        metadata={
            "annotations": {
                ANNOTATION: "test-namespace",
                "abc.def": "hahaha",
                "user.annotation": "should-be-preserved",
            }
        },
        spec={},
    )
    assert converted(src, "v1alpha1") == mca(
        ALPHA,
        metadata={"annotations": {"abc.def": "hahaha", "user.annotation": "should-be-preserved"}},
        spec={"installNamespace": "test-namespace"},
    )


def test_upstream_mca_convert_from_hub_complete() -> None:
    assert converted(MCA_ALPHA_COMPLETE, "v1beta1") == MCA_BETA_COMPLETE


# --- upstream's test cases (clustermanagementaddon_conversion_test.go) ----------------

CMA_PLACEMENTS = {
    "type": "Placements",
    "placements": [
        {
            "name": "placement1",
            "namespace": "default",
            "configs": [CONFIG1],
            "rolloutStrategy": {"type": "All"},
        }
    ],
}
CMA_PROGRESSIONS = [
    {
        "name": "placement1",
        "namespace": "default",
        "configReferences": [{**ADC, "desiredConfig": DESIRED1}],
    }
]
CMA_BETA_COMPLETE = cma(
    BETA,
    spec={
        "addOnMeta": {"displayName": "Test AddOn", "description": "Test description"},
        "defaultConfigs": [CONFIG1],
        "installStrategy": CMA_PLACEMENTS,
    },
    status={
        "defaultConfigReferences": [{**ADC, "desiredConfig": DESIRED1}],
        "installProgressions": CMA_PROGRESSIONS,
    },
)
CMA_ALPHA_COMPLETE = cma(
    ALPHA,
    spec={
        "addOnMeta": {"displayName": "Test AddOn", "description": "Test description"},
        "supportedConfigs": [{**ADC, "defaultConfig": {"namespace": "default", "name": "config1"}}],
        "installStrategy": CMA_PLACEMENTS,
    },
    status={
        "defaultconfigReferences": [{**ADC, "desiredConfig": DESIRED1}],
        "installProgressions": CMA_PROGRESSIONS,
    },
)


def test_upstream_cma_convert_to_hub_complete() -> None:
    assert converted(CMA_BETA_COMPLETE, "v1alpha1") == CMA_ALPHA_COMPLETE


def test_upstream_cma_convert_from_hub_complete() -> None:
    assert converted(CMA_ALPHA_COMPLETE, "v1beta1") == CMA_BETA_COMPLETE


# --- ClusterManagementAddOn: every moved field --------------------------------------


def test_supported_config_without_default_is_the_reserved_name_and_back() -> None:
    alpha = cma(ALPHA, spec={"supportedConfigs": [ADC]})
    beta = converted(alpha, "v1beta1")
    assert beta["spec"] == {"defaultConfigs": [{**ADC, "name": "__reserved_no_default__"}]}
    assert converted(beta, "v1alpha1") == alpha


def test_default_config_with_empty_name_has_no_default_config() -> None:
    beta = cma(BETA, spec={"defaultConfigs": [{**ADC, "name": ""}]})
    assert converted(beta, "v1alpha1")["spec"] == {"supportedConfigs": [ADC]}


def test_cluster_scoped_default_config_has_no_namespace() -> None:
    alpha = cma(ALPHA, spec={"supportedConfigs": [{**ADC, "defaultConfig": {"name": "global"}}]})
    beta = converted(alpha, "v1beta1")
    assert beta["spec"]["defaultConfigs"] == [{**ADC, "name": "global"}]
    assert converted(beta, "v1alpha1") == alpha


def test_cma_deprecated_addon_configuration_is_dropped() -> None:
    alpha = cma(ALPHA, spec={"addOnConfiguration": {"crdName": "x.example.com", "crName": "c"}})
    assert converted(alpha, "v1beta1")["spec"] == {}


def test_default_config_references_change_case() -> None:
    ref = {**ADC, "desiredConfig": DESIRED1}
    alpha = cma(ALPHA, status={"defaultconfigReferences": [ref]})
    beta = converted(alpha, "v1beta1")
    assert beta["status"] == {"defaultConfigReferences": [ref]}
    assert converted(beta, "v1alpha1") == alpha


def test_fields_the_source_version_does_not_have_are_not_carried() -> None:
    """Upstream decodes into the source version's struct first: a v1beta1 field found in
    a v1alpha1 object is not part of it."""
    alpha = cma(
        ALPHA,
        spec={"defaultConfigs": [CONFIG1]},
        status={"defaultConfigReferences": [{**ADC}]},
    )
    assert converted(alpha, "v1beta1") == cma(BETA, spec={}, status={})


def test_moved_fields_keep_their_place() -> None:
    alpha = cma(
        ALPHA,
        spec={"addOnMeta": {}, "supportedConfigs": [ADC], "installStrategy": {"type": "Manual"}},
    )
    assert list(converted(alpha, "v1beta1")["spec"]) == [
        "addOnMeta",
        "defaultConfigs",
        "installStrategy",
    ]


# --- ManagedClusterAddOn: every moved field ------------------------------------------


def test_install_namespace_is_an_annotation_and_back() -> None:
    alpha = mca(ALPHA, metadata={"labels": {"a": "b"}}, spec={"installNamespace": "ns1"})
    beta = converted(alpha, "v1beta1")
    assert beta["metadata"]["annotations"] == {ANNOTATION: "ns1"}
    assert beta["spec"] == {}
    assert converted(beta, "v1alpha1") == alpha


def test_empty_install_namespace_sets_no_annotation() -> None:
    beta = converted(mca(ALPHA, spec={"installNamespace": ""}), "v1beta1")
    assert "annotations" not in beta["metadata"]


def test_empty_annotation_removed_without_install_namespace() -> None:
    beta = mca(BETA, metadata={"annotations": {ANNOTATION: ""}}, spec={})
    assert converted(beta, "v1alpha1") == mca(ALPHA, spec={})


def test_annotation_without_spec_creates_spec() -> None:
    beta = mca(BETA, metadata={"annotations": {ANNOTATION: "ns2"}})
    assert converted(beta, "v1alpha1")["spec"] == {"installNamespace": "ns2"}


def test_kube_client_registration_and_driver() -> None:
    alpha = mca(
        ALPHA,
        status={
            "registrations": [
                {
                    "signerName": "kubernetes.io/kube-apiserver-client",
                    "subject": {"user": "u", "groups": ["g"]},
                },
                {
                    "signerName": "example.com/signer",
                    "subject": {"user": "v", "organizationUnit": ["ou"]},
                },
            ],
            "kubeClientDriver": "token",
        },
    )
    beta = converted(alpha, "v1beta1")
    assert beta["status"] == {
        "registrations": [
            {
                "type": "kubeClient",
                "kubeClient": {"subject": {"user": "u", "groups": ["g"]}, "driver": "token"},
            },
            {
                "type": "customSigner",
                "customSigner": {
                    "signerName": "example.com/signer",
                    "subject": {"user": "v", "organizationUnits": ["ou"]},
                },
            },
        ]
    }
    assert converted(beta, "v1alpha1") == alpha


def test_driver_goes_to_every_kube_client_registration() -> None:
    kube = {"signerName": "kubernetes.io/kube-apiserver-client", "subject": {"user": "u"}}
    alpha = mca(ALPHA, status={"registrations": [kube, kube], "kubeClientDriver": "csr"})
    beta = converted(alpha, "v1beta1")
    assert [r["kubeClient"]["driver"] for r in beta["status"]["registrations"]] == ["csr", "csr"]


def test_driver_back_from_first_kube_client_registration_even_when_empty() -> None:
    beta = mca(
        BETA,
        status={
            "registrations": [
                {"type": "kubeClient", "kubeClient": {"subject": {"user": "u"}}},
                {"type": "kubeClient", "kubeClient": {"subject": {"user": "w"}, "driver": "token"}},
            ]
        },
    )
    assert "kubeClientDriver" not in converted(beta, "v1alpha1")["status"]


def test_driver_without_registrations_is_lost_as_upstream() -> None:
    alpha = mca(ALPHA, status={"kubeClientDriver": "csr"})
    assert converted(alpha, "v1beta1")["status"] == {}


def test_kube_client_signer_drops_organization_units_as_upstream() -> None:
    alpha = mca(
        ALPHA,
        status={
            "registrations": [
                {
                    "signerName": "kubernetes.io/kube-apiserver-client",
                    "subject": {"user": "u", "organizationUnit": ["ou"]},
                }
            ]
        },
    )
    beta = converted(alpha, "v1beta1")
    assert beta["status"]["registrations"] == [
        {"type": "kubeClient", "kubeClient": {"subject": {"user": "u"}}}
    ]


def test_custom_signer_without_subject() -> None:
    beta = mca(
        BETA,
        status={
            "registrations": [{"type": "customSigner", "customSigner": {"signerName": "a.b/c"}}]
        },
    )
    alpha = converted(beta, "v1alpha1")
    assert alpha["status"]["registrations"] == [{"signerName": "a.b/c"}]
    assert converted(alpha, "v1beta1") == beta


def test_config_reference_top_level_referent_follows_desired_config() -> None:
    beta = mca(
        BETA,
        status={
            "configReferences": [
                {
                    **ADC,
                    "lastObservedGeneration": 2,
                    "desiredConfig": DESIRED1,
                    "lastAppliedConfig": DESIRED1,
                },
                {**ADC},
            ]
        },
    )
    alpha = converted(beta, "v1alpha1")
    assert alpha["status"]["configReferences"] == [
        {
            **ADC,
            "namespace": "default",
            "name": "config1",
            "lastObservedGeneration": 2,
            "desiredConfig": DESIRED1,
            "lastAppliedConfig": DESIRED1,
        },
        {**ADC},
    ]
    assert converted(alpha, "v1beta1") == beta


def test_config_reference_without_desired_config_loses_referent_as_upstream() -> None:
    alpha = mca(ALPHA, status={"configReferences": [{**ADC, "namespace": "n", "name": "c"}]})
    assert converted(alpha, "v1beta1")["status"]["configReferences"] == [ADC]


def test_mca_deprecated_addon_configuration_is_dropped() -> None:
    alpha = mca(ALPHA, status={"addOnConfiguration": {"crdName": "x"}, "namespace": "ns"})
    assert converted(alpha, "v1beta1")["status"] == {"namespace": "ns"}


# --- dispatch and errors ---------------------------------------------------------------


def test_same_version_is_returned_as_is() -> None:
    assert conversion.convert(MCA_ALPHA_COMPLETE, "v1alpha1") is MCA_ALPHA_COMPLETE


@pytest.mark.parametrize("obj", [MCA_ALPHA_COMPLETE, CMA_ALPHA_COMPLETE])
def test_unknown_version_is_an_error(obj: Obj) -> None:
    with pytest.raises(conversion.ConversionError, match="unknown version 'v1'"):
        conversion.convert(obj, "v1")


def test_other_kinds_only_change_api_version() -> None:
    adc = {
        "apiVersion": ALPHA,
        "kind": "AddOnDeploymentConfig",
        "spec": {"agentInstallNamespace": "x"},
    }
    assert converted(adc, "v1beta1") == {**adc, "apiVersion": BETA}


def test_upstream_constants() -> None:
    assert addon.RESERVED_NO_DEFAULT_CONFIG_NAME == "__reserved_no_default__"
    assert addon.INSTALL_NAMESPACE_ANNOTATION == ANNOTATION
