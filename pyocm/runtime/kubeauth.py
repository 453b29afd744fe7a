"""A kubeconfig's credentials for requests that do not go through httpx.

lightkube turns a kubeconfig user into an httpx ``Auth``: a bearer token, a token file
re-read after a 401, an exec plugin run again after a 401, or basic auth. :class:`Login`
drives that same ``Auth`` flow with a stand-in request and hands out the resulting
``Authorization`` header, so every credential lightkube understands works unchanged
under :class:`~pyocm.runtime.client.Api`'s aiohttp transport.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2

_STAND_IN = "https://kubernetes.invalid/"


class Login:
    """One request's pass through the ``Auth`` flow: :meth:`headers` for the first try,
    :meth:`retry_after_401` for a second one when the flow has a fresher credential."""

    def __init__(self, auth: httpx2.Auth | None) -> None:
        self._auth = auth
        self._request: httpx2.Request | None = None
        self._flow: AsyncGenerator[httpx2.Request, httpx2.Response] | None = None

    async def headers(self) -> dict[str, str]:
        if self._auth is None:
            return {}
        self._request = httpx2.Request("GET", _STAND_IN)
        self._flow = self._auth.async_auth_flow(self._request)
        return _authorization(await self._flow.__anext__())

    async def retry_after_401(self) -> dict[str, str] | None:
        """The headers to send again with, or None when the flow has nothing better."""
        if self._flow is None or self._request is None:
            return None
        try:
            sent = await self._flow.asend(httpx2.Response(401, request=self._request))
        except StopAsyncIteration:
            self._flow = None
            return None
        return _authorization(sent)

    async def close(self) -> None:
        if self._flow is not None:
            await self._flow.aclose()
            self._flow = None


def _authorization(request: httpx2.Request) -> dict[str, str]:
    value = request.headers.get("Authorization")
    return {"Authorization": value} if value else {}
