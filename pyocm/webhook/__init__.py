"""``pyocm webhook``: OCM's admission and conversion webhooks for a real kube-apiserver.

The rules are :mod:`pyocm.hooks`, the same a pyocm hub applies in-process; here they
answer AdmissionReviews (and ConversionReviews on ``/convert``) over TLS, ask
SubjectAccessReviews of the hub for their permission checks, and read Namespaces and
ManagedClusters through the hub's API, as upstream's webhooks do.
"""
