"""Hostile request bodies against a real hub: alias bombs, deep nesting, oversized bodies
and patches, media types and duplicate keys. Each is refused with the status
kube-apiserver gives, quickly, and the hub keeps answering everyone else."""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections.abc import AsyncIterator, Iterator

import orjson
import pytest
import pytest_asyncio

from pyocm.testing import Client, HubProcess
from tests.support import eventually

CM = "/api/v1/namespaces/default/configmaps"
CSR = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
YAML = "application/yaml"
LIMIT = 3 * 1024 * 1024
#: Generous: a hang guard, not a timing assertion.
DEADLINE = 60.0
PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


def alias_bomb(levels: int, *, head: str) -> bytes:
    """The "billion laughs": each level is a list of nine aliases of the one before."""
    lines = [head, 'x0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels + 1):
        refs = ",".join(f"*x{level - 1}" for _ in range(9))
        lines.append(f"x{level}: &x{level} [{refs}]")
    return ("\n".join(lines) + "\n").encode()


def nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def cm_yaml(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


@pytest_asyncio.fixture
async def readyz(hub: HubProcess) -> AsyncIterator[list[int]]:
    """Polls /readyz for as long as the test runs; every answer is recorded, and the
    poller fails the test if one does not come within the deadline."""
    answers: list[int] = []
    stop = asyncio.Event()
    async with Client(hub.kubeconfig) as client:

        async def poll() -> None:
            while not stop.is_set():
                code, _ = await asyncio.wait_for(client.get("/readyz"), DEADLINE)
                answers.append(code)
                await asyncio.sleep(0.05)

        task = asyncio.create_task(poll())
        try:
            yield answers
        finally:
            stop.set()
            await task


async def send(
    client: Client, method: str, path: str, raw: bytes, content_type: str, **kw: object
) -> tuple[int, object]:
    return await asyncio.wait_for(
        client.request(method, path, raw=raw, content_type=content_type, **kw),  # type: ignore[arg-type]
        DEADLINE,
    )


async def test_yaml_alias_bomb_is_refused_and_the_hub_stays_ready(
    hub: HubProcess, admin: Client, unique: str, readyz: list[int]
) -> None:
    for levels in (5, 9):
        body = alias_bomb(levels, head=cm_yaml(f"{unique}-{levels}"))
        assert len(body) < 1000
        code, status = await send(admin, "POST", CM, body, YAML)
        assert code == 400, status
        assert isinstance(status, dict) and status["reason"] == "BadRequest"
        assert "yaml: document contains excessive aliasing" in status["message"]
    assert (await admin.get(f"{CM}/{unique}-9"))[0] == 404
    assert readyz and set(readyz) == {200}
    assert hub.proc is not None and hub.proc.poll() is None


async def test_modest_aliasing_is_still_accepted(admin: Client, unique: str) -> None:
    body = (cm_yaml(unique) + "  labels: &l {a: b}\n  annotations: *l\n").encode()
    code, created = await send(admin, "POST", CM, body, YAML)
    assert code == 201, created
    assert isinstance(created, dict)
    assert created["metadata"]["labels"] == created["metadata"]["annotations"] == {"a": "b"}


async def test_a_self_referencing_anchor_is_refused(admin: Client, unique: str) -> None:
    body = (cm_yaml(unique) + "x: &a [*a]\n").encode()
    code, status = await send(admin, "POST", CM, body, YAML)
    assert code == 400, status


async def test_bootstrap_token_holder_cannot_bomb_with_a_csr(
    ocm_hub: HubProcess, unique: str
) -> None:
    """The whole hub, whose bootstrap RBAC lets a token holder create CSRs."""
    token_id, secret = secrets.token_hex(3), secrets.token_hex(8)
    bootstrap = {
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {
            "token-id": token_id,
            "token-secret": secret,
            "usage-bootstrap-authentication": "true",
            "auth-extra-groups": "system:bootstrappers:managedcluster",
        },
    }
    head = (
        f"apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\n"
        f"metadata:\n  name: {unique}\nspec:\n"
        f"  signerName: kubernetes.io/kube-apiserver-client\n"
        f"  request: {base64.b64encode(b'x').decode()}\n  usages: [client auth]"
    )
    async with Client(ocm_hub.kubeconfig) as admin:
        assert (await admin.post("/api/v1/namespaces/kube-system/secrets", bootstrap))[0] == 201
        try:
            async with Client(ocm_hub.token_kubeconfig(unique, f"{token_id}.{secret}")) as client:
                review = {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectAccessReview",
                    "spec": {
                        "resourceAttributes": {
                            "group": "certificates.k8s.io",
                            "verb": "create",
                            "resource": "certificatesigningrequests",
                        }
                    },
                }

                async def may_create() -> bool:
                    code, out = await client.post(
                        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review
                    )
                    return code == 201 and bool(out["status"]["allowed"])

                await eventually(may_create)
                for levels in (5, 9):
                    code, status = await send(
                        client, "POST", CSR, alias_bomb(levels, head=head), YAML
                    )
                    assert code == 400, status
                    assert isinstance(status, dict)
                    assert "document contains excessive aliasing" in status["message"]
            assert (await admin.get("/readyz"))[0] == 200
            assert (await admin.get(f"{CSR}/{unique}"))[0] == 404
        finally:
            await admin.delete(f"/api/v1/namespaces/kube-system/secrets/bootstrap-token-{token_id}")


@pytest.mark.parametrize("content_type", ["application/json", YAML])
async def test_deep_nesting_is_refused(admin: Client, unique: str, content_type: str) -> None:
    body = f'{{"metadata": {{"name": "{unique}"}}, "x": {nested_json(300)}}}'.encode()
    code, status = await send(admin, "POST", CM, body, content_type)
    assert code == 400, status
    assert isinstance(status, dict) and "exceeded max depth" in status["message"]
    assert (await admin.get(f"{CM}/{unique}"))[0] == 404


async def test_ordinary_nesting_is_accepted(admin: Client, unique: str) -> None:
    body = f'{{"metadata": {{"name": "{unique}"}}, "x": {nested_json(40)}}}'.encode()
    code, status = await send(admin, "POST", CM, body, "application/json")
    assert code == 201, status


@pytest.mark.parametrize(
    "content_type", ["application/json", YAML, "application/vnd.kubernetes.protobuf"]
)
async def test_oversized_bodies_get_413(admin: Client, content_type: str) -> None:
    code, status = await send(admin, "POST", CM, b" " * (LIMIT + 1), content_type)
    assert code == 413, status
    assert isinstance(status, dict) and status["reason"] == "RequestEntityTooLarge"


async def test_oversized_chunked_body_gets_413(admin: Client) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(4):
            yield b" " * (1024 * 1024)

    async with admin.session.post(
        CM, data=chunks(), ssl=admin._ssl, headers={"Content-Type": "application/json"}
    ) as resp:
        assert resp.status == 413


@pytest_asyncio.fixture
async def configmap(admin: Client, unique: str) -> dict[str, object]:
    code, created = await admin.post(CM, {"metadata": {"name": unique}, "data": {"a": "b"}})
    assert code == 201
    assert isinstance(created, dict)
    return created


def deep_patch(kind: str) -> bytes:
    deep = nested_json(300)
    if kind == "json":
        return f'[{{"op": "add", "path": "/x", "value": {deep}}}]'.encode()
    if kind == "apply":
        return f'{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "N"}}, "x": {deep}}}'.encode()
    return f'{{"x": {deep}}}'.encode()


@pytest.mark.parametrize("kind", list(PATCH_TYPES))
async def test_patch_bodies_are_bounded_like_any_body(
    admin: Client, configmap: dict[str, object], kind: str
) -> None:
    name = configmap["metadata"]["name"]  # type: ignore[index]
    path = f"{CM}/{name}"
    params = {"fieldManager": "fuzz"}
    code, status = await send(
        admin,
        "PATCH",
        path,
        deep_patch(kind).replace(b'"N"', f'"{name}"'.encode()),
        PATCH_TYPES[kind],
        params=params,
    )
    assert code == 400, status
    assert isinstance(status, dict) and "exceeded max depth" in status["message"]
    code, status = await send(
        admin, "PATCH", path, b" " * (LIMIT + 1), PATCH_TYPES[kind], params=params
    )
    assert code == 413, status
    code, current = await admin.get(path)
    assert code == 200 and isinstance(current, dict)
    assert current["metadata"]["resourceVersion"] == configmap["metadata"]["resourceVersion"]  # type: ignore[index]


async def test_apply_patch_alias_bomb_is_refused(
    admin: Client, configmap: dict[str, object]
) -> None:
    name = configmap["metadata"]["name"]  # type: ignore[index]
    code, status = await send(
        admin,
        "PATCH",
        f"{CM}/{name}",
        alias_bomb(5, head=cm_yaml(str(name))),
        PATCH_TYPES["apply"],
        params={"fieldManager": "fuzz"},
    )
    assert code == 400, status
    assert isinstance(status, dict) and "document contains excessive aliasing" in status["message"]


async def test_json_patch_copies_are_bounded(admin: Client, unique: str) -> None:
    big = "v" * (512 * 1024)
    assert (await admin.post(CM, {"metadata": {"name": unique}, "data": {"a": big}}))[0] == 201
    ops = [{"op": "copy", "from": "/data/a", "path": f"/data/b{i}"} for i in range(8)]
    code, status = await send(
        admin, "PATCH", f"{CM}/{unique}", orjson.dumps(ops), PATCH_TYPES["json"]
    )
    assert code == 422, status
    assert isinstance(status, dict)
    assert status["message"].startswith(
        "Unable to complete the copy, the accumulated size increase of copy is "
    )
    assert status["message"].endswith(f", exceeding the limit {LIMIT}")
    code, current = await admin.get(f"{CM}/{unique}")
    assert code == 200 and list(current["data"]) == ["a"]  # type: ignore[index]


@pytest.mark.parametrize("content_type", ["text/plain", "*/*", "application/x-www-form-urlencoded"])
async def test_unknown_media_type_on_a_write_is_415(
    admin: Client, unique: str, content_type: str
) -> None:
    body = orjson.dumps({"metadata": {"name": unique}})
    code, status = await send(admin, "POST", CM, body, content_type)
    assert code == 415, status
    assert isinstance(status, dict) and status["reason"] == "UnsupportedMediaType"
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert (await admin.get(f"{CM}/{unique}"))[0] == 404


async def test_unknown_media_type_on_a_patch_is_415(
    admin: Client, configmap: dict[str, object]
) -> None:
    name = configmap["metadata"]["name"]  # type: ignore[index]
    code, status = await send(admin, "PATCH", f"{CM}/{name}", b"{}", "text/plain")
    assert code == 415, status
    assert isinstance(status, dict) and status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )


DUPLICATED = b'{"metadata": {"name": "N", "labels": {"a": "1", "a": "2"}}, "data": {"k": "v"}, "data": {"k": "w"}}'


async def test_duplicate_json_keys_under_strict_are_refused(admin: Client, unique: str) -> None:
    body = DUPLICATED.replace(b'"N"', f'"{unique}"'.encode())
    code, status = await send(
        admin, "POST", CM, body, "application/json", params={"fieldValidation": "Strict"}
    )
    assert code == 400, status
    assert isinstance(status, dict) and status["message"] == (
        'strict decoding error: duplicate field "a", duplicate field "data"'
    )
    assert (await admin.get(f"{CM}/{unique}"))[0] == 404


async def test_duplicate_json_keys_under_warn_are_warnings(admin: Client, unique: str) -> None:
    body = DUPLICATED.replace(b'"N"', f'"{unique}"'.encode())
    async with admin.session.post(
        CM,
        data=body,
        params={"fieldValidation": "Warn"},
        ssl=admin._ssl,
        headers={"Content-Type": "application/json"},
    ) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == [
            '299 - "duplicate field \\"a\\""',
            '299 - "duplicate field \\"data\\""',
        ]
        created = orjson.loads(await resp.read())
    assert created["data"] == {"k": "w"}, "the last value wins, as in Go"


async def test_duplicate_yaml_keys_under_strict_are_refused(admin: Client, unique: str) -> None:
    body = (cm_yaml(unique) + "data:\n  k: v\n  k: w\n").encode()
    code, status = await send(admin, "POST", CM, body, YAML, params={"fieldValidation": "Strict"})
    assert code == 400, status
    assert isinstance(status, dict)
    assert status["message"] == 'strict decoding error: line 7: key "k" already set in map'


#: Aliases of one 1 MB scalar: about 1 GB once expanded, from a body of about 1 MB.
LARGE_ALIASES = 1000


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def fresh_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A hub of its own, so that its peak memory is this module's doing alone."""
    data = tmp_path_factory.mktemp("alias-hub")
    with HubProcess(data, extra_args=["--no-controllers"]) as process:
        yield process


async def test_aliases_of_a_large_scalar_are_refused_before_they_are_expanded(
    fresh_hub: HubProcess, unique: str
) -> None:
    """go-yaml's ratio counts nodes, not bytes: aliases of one large string pass it. The
    expanded document is measured before anything is built and refused as the body
    over the limit it stands for, without the hub ever holding it."""
    assert fresh_hub.proc is not None
    scalar = "v" * (1024 * 1024)
    async with Client(fresh_hub.kubeconfig) as admin:
        # The same work short of the bomb first: a 1 MB YAML body aliased once, accepted
        # (the unknown fields are dropped, with a warning).
        modest = f"{cm_yaml(unique)}x: &a {scalar}\ny: *a\n".encode()
        code, _ = await send(admin, "POST", CM, modest, YAML)
        assert code == 201, code
        baseline = _peak_rss(fresh_hub.proc.pid)
        refs = ", ".join(["*a"] * LARGE_ALIASES)
        bomb = f"{cm_yaml(unique + '-bomb')}x: &a {scalar}\ny: [{refs}]\n".encode()
        assert len(bomb) < LIMIT
        code, status = await send(admin, "POST", CM, bomb, YAML)
        assert code == 413, status
        assert isinstance(status, dict) and status["reason"] == "RequestEntityTooLarge"
        assert status["message"] == f"Request entity too large: limit is {LIMIT}"
        grown = _peak_rss(fresh_hub.proc.pid) - baseline
        # Expanded, it would be LARGE_ALIASES MB; refused unexpanded, it costs about
        # what the accepted body did.
        assert grown < 48 * 1024 * 1024, f"peak memory grew by {grown >> 20} MiB"
        assert (await admin.get("/readyz"))[0] == 200


def _nested_yaml(depth: int, inner: str) -> str:
    return "[" * depth + inner + "]" * depth


async def test_an_alias_that_nests_past_the_depth_limit_is_bad_request(
    admin: Client, unique: str
) -> None:
    """The anchored value (190 deep) is within the limit, and so is the place of its
    alias (190 deep): together they nest 380 deep, past the limit and past what the
    hub can encode (a 500 before). Refused as any too-deep body: 400."""
    anchored = _nested_yaml(190, "")
    body = f"{cm_yaml(unique)}x: &a {anchored}\ny: {_nested_yaml(190, '*a')}\n".encode()
    code, status = await send(admin, "POST", CM, body, YAML)
    assert code == 400, status
    assert isinstance(status, dict) and status["reason"] == "BadRequest"
    assert "exceeded max depth of 200" in status["message"]
    # At the limit exactly it decodes (then fails validation as a ConfigMap: not 400).
    at_limit = f"{cm_yaml(unique)}x: &a {_nested_yaml(98, '')}\ny: {_nested_yaml(100, '*a')}\n"
    code, status = await send(admin, "POST", CM, at_limit.encode(), YAML)
    assert code != 400 and code < 500, status


async def test_a_json_patch_copy_of_a_value_nested_by_earlier_operations_is_422(
    admin: Client, configmap: dict[str, object]
) -> None:
    """Two adds nest a value 380 deep (each within the limit); a copy of it then cannot
    even be measured. Refused as the patch that does not apply (422), not a 500."""
    name = configmap["metadata"]["name"]  # type: ignore[index]
    deep: object = {}
    for _ in range(190):
        deep = {"a": deep}
    ops = [
        {"op": "add", "path": "/x", "value": deep},
        {"op": "add", "path": "/x" + "/a" * 189, "value": deep},
        {"op": "copy", "from": "/x", "path": "/y"},
    ]
    code, status = await send(
        admin, "PATCH", f"{CM}/{name}", orjson.dumps(ops), PATCH_TYPES["json"]
    )
    assert code == 422, status
    assert isinstance(status, dict) and status["reason"] == "Invalid"
    assert "exceeded max depth of 200" in status["message"]
    code, current = await admin.get(f"{CM}/{name}")
    assert code == 200 and isinstance(current, dict)
    assert current["metadata"]["resourceVersion"] == configmap["metadata"]["resourceVersion"]  # type: ignore[index]
