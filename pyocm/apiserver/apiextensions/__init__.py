"""CustomResourceDefinitions: the schema engine behind custom resources.

A served CRD version's ``openAPIV3Schema`` is compiled once and then applied to every
custom resource written or read, in kube-apiserver's order:

* :mod:`.schema` compiles the schema (:class:`CompiledSchema`): patterns, formats and the
  ``x-kubernetes-*`` extensions, prepared once per CRD version;
* :mod:`.pruning` removes fields the schema does not know (:func:`prune`) and reports them
  for ``fieldValidation``;
* :mod:`.defaulting` fills in defaults on writes and reads (:func:`apply_defaults`);
* :mod:`.validation` validates the result (:func:`validate`) with Kubernetes' field paths
  and messages;
* :mod:`.crd_validation` defaults and validates the CustomResourceDefinition objects
  themselves (:func:`default_crd`, :func:`validate_crd`, :func:`validate_crd_update`), with
  :mod:`.crd_schema` checking that each version's schema is structural and its defaults valid.

The modules are pure: no I/O, no storage, no HTTP. Serving (routes, discovery, status
conditions) lives in :mod:`.customresource` and :mod:`.controller`.
"""

from __future__ import annotations

from pyocm.apiserver.apiextensions.crd_validation import (
    default_crd,
    validate_crd,
    validate_crd_update,
)
from pyocm.apiserver.apiextensions.defaulting import apply_defaults
from pyocm.apiserver.apiextensions.pruning import prune
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from pyocm.apiserver.apiextensions.validation import validate

__all__ = [
    "CompiledSchema",
    "apply_defaults",
    "default_crd",
    "prune",
    "validate",
    "validate_crd",
    "validate_crd_update",
]
