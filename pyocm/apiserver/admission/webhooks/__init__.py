"""Admission webhooks: the API server calls the webhooks that
``admissionregistration.k8s.io/v1`` Mutating- and ValidatingWebhookConfigurations
register, on every write they match, as kube-apiserver does.

:mod:`.config` follows the configurations, :mod:`.matching` decides which webhooks a
request calls, :mod:`.review` builds the AdmissionReview and reads the answer,
:mod:`.client` makes the TLS call and :mod:`.plugin` runs them in the admission chain.
"""

from pyocm.apiserver.admission.webhooks.plugin import webhook_plugins

__all__ = ["webhook_plugins"]
