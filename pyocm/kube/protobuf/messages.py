"""Field tables of the Kubernetes messages clients send as protobuf bodies.

Numbers, JSON names and Go pointer-ness as in ``k8s.io/api`` (client-go 1.35); see the
table in ../shared/reference/kube-api-surface.md, Appendix B (Node's messages were read
from ``k8s.io/api/core/v1/generated.proto`` of Kubernetes ~1.35; fields newer than these
tables are skipped, as protobuf does; the CustomResourceDefinition messages from apiextensions-apiserver's
``apiextensions/v1/generated.proto``). Each message is named first and filled after, so tables can refer to
one another in any order.
"""

from __future__ import annotations

from pyocm.kube.protobuf.schema import F, Message

S, INT, B, BY = "string", "int", "bool", "bytes"
TIME, MICRO = "time", "microtime"


def _strings(name: str) -> F:
    return F(name, S, repeated=True)


def _map(name: str, value: object = S) -> F:
    return F(name, S, map_of=value)  # type: ignore[arg-type]


# meta/v1
OBJECT_META = Message("ObjectMeta")
OWNER_REFERENCE = Message("OwnerReference")
MANAGED_FIELDS = Message("ManagedFieldsEntry")
DELETE_OPTIONS = Message("DeleteOptions")
PRECONDITIONS = Message("Preconditions")
LABEL_SELECTOR = Message("LabelSelector")
LABEL_REQUIREMENT = Message("LabelSelectorRequirement")
CONDITION = Message("Condition")

OBJECT_META.define(
    _1=F("name", S),
    _2=F("generateName", S),
    _3=F("namespace", S),
    _4=F("selfLink", S),
    _5=F("uid", S),
    _6=F("resourceVersion", S),
    _7=F("generation", INT),
    _8=F("creationTimestamp", TIME),
    _9=F("deletionTimestamp", TIME, ptr=True),
    _10=F("deletionGracePeriodSeconds", INT, ptr=True),
    _11=_map("labels"),
    _12=_map("annotations"),
    _13=F("ownerReferences", OWNER_REFERENCE, repeated=True),
    _14=_strings("finalizers"),
    _17=F("managedFields", MANAGED_FIELDS, repeated=True),
)
OWNER_REFERENCE.define(
    _5=F("apiVersion", S),
    _1=F("kind", S),
    _3=F("name", S),
    _4=F("uid", S),
    _6=F("controller", B, ptr=True),
    _7=F("blockOwnerDeletion", B, ptr=True),
)
MANAGED_FIELDS.define(
    _1=F("manager", S),
    _2=F("operation", S),
    _3=F("apiVersion", S),
    _4=F("time", TIME, ptr=True),
    _6=F("fieldsType", S),
    _7=F("fieldsV1", "json", ptr=True),
    _8=F("subresource", S),
)
DELETE_OPTIONS.define(
    _1=F("gracePeriodSeconds", INT, ptr=True),
    _2=F("preconditions", PRECONDITIONS, ptr=True),
    _3=F("orphanDependents", B, ptr=True),
    _4=F("propagationPolicy", S, ptr=True),
    _5=_strings("dryRun"),
    _6=F("ignoreStoreReadErrorWithClusterBreakingPotential", B, ptr=True),
)
PRECONDITIONS.define(_1=F("uid", S, ptr=True), _2=F("resourceVersion", S, ptr=True))
LABEL_SELECTOR.define(
    _1=_map("matchLabels"), _2=F("matchExpressions", LABEL_REQUIREMENT, repeated=True)
)
LABEL_REQUIREMENT.define(_1=F("key", S), _2=F("operator", S), _3=_strings("values"))
CONDITION.define(
    _1=F("type", S),
    _2=F("status", S),
    _3=F("observedGeneration", INT),
    _4=F("lastTransitionTime", TIME),
    _5=F("reason", S),
    _6=F("message", S),
)

# certificates.k8s.io/v1
CSR = Message("CertificateSigningRequest")
CSR_SPEC = Message("CertificateSigningRequestSpec")
CSR_STATUS = Message("CertificateSigningRequestStatus")
CSR_CONDITION = Message("CertificateSigningRequestCondition")
CSR.define(_1=F("metadata", OBJECT_META), _2=F("spec", CSR_SPEC), _3=F("status", CSR_STATUS))
CSR_SPEC.define(
    _1=F("request", BY),
    _7=F("signerName", S),
    _8=F("expirationSeconds", INT, ptr=True),
    _5=_strings("usages"),
    _2=F("username", S),
    _3=F("uid", S),
    _4=_strings("groups"),
    _6=_map("extra", "stringlist"),
)
CSR_STATUS.define(_1=F("conditions", CSR_CONDITION, repeated=True), _2=F("certificate", BY))
CSR_CONDITION.define(
    _1=F("type", S),
    _6=F("status", S),
    _2=F("reason", S),
    _3=F("message", S),
    _4=F("lastUpdateTime", TIME),
    _5=F("lastTransitionTime", TIME),
)

# authorization.k8s.io/v1
ACCESS_REVIEW = Message("SubjectAccessReview")
SELF_ACCESS_REVIEW = Message("SelfSubjectAccessReview")
RULES_REVIEW = Message("SelfSubjectRulesReview")
ACCESS_SPEC = Message("SubjectAccessReviewSpec")
SELF_ACCESS_SPEC = Message("SelfSubjectAccessReviewSpec")
RULES_SPEC = Message("SelfSubjectRulesReviewSpec")
RESOURCE_ATTRIBUTES = Message("ResourceAttributes")
NON_RESOURCE_ATTRIBUTES = Message("NonResourceAttributes")
SELECTOR_ATTRIBUTES = Message("SelectorAttributes")
ACCESS_STATUS = Message("SubjectAccessReviewStatus")
ACCESS_REVIEW.define(
    _1=F("metadata", OBJECT_META), _2=F("spec", ACCESS_SPEC), _3=F("status", ACCESS_STATUS)
)
SELF_ACCESS_REVIEW.define(
    _1=F("metadata", OBJECT_META), _2=F("spec", SELF_ACCESS_SPEC), _3=F("status", ACCESS_STATUS)
)
RULES_REVIEW.define(_1=F("metadata", OBJECT_META), _2=F("spec", RULES_SPEC))
ACCESS_SPEC.define(
    _1=F("resourceAttributes", RESOURCE_ATTRIBUTES, ptr=True),
    _2=F("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, ptr=True),
    _3=F("user", S),
    _4=_strings("groups"),
    _5=_map("extra", "stringlist"),
    _6=F("uid", S),
)
SELF_ACCESS_SPEC.define(
    _1=F("resourceAttributes", RESOURCE_ATTRIBUTES, ptr=True),
    _2=F("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, ptr=True),
)
RULES_SPEC.define(_1=F("namespace", S))
RESOURCE_ATTRIBUTES.define(
    _1=F("namespace", S),
    _2=F("verb", S),
    _3=F("group", S),
    _4=F("version", S),
    _5=F("resource", S),
    _6=F("subresource", S),
    _7=F("name", S),
    _8=F("fieldSelector", SELECTOR_ATTRIBUTES, ptr=True),
    _9=F("labelSelector", SELECTOR_ATTRIBUTES, ptr=True),
)
SELECTOR_ATTRIBUTES.define(
    _1=F("rawSelector", S), _2=F("requirements", LABEL_REQUIREMENT, repeated=True)
)
NON_RESOURCE_ATTRIBUTES.define(_1=F("path", S), _2=F("verb", S))
ACCESS_STATUS.define(
    _1=F("allowed", B), _4=F("denied", B), _2=F("reason", S), _3=F("evaluationError", S)
)

# authentication.k8s.io/v1
TOKEN_REQUEST = Message("TokenRequest")
TOKEN_REQUEST_SPEC = Message("TokenRequestSpec")
BOUND_OBJECT = Message("BoundObjectReference")
TOKEN_REVIEW = Message("TokenReview")
TOKEN_REVIEW_SPEC = Message("TokenReviewSpec")
SELF_SUBJECT_REVIEW = Message("SelfSubjectReview")
TOKEN_REQUEST.define(_1=F("metadata", OBJECT_META), _2=F("spec", TOKEN_REQUEST_SPEC))
TOKEN_REQUEST_SPEC.define(
    _1=_strings("audiences"),
    _4=F("expirationSeconds", INT, ptr=True),
    _3=F("boundObjectRef", BOUND_OBJECT, ptr=True),
)
BOUND_OBJECT.define(_1=F("kind", S), _2=F("apiVersion", S), _3=F("name", S), _4=F("uid", S))
TOKEN_REVIEW.define(_1=F("metadata", OBJECT_META), _2=F("spec", TOKEN_REVIEW_SPEC))
TOKEN_REVIEW_SPEC.define(_1=F("token", S), _2=_strings("audiences"))
SELF_SUBJECT_REVIEW.define(_1=F("metadata", OBJECT_META))

# coordination.k8s.io/v1
LEASE = Message("Lease")
LEASE_SPEC = Message("LeaseSpec")
LEASE.define(_1=F("metadata", OBJECT_META), _2=F("spec", LEASE_SPEC))
LEASE_SPEC.define(
    _1=F("holderIdentity", S, ptr=True),
    _2=F("leaseDurationSeconds", INT, ptr=True),
    _3=F("acquireTime", MICRO, ptr=True),
    _4=F("renewTime", MICRO, ptr=True),
    _5=F("leaseTransitions", INT, ptr=True),
    _6=F("strategy", S, ptr=True),
    _7=F("preferredHolder", S, ptr=True),
)

# rbac.authorization.k8s.io/v1
CLUSTER_ROLE = Message("ClusterRole")
ROLE = Message("Role")
POLICY_RULE = Message("PolicyRule")
AGGREGATION_RULE = Message("AggregationRule")
BINDING = Message("RoleBinding")
SUBJECT = Message("Subject")
ROLE_REF = Message("RoleRef")
CLUSTER_ROLE.define(
    _1=F("metadata", OBJECT_META),
    _2=F("rules", POLICY_RULE, repeated=True),
    _3=F("aggregationRule", AGGREGATION_RULE, ptr=True),
)
ROLE.define(_1=F("metadata", OBJECT_META), _2=F("rules", POLICY_RULE, repeated=True))
POLICY_RULE.define(
    _1=_strings("verbs"),
    _2=_strings("apiGroups"),
    _3=_strings("resources"),
    _4=_strings("resourceNames"),
    _5=_strings("nonResourceURLs"),
)
AGGREGATION_RULE.define(_1=F("clusterRoleSelectors", LABEL_SELECTOR, repeated=True))
BINDING.define(
    _1=F("metadata", OBJECT_META),
    _2=F("subjects", SUBJECT, repeated=True),
    _3=F("roleRef", ROLE_REF),
)
SUBJECT.define(_1=F("kind", S), _2=F("apiGroup", S), _3=F("name", S), _4=F("namespace", S))
ROLE_REF.define(_1=F("apiGroup", S), _2=F("kind", S), _3=F("name", S))

# core/v1
CONFIGMAP = Message("ConfigMap")
SECRET = Message("Secret")
NAMESPACE = Message("Namespace")
NAMESPACE_SPEC = Message("NamespaceSpec")
NAMESPACE_STATUS = Message("NamespaceStatus")
NAMESPACE_CONDITION = Message("NamespaceCondition")
SERVICE_ACCOUNT = Message("ServiceAccount")
OBJECT_REFERENCE = Message("ObjectReference")
LOCAL_OBJECT_REFERENCE = Message("LocalObjectReference")
CORE_EVENT = Message("Event")
EVENT_SOURCE = Message("EventSource")
CORE_EVENT_SERIES = Message("EventSeries")
CONFIGMAP.define(
    _1=F("metadata", OBJECT_META),
    _4=F("immutable", B, ptr=True),
    _2=_map("data"),
    _3=_map("binaryData", BY),
)
SECRET.define(
    _1=F("metadata", OBJECT_META),
    _5=F("immutable", B, ptr=True),
    _2=_map("data", BY),
    _4=_map("stringData"),
    _3=F("type", S),
)
NAMESPACE.define(
    _1=F("metadata", OBJECT_META), _2=F("spec", NAMESPACE_SPEC), _3=F("status", NAMESPACE_STATUS)
)
NAMESPACE_SPEC.define(_1=_strings("finalizers"))
NAMESPACE_STATUS.define(_1=F("phase", S), _2=F("conditions", NAMESPACE_CONDITION, repeated=True))
NAMESPACE_CONDITION.define(
    _1=F("type", S),
    _2=F("status", S),
    _4=F("lastTransitionTime", TIME),
    _5=F("reason", S),
    _6=F("message", S),
)
SERVICE_ACCOUNT.define(
    _1=F("metadata", OBJECT_META),
    _2=F("secrets", OBJECT_REFERENCE, repeated=True),
    _3=F("imagePullSecrets", LOCAL_OBJECT_REFERENCE, repeated=True),
    _4=F("automountServiceAccountToken", B, ptr=True),
)
OBJECT_REFERENCE.define(
    _1=F("kind", S),
    _2=F("namespace", S),
    _3=F("name", S),
    _4=F("uid", S),
    _5=F("apiVersion", S),
    _6=F("resourceVersion", S),
    _7=F("fieldPath", S),
)
LOCAL_OBJECT_REFERENCE.define(_1=F("name", S))
CORE_EVENT.define(
    _1=F("metadata", OBJECT_META),
    _2=F("involvedObject", OBJECT_REFERENCE),
    _3=F("reason", S),
    _4=F("message", S),
    _5=F("source", EVENT_SOURCE),
    _6=F("firstTimestamp", TIME),
    _7=F("lastTimestamp", TIME),
    _8=F("count", INT),
    _9=F("type", S),
    _10=F("eventTime", MICRO),
    _11=F("series", CORE_EVENT_SERIES, ptr=True),
    _12=F("action", S),
    _13=F("related", OBJECT_REFERENCE, ptr=True),
    _14=F("reportingComponent", S),
    _15=F("reportingInstance", S),
)
EVENT_SOURCE.define(_1=F("component", S), _2=F("host", S))
CORE_EVENT_SERIES.define(_1=F("count", INT), _2=F("lastObservedTime", MICRO))

NODE = Message("Node")
NODE_SPEC = Message("NodeSpec")
NODE_STATUS = Message("NodeStatus")
TAINT = Message("Taint")
NODE_CONFIG_SOURCE = Message("NodeConfigSource")
CONFIGMAP_NODE_CONFIG_SOURCE = Message("ConfigMapNodeConfigSource")
NODE_CONFIG_STATUS = Message("NodeConfigStatus")
NODE_CONDITION = Message("NodeCondition")
NODE_ADDRESS = Message("NodeAddress")
NODE_DAEMON_ENDPOINTS = Message("NodeDaemonEndpoints")
DAEMON_ENDPOINT = Message("DaemonEndpoint")
NODE_SYSTEM_INFO = Message("NodeSystemInfo")
CONTAINER_IMAGE = Message("ContainerImage")
ATTACHED_VOLUME = Message("AttachedVolume")
NODE_RUNTIME_HANDLER = Message("NodeRuntimeHandler")
NODE_RUNTIME_HANDLER_FEATURES = Message("NodeRuntimeHandlerFeatures")
NODE_FEATURES = Message("NodeFeatures")
NODE_SWAP_STATUS = Message("NodeSwapStatus")
NODE.define(_1=F("metadata", OBJECT_META), _2=F("spec", NODE_SPEC), _3=F("status", NODE_STATUS))
NODE_SPEC.define(
    _1=F("podCIDR", S),
    _7=_strings("podCIDRs"),
    _3=F("providerID", S),
    _4=F("unschedulable", B),
    _5=F("taints", TAINT, repeated=True),
    _6=F("configSource", NODE_CONFIG_SOURCE, ptr=True),
    _2=F("externalID", S),
)
TAINT.define(_1=F("key", S), _2=F("value", S), _3=F("effect", S), _4=F("timeAdded", TIME, ptr=True))
NODE_CONFIG_SOURCE.define(_2=F("configMap", CONFIGMAP_NODE_CONFIG_SOURCE, ptr=True))
CONFIGMAP_NODE_CONFIG_SOURCE.define(
    _1=F("namespace", S),
    _2=F("name", S),
    _3=F("uid", S),
    _4=F("resourceVersion", S),
    _5=F("kubeletConfigKey", S),
)
NODE_CONFIG_STATUS.define(
    _1=F("assigned", NODE_CONFIG_SOURCE, ptr=True),
    _2=F("active", NODE_CONFIG_SOURCE, ptr=True),
    _3=F("lastKnownGood", NODE_CONFIG_SOURCE, ptr=True),
    _4=F("error", S),
)
NODE_STATUS.define(
    _1=_map("capacity", "quantity"),
    _2=_map("allocatable", "quantity"),
    _3=F("phase", S),
    _4=F("conditions", NODE_CONDITION, repeated=True),
    _5=F("addresses", NODE_ADDRESS, repeated=True),
    _6=F("daemonEndpoints", NODE_DAEMON_ENDPOINTS),
    _7=F("nodeInfo", NODE_SYSTEM_INFO),
    _8=F("images", CONTAINER_IMAGE, repeated=True),
    _9=_strings("volumesInUse"),
    _10=F("volumesAttached", ATTACHED_VOLUME, repeated=True),
    _11=F("config", NODE_CONFIG_STATUS, ptr=True),
    _12=F("runtimeHandlers", NODE_RUNTIME_HANDLER, repeated=True),
    _13=F("features", NODE_FEATURES, ptr=True),
    _14=_strings("declaredFeatures"),
)
NODE_RUNTIME_HANDLER.define(
    _1=F("name", S), _2=F("features", NODE_RUNTIME_HANDLER_FEATURES, ptr=True)
)
NODE_RUNTIME_HANDLER_FEATURES.define(
    _1=F("recursiveReadOnlyMounts", B, ptr=True), _2=F("userNamespaces", B, ptr=True)
)
NODE_FEATURES.define(
    _1=F("supplementalGroupsPolicy", B, ptr=True), _2=F("containerUlimits", B, ptr=True)
)
NODE_CONDITION.define(
    _1=F("type", S),
    _2=F("status", S),
    _3=F("lastHeartbeatTime", TIME),
    _4=F("lastTransitionTime", TIME),
    _5=F("reason", S),
    _6=F("message", S),
)
NODE_ADDRESS.define(_1=F("type", S), _2=F("address", S))
NODE_DAEMON_ENDPOINTS.define(_1=F("kubeletEndpoint", DAEMON_ENDPOINT))
DAEMON_ENDPOINT.define(_1=F("Port", INT))
NODE_SYSTEM_INFO.define(
    _1=F("machineID", S),
    _2=F("systemUUID", S),
    _3=F("bootID", S),
    _4=F("kernelVersion", S),
    _5=F("osImage", S),
    _6=F("containerRuntimeVersion", S),
    _7=F("kubeletVersion", S),
    _8=F("kubeProxyVersion", S),
    _9=F("operatingSystem", S),
    _10=F("architecture", S),
    _11=F("swap", NODE_SWAP_STATUS, ptr=True),
)
NODE_SWAP_STATUS.define(_1=F("capacity", INT, ptr=True))
CONTAINER_IMAGE.define(_1=_strings("names"), _2=F("sizeBytes", INT))
ATTACHED_VOLUME.define(_1=F("name", S), _2=F("devicePath", S))

# events.k8s.io/v1
EVENT = Message("Event")
EVENT.define(
    _1=F("metadata", OBJECT_META),
    _2=F("eventTime", MICRO),
    _3=F("series", CORE_EVENT_SERIES, ptr=True),
    _4=F("reportingController", S),
    _5=F("reportingInstance", S),
    _6=F("action", S),
    _7=F("reason", S),
    _8=F("regarding", OBJECT_REFERENCE),
    _9=F("related", OBJECT_REFERENCE, ptr=True),
    _10=F("note", S),
    _11=F("type", S),
    _12=F("deprecatedSource", EVENT_SOURCE),
    _13=F("deprecatedFirstTimestamp", TIME),
    _14=F("deprecatedLastTimestamp", TIME),
    _15=F("deprecatedCount", INT),
)

# apiextensions.k8s.io/v1
CRD = Message("CustomResourceDefinition")
CRD_SPEC = Message("CustomResourceDefinitionSpec")
CRD_NAMES = Message("CustomResourceDefinitionNames")
CRD_VERSION = Message("CustomResourceDefinitionVersion")
CRD_VALIDATION = Message("CustomResourceValidation")
CRD_SUBRESOURCES = Message("CustomResourceSubresources")
CRD_SUBRESOURCE_STATUS = Message("CustomResourceSubresourceStatus")
CRD_SCALE = Message("CustomResourceSubresourceScale")
CRD_COLUMN = Message("CustomResourceColumnDefinition")
CRD_SELECTABLE = Message("SelectableField")
CRD_CONVERSION = Message("CustomResourceConversion")
WEBHOOK_CONVERSION = Message("WebhookConversion")
WEBHOOK_CLIENT = Message("WebhookClientConfig")
SERVICE_REFERENCE = Message("ServiceReference")
CRD_STATUS = Message("CustomResourceDefinitionStatus")
CRD_CONDITION = Message("CustomResourceDefinitionCondition")
PROPS = Message("JSONSchemaProps")
PROPS_OR_ARRAY = Message("JSONSchemaPropsOrArray")
PROPS_OR_BOOL = Message("JSONSchemaPropsOrBool")
PROPS_OR_STRINGS = Message("JSONSchemaPropsOrStringArray")
EXTERNAL_DOCS = Message("ExternalDocumentation")
VALIDATION_RULE = Message("ValidationRule")
CRD.define(_1=F("metadata", OBJECT_META), _2=F("spec", CRD_SPEC), _3=F("status", CRD_STATUS))
CRD_SPEC.define(
    _1=F("group", S),
    _3=F("names", CRD_NAMES),
    _4=F("scope", S),
    _7=F("versions", CRD_VERSION, repeated=True),
    _9=F("conversion", CRD_CONVERSION, ptr=True),
    _10=F("preserveUnknownFields", B),
)
CRD_NAMES.define(
    _1=F("plural", S),
    _2=F("singular", S),
    _3=_strings("shortNames"),
    _4=F("kind", S),
    _5=F("listKind", S),
    _6=_strings("categories"),
)
CRD_VERSION.define(
    _1=F("name", S),
    _2=F("served", B),
    _3=F("storage", B),
    _7=F("deprecated", B),
    _8=F("deprecationWarning", S, ptr=True),
    _4=F("schema", CRD_VALIDATION, ptr=True),
    _5=F("subresources", CRD_SUBRESOURCES, ptr=True),
    _6=F("additionalPrinterColumns", CRD_COLUMN, repeated=True),
    _9=F("selectableFields", CRD_SELECTABLE, repeated=True),
)
CRD_VALIDATION.define(_1=F("openAPIV3Schema", PROPS, ptr=True))
CRD_SUBRESOURCES.define(
    _1=F("status", CRD_SUBRESOURCE_STATUS, ptr=True), _2=F("scale", CRD_SCALE, ptr=True)
)
CRD_SCALE.define(
    _1=F("specReplicasPath", S),
    _2=F("statusReplicasPath", S),
    _3=F("labelSelectorPath", S, ptr=True),
)
CRD_COLUMN.define(
    _1=F("name", S),
    _2=F("type", S),
    _3=F("format", S),
    _4=F("description", S),
    _5=F("priority", INT),
    _6=F("jsonPath", S),
)
CRD_SELECTABLE.define(_1=F("jsonPath", S))
CRD_CONVERSION.define(_1=F("strategy", S), _2=F("webhook", WEBHOOK_CONVERSION, ptr=True))
WEBHOOK_CONVERSION.define(
    _2=F("clientConfig", WEBHOOK_CLIENT, ptr=True), _3=_strings("conversionReviewVersions")
)
WEBHOOK_CLIENT.define(
    _3=F("url", S, ptr=True), _1=F("service", SERVICE_REFERENCE, ptr=True), _2=F("caBundle", BY)
)
SERVICE_REFERENCE.define(
    _1=F("namespace", S), _2=F("name", S), _3=F("path", S, ptr=True), _4=F("port", INT, ptr=True)
)
CRD_STATUS.define(
    _1=F("conditions", CRD_CONDITION, repeated=True),
    _2=F("acceptedNames", CRD_NAMES),
    _3=_strings("storedVersions"),
    _4=F("observedGeneration", INT),
)
CRD_CONDITION.define(
    _1=F("type", S),
    _2=F("status", S),
    _3=F("lastTransitionTime", TIME),
    _4=F("reason", S),
    _5=F("message", S),
    _6=F("observedGeneration", INT),
)


def _schema_or_list(decoded: dict[str, object]) -> object:
    return decoded["schema"] if "schema" in decoded else decoded.get("jSONSchemas", [])


def _schema_or_bool(decoded: dict[str, object]) -> object:
    return decoded["schema"] if "schema" in decoded else bool(decoded.get("allows"))


def _schema_or_strings(decoded: dict[str, object]) -> object:
    return decoded["schema"] if "schema" in decoded else decoded.get("property", [])


DOUBLE, JSON = "double", "json"
PROPS.define(
    _1=F("id", S),
    _2=F("$schema", S),
    _3=F("$ref", S, ptr=True),
    _4=F("description", S),
    _5=F("type", S),
    _6=F("format", S),
    _7=F("title", S),
    _8=F("default", JSON, ptr=True),
    _9=F("maximum", DOUBLE, ptr=True),
    _10=F("exclusiveMaximum", B),
    _11=F("minimum", DOUBLE, ptr=True),
    _12=F("exclusiveMinimum", B),
    _13=F("maxLength", INT, ptr=True),
    _14=F("minLength", INT, ptr=True),
    _15=F("pattern", S),
    _16=F("maxItems", INT, ptr=True),
    _17=F("minItems", INT, ptr=True),
    _18=F("uniqueItems", B),
    _19=F("multipleOf", DOUBLE, ptr=True),
    _20=F("enum", JSON, repeated=True),
    _21=F("maxProperties", INT, ptr=True),
    _22=F("minProperties", INT, ptr=True),
    _23=_strings("required"),
    _24=F("items", PROPS_OR_ARRAY, ptr=True, post=_schema_or_list),
    _25=F("allOf", PROPS, repeated=True),
    _26=F("oneOf", PROPS, repeated=True),
    _27=F("anyOf", PROPS, repeated=True),
    _28=F("not", PROPS, ptr=True),
    _29=_map("properties", PROPS),
    _30=F("additionalProperties", PROPS_OR_BOOL, ptr=True, post=_schema_or_bool),
    _31=_map("patternProperties", PROPS),
    _32=F("dependencies", S, map_of=PROPS_OR_STRINGS, post=_schema_or_strings),
    _33=F("additionalItems", PROPS_OR_BOOL, ptr=True, post=_schema_or_bool),
    _34=_map("definitions", PROPS),
    _35=F("externalDocs", EXTERNAL_DOCS, ptr=True),
    _36=F("example", JSON, ptr=True),
    _37=F("nullable", B),
    _38=F("x-kubernetes-preserve-unknown-fields", B, ptr=True),
    _39=F("x-kubernetes-embedded-resource", B),
    _40=F("x-kubernetes-int-or-string", B),
    _41=_strings("x-kubernetes-list-map-keys"),
    _42=F("x-kubernetes-list-type", S, ptr=True),
    _43=F("x-kubernetes-map-type", S, ptr=True),
    _44=F("x-kubernetes-validations", VALIDATION_RULE, repeated=True),
)
PROPS_OR_ARRAY.define(_1=F("schema", PROPS, ptr=True), _2=F("jSONSchemas", PROPS, repeated=True))
PROPS_OR_BOOL.define(_1=F("allows", B), _2=F("schema", PROPS, ptr=True))
PROPS_OR_STRINGS.define(_1=F("schema", PROPS, ptr=True), _2=_strings("property"))
EXTERNAL_DOCS.define(_1=F("description", S), _2=F("url", S))
VALIDATION_RULE.define(
    _1=F("rule", S),
    _2=F("message", S),
    _3=F("messageExpression", S),
    _4=F("reason", S, ptr=True),
    _5=F("fieldPath", S),
    _6=F("optionalOldSelf", B, ptr=True),
)

#: (API group, kind) → message; DeleteOptions comes with any group's apiVersion.
BY_KIND: dict[tuple[str, str], Message] = {
    ("certificates.k8s.io", "CertificateSigningRequest"): CSR,
    ("authorization.k8s.io", "SubjectAccessReview"): ACCESS_REVIEW,
    ("authorization.k8s.io", "SelfSubjectAccessReview"): SELF_ACCESS_REVIEW,
    ("authorization.k8s.io", "SelfSubjectRulesReview"): RULES_REVIEW,
    ("authentication.k8s.io", "TokenRequest"): TOKEN_REQUEST,
    ("authentication.k8s.io", "TokenReview"): TOKEN_REVIEW,
    ("authentication.k8s.io", "SelfSubjectReview"): SELF_SUBJECT_REVIEW,
    ("coordination.k8s.io", "Lease"): LEASE,
    ("rbac.authorization.k8s.io", "ClusterRole"): CLUSTER_ROLE,
    ("rbac.authorization.k8s.io", "Role"): ROLE,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): BINDING,
    ("rbac.authorization.k8s.io", "RoleBinding"): BINDING,
    ("", "ConfigMap"): CONFIGMAP,
    ("", "Secret"): SECRET,
    ("", "Namespace"): NAMESPACE,
    ("", "ServiceAccount"): SERVICE_ACCOUNT,
    ("", "Event"): CORE_EVENT,
    ("", "Node"): NODE,
    ("events.k8s.io", "Event"): EVENT,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): CRD,
}
