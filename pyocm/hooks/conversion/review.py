"""A ConversionReview answered with pyocm's converters: what a conversion webhook serving
a real kube-apiserver (as upstream's ``cluster-manager-addon-webhook`` ``/convert`` does)
would return for a request.

kube-apiserver sends ``apiextensions.k8s.io/v1`` (or ``v1beta1``) ConversionReviews with
``request.uid``, ``request.desiredAPIVersion`` and ``request.objects``; the answer carries
the same uid, the converted objects in order and ``result.status`` ``Success``, or
``Failure`` with a message and no objects (controller-runtime's ``errored``).
"""

from __future__ import annotations

from typing import Any

from pyocm.hooks.conversion import ConversionError, convert

Obj = dict[str, Any]
REVIEW_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


def review(document: Obj) -> Obj:
    """The ConversionReview answering ``document``. Raises ValueError for a document
    that is no ConversionReview request (a webhook answers 400 then)."""
    if document.get("kind") != "ConversionReview" or document.get("apiVersion") not in (
        REVIEW_VERSIONS
    ):
        raise ValueError("not a ConversionReview")
    request = document.get("request")
    if not isinstance(request, dict):
        raise ValueError("conversion request is nil")
    uid = request.get("uid", "")
    try:
        converted = _convert_all(request)
        response: Obj = {
            "uid": uid,
            "convertedObjects": converted,
            "result": {"status": "Success"},
        }
    except ConversionError as err:
        response = {"uid": uid, "result": {"status": "Failure", "message": str(err)}}
    return {"apiVersion": document["apiVersion"], "kind": "ConversionReview", "response": response}


def _convert_all(request: Obj) -> list[Obj]:
    group, _, version = str(request.get("desiredAPIVersion") or "").rpartition("/")
    out = []
    for obj in request.get("objects") or []:
        if not isinstance(obj, dict):
            raise ConversionError("an object to convert is not a JSON object")
        own_group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        if own_group != group:
            raise ConversionError(
                f"{obj.get('apiVersion')} {obj.get('kind')} cannot be converted to "
                f"{request.get('desiredAPIVersion')}: the groups differ"
            )
        out.append(convert(obj, version))
    return out
