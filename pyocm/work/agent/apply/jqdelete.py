"""``del(<expression>)`` of one object with jq, for ``ignoreFields.jqPathExpressions``.

Upstream runs jq (gojq) in process with a one-second deadline. The jq library here is C
code that Python cannot interrupt, so each evaluation runs in a small child process
(only ``jq`` and ``json`` imported) whose evaluation is ended by ``SIGALRM`` after one
second: an expression that never ends costs a second, not the agent. Only manifests
with ``jqPathExpressions`` pay for the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from typing import Any, Final

from pyocm.work.agent.apply.errors import IgnoreFieldError

#: Upstream's ``DefaultJQExecutionTimeout``, in seconds.
TIMEOUT_SECONDS: Final = 1
#: How long the child may take in all (interpreter start included) before it is killed.
_CHILD_DEADLINE: Final = 30.0

# The child: reads {"object", "expression"} on stdin, answers {"result"} or {"error"} in
# upstream's words. The alarm's default action ends the process mid-evaluation.
_CHILD: Final = """
import json, signal, sys
import jq
job = json.load(sys.stdin)
try:
    program = jq.compile("del(" + job["expression"] + ")")
except ValueError as err:
    answer = {"error": "failed to parse jq expression: " + str(err)}
else:
    signal.alarm(TIMEOUT)
    try:
        results = program.input_value(job["object"]).all()
    except ValueError as err:
        answer = {"error": "jq expression returned error: " + str(err)}
    else:
        if not results:
            answer = {"error": "jq expression did not return any data"}
        elif len(results) > 1:
            answer = {"error": "jq expression returned multiple objects"}
        elif not isinstance(results[0], dict):
            answer = {"error": "jq expression result is not a valid object"}
        else:
            answer = {"result": results[0]}
    signal.alarm(0)
json.dump(answer, sys.stdout)
""".replace("TIMEOUT", str(TIMEOUT_SECONDS))


async def jq_delete(obj: dict[str, Any], expression: str) -> dict[str, Any]:
    """``obj`` with what ``expression`` points at deleted; IgnoreFieldError worded as
    upstream's when the expression does not parse, fails, runs over a second or yields
    anything but one object."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CHILD,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    job = json.dumps({"object": obj, "expression": expression}).encode()
    timed_out = _error(expression, f"jq expression execution timed out after {TIMEOUT_SECONDS}s")
    try:
        out, _ = await asyncio.wait_for(process.communicate(job), timeout=_CHILD_DEADLINE)
    except TimeoutError:
        raise timed_out from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode == -signal.SIGALRM:
        raise timed_out
    if process.returncode != 0:
        raise _error(expression, f"jq evaluation failed (exit status {process.returncode})")
    answer = json.loads(out)
    if "error" in answer:
        raise _error(expression, str(answer["error"]))
    result: dict[str, Any] = answer["result"]
    return result


def _error(expression: str, why: str) -> IgnoreFieldError:
    return IgnoreFieldError(f"JQ expression error in '{expression}': {why}")
