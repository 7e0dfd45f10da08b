"""Tool calls on Ray Serve: `RayRunner` (COSTA_RUNNER=ray or ray://HOST:PORT) and the deployments it calls.

Each tool family that tool_tables/deployments.csv serves is one Serve application named `costa-<family>` with one
deployment, `<family>`, whose replicas (`costa.models.replica.ToolReplica`, the server side, started by `python -m
costa serve`) build the family's tools from the specs their callers send and load each model once per replica, on
first use. The runner connects to that Ray and sends each call of a served tool to its family's deployment; every
other tool (embedded families, and api tools in any family) runs here as with `InProcessRunner`.

The contract is `InProcessRunner`'s: the output is the same `ToolOutput`, and every way a remote call can go wrong —
the tool raised there, no answer within COSTA_RUNNER_TIMEOUT seconds (the request is then cancelled), the replica or
its worker died, Ray cannot be reached — is a `ToolError` of one sentence that the search records and routes around.
A `ToolError` the tool itself raised remotely (`GroundingError` with its advice) comes back as itself. Stop cancels
the Serve request: the replica's call sees its own Stop flag, so a tool with steps (diffusion) ends at its next step.
The events a remote call reports (diffusion progress, endpoint requests) stream back as they happen (a streaming
Serve request) and reach the turn as if the tool ran here — except through a Ray client (ray://HOST:PORT), where
Serve refuses streaming handles: there each call is one unary request and its events reach the turn when it ends.

Ray is imported only here, and only when a runner or `start_deployments` first needs it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costa.errors import ToolError
from costa.models.deployments import IN_PROCESS, Deployment, is_served
from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolOutput, ToolSpec

log = logging.getLogger(__name__)

#: The runner name of calls sent to a Serve deployment.
RAY = "ray"
#: The only address a Ray this module starts advertises; Ray's dashboard and Serve's HTTP proxy are not started.
LOOPBACK = "127.0.0.1"
#: Ray's own single-machine switch (its default on macOS and Windows): with it a Ray started here advertises and
#: binds 127.0.0.1 instead of the machine's routable address. Read when `ray` is first imported, and inherited by
#: the processes Ray starts. (Serve's per-replica inter-deployment gRPC port, which Ray Serve hard-codes to "[::]:0",
#: is bound to the node's address by `costa.models.replica.bind_grpc_to_node_address`.)
SINGLE_MACHINE_ENV = ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
#: Ray 2.60's token authentication: a cluster started by `ray start` requires the token (~/.ray/auth_token, or
#: RAY_AUTH_TOKEN), but a Ray client (ray://) sends it only when RAY_AUTH_MODE=token is set: without it, the client
#: waits 30 s and fails with "ray client connection timeout". `connect` sets it for a ray:// address when a token is
#: there and RAY_AUTH_MODE is not set (RAY_AUTH_MODE=disabled keeps it off).
AUTH_MODE_ENV = "RAY_AUTH_MODE"
#: How often a waiting call looks at the turn's Stop flag and its deadline, in seconds.
POLL_SECONDS = 0.05
#: Longest wait for a replica's readiness answer (`missing`), in seconds: doctor and graph building must not hang.
PROBE_SECONDS = 30.0
#: After Ray could not be reached, how long that answer is reused before trying again, in seconds.
RETRY_CONNECT_SECONDS = 10.0


@dataclass(frozen=True)
class Streamed:
    """One item a replica's call streams back: an event the tool reported while it ran, or (last) its output."""

    event: Any = None  # a costa.events.Event
    output: ToolOutput | None = None


def app_name(family: str) -> str:
    """The Serve application that serves `family` (its one deployment is named `family`)."""
    return f"costa-{family}"


def connect(address: str | None, start: bool = False, num_cpus: int | None = None) -> bool:
    """Connect this process to Ray: `address` (ray://HOST:PORT), else the Ray running on this machine; when none
    runs and `start`, start one here on 127.0.0.1 without a dashboard. True when this call started it.

    Raises:
        ToolError: no Ray to connect to (and not `start`), or Ray refused the connection; one sentence.
    """
    import os
    import sys

    if address is None and "ray" not in sys.modules:
        os.environ.setdefault(*SINGLE_MACHINE_ENV)  # before the first import of ray (see SINGLE_MACHINE_ENV)
    if address is not None and AUTH_MODE_ENV not in os.environ and has_token():
        os.environ[AUTH_MODE_ENV] = "token"  # see AUTH_MODE_ENV
    import ray

    if ray.is_initialized():
        return False
    try:
        if address is not None:
            ray.init(address=address, log_to_driver=False)
            return False
        try:
            ray.init(address="auto", log_to_driver=False)
            return False
        except ConnectionError:
            if not start:
                raise
        if os.environ.get(SINGLE_MACHINE_ENV[0]) != SINGLE_MACHINE_ENV[1]:
            log.warning(
                "ray was imported before costa set %s=%s: this Ray advertises the machine's address",
                *SINGLE_MACHINE_ENV,
            )
        ray.init(include_dashboard=False, _node_ip_address=LOOPBACK, num_cpus=num_cpus, log_to_driver=False)
        return True
    except (ConnectionError, ray.exceptions.RayError, ValueError, RuntimeError) as e:
        where = address or "this machine"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ToolError(f"cannot reach Ray on {where} ({first}); `python -m costa serve` starts one") from e


def has_token() -> bool:
    """Whether a Ray authentication token is there for a client to send (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or
    ~/.ray/auth_token)."""
    import os
    from pathlib import Path

    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token"
    return Path(path).is_file()


# -------------------------------------------------------------------------------------------------------- runner


class RayRunner:
    """Runs the calls of served families on their Serve deployments, everything else here (see the module doc).

    rows: the deployments table (`costa.models.deployments.load_deployments`).
    address: a Ray cluster's client address (ray://HOST:PORT); None = the Ray running on this machine.
    timeout_seconds: longest one remote call (or model load) may take; then it is cancelled and fails.
    """

    def __init__(self, rows: Mapping[str, Deployment], address: str | None = None, timeout_seconds: float = 600.0):
        self.rows = rows
        self.address = address
        self.timeout_seconds = timeout_seconds
        self._handles: dict[str, Any] = {}
        self._unreachable: tuple[float, str] | None = None
        self._lock = threading.Lock()

    @property
    def target(self) -> str:
        """Where the runner sends calls, in words."""
        return self.address or f"the Ray running on this machine ({LOOPBACK})"

    def where(self, spec: ToolSpec) -> str:
        return RAY if is_served(spec, self.rows) else IN_PROCESS

    def _handle(self, family: str) -> Any:
        """The deployment handle of `family` (connecting first). Raises `ToolError` when Ray or the app is not there."""
        with self._lock:
            handle = self._handles.get(family)
            if handle is not None:
                return handle
            if self._unreachable is not None and time.monotonic() - self._unreachable[0] < RETRY_CONNECT_SECONDS:
                raise ToolError(self._unreachable[1])
            try:
                connect(self.address)
                from ray import serve

                apps = serve.status().applications
            except ToolError as e:
                self._unreachable = (time.monotonic(), str(e))
                raise
            except Exception as e:  # Serve's own errors when it is not running: one sentence
                why = f"Ray Serve is not running on {self.target} ({type(e).__name__}); `python -m costa serve`"
                self._unreachable = (time.monotonic(), why)
                raise ToolError(why) from e
            self._unreachable = None
            app = apps.get(app_name(family))
            if app is None or str(getattr(app.status, "value", app.status)) != "RUNNING":
                state = "not running" if app is None else f"{getattr(app.status, 'value', app.status)}".lower()
                raise ToolError(
                    f"Ray Serve deployment {app_name(family)!r} is {state} on {self.target}; "
                    "`python -m costa serve` starts it"
                )
            handle = serve.get_deployment_handle(family, app_name(family))
            self._handles[family] = handle
            return handle

    def _forget(self, family: str) -> None:
        with self._lock:
            self._handles.pop(family, None)

    def reachable(self) -> tuple[bool, str]:
        """Whether Ray answers and which served families' applications run there, in words (for `costa doctor`)."""
        try:
            connect(self.address)
            from ray import serve

            apps = serve.status().applications
        except ToolError as e:
            return False, str(e)
        except Exception as e:  # Serve not started on a reachable Ray
            return False, f"Ray answers on {self.target} but Ray Serve is not running ({type(e).__name__})"
        running = sorted(f for f in self.rows if self.rows[f].served and app_name(f) in apps)
        return True, f"Ray answers on {self.target}; deployments running: {', '.join(running) or 'none'}"

    def missing(self, tool: Tool) -> str | None:
        if not is_served(tool.spec, self.rows):
            return tool.missing()
        try:
            handle = self._handle(tool.spec.family)
            return self._wait(handle.missing.remote(tool.spec), tool.spec, min(PROBE_SECONDS, self.timeout_seconds))
        except ToolError as e:
            return str(e)

    def load(self, tool: Tool) -> None:
        if not is_served(tool.spec, self.rows):
            tool.ensure_loaded()
            return
        handle = self._handle(tool.spec.family)
        self._wait(handle.load.remote(tool.spec), tool.spec, self.timeout_seconds)

    def run(self, tool: Tool, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        spec = tool.spec
        if not is_served(spec, self.rows):
            return tool(state, subtask, params)
        if self.address is not None:  # a Ray client: Serve has no streaming handles there, the events come at the end
            items = self._wait(self._handle(spec.family).call.remote(spec, state, subtask, dict(params)), spec,
                               self.timeout_seconds)  # fmt: skip
            return self._replay(items, spec)
        handle = self._handle(spec.family).options(stream=True)
        return self._drain(handle.stream.remote(spec, state, subtask, dict(params)), spec, self.timeout_seconds)

    def _replay(self, items: list[Streamed], spec: ToolSpec) -> ToolOutput:
        """The output of a unary call's items, reporting their events to the turn first."""
        from costa.models.control import report

        for item in items:
            if item.event is not None:
                report(item.event)
        output = next((item.output for item in items if item.output is not None), None)
        if output is None:
            raise ToolError(f"{spec.id}: its {app_name(spec.family)} replica returned no output")
        return output

    def _drain(self, stream: Any, spec: ToolSpec, timeout: float) -> ToolOutput:
        """The streamed call's output, reporting its events to the turn as they arrive; Stop, the deadline and every
        Ray failure as in `_wait`. A daemon thread iterates the stream (Serve's iterator has no timeout of its own);
        cancelling the request ends it."""
        from costa.models.control import report

        items: queue.Queue[tuple[Streamed | None, BaseException | None]] = queue.Queue()

        def pump() -> None:
            try:
                for item in stream:
                    items.put((item, None))
                items.put((None, None))
            except BaseException as e:  # handed to the waiting call
                items.put((None, e))

        threading.Thread(target=pump, name=f"costa-ray-{spec.id}", daemon=True).start()
        output: ToolOutput | None = None
        deadline = time.monotonic() + timeout
        while True:
            left = self._check(stream, spec, timeout, deadline)
            try:
                item, error = items.get(timeout=min(POLL_SECONDS, left))
            except queue.Empty:
                continue
            if error is not None:
                raise self._failure(error, spec) from None
            if item is None:
                if output is None:
                    raise ToolError(f"{spec.id}: its {app_name(spec.family)} replica returned no output")
                return output
            if item.event is not None:
                report(item.event)
            if item.output is not None:
                output = item.output

    def _check(self, response: Any, spec: ToolSpec, timeout: float, deadline: float) -> float:
        """Seconds left before `deadline`; cancels `response` and raises when the turn was stopped or none are left.

        Raises:
            ToolStoppedError: the turn's Stop was pressed.
            ToolError: the deadline passed (COSTA_RUNNER_TIMEOUT).
        """
        from costa.models.control import ToolStoppedError, current_control

        control = current_control()
        if control is not None and control.stopped():
            response.cancel()
            raise ToolStoppedError(f"stopped by the user; the {app_name(spec.family)} request was cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            response.cancel()
            raise ToolError(
                f"no answer from Ray Serve deployment {app_name(spec.family)!r} within {timeout:g} s "
                "(COSTA_RUNNER_TIMEOUT); the request was cancelled"
            )
        return left

    def _wait(self, response: Any, spec: ToolSpec, timeout: float) -> Any:
        """The unary response's result, watching the turn's Stop flag and the deadline (`_check`).

        Raises:
            ToolStoppedError: the turn was stopped (the request is cancelled).
            ToolError: the tool's own error, or one sentence for a remote exception, a timeout, a dead replica.
        """
        deadline = time.monotonic() + timeout
        while True:
            left = self._check(response, spec, timeout, deadline)
            try:
                return response.result(timeout_s=min(POLL_SECONDS, left))
            except TimeoutError:  # ray's GetTimeoutError is one: the call is still running
                continue
            except Exception as e:
                raise self._failure(e, spec) from None

    def _failure(self, error: BaseException, spec: ToolSpec) -> BaseException:
        """What a Ray failure of `spec`'s call is to the search: the tool's own `ToolError`, or one sentence."""
        import ray
        from ray.serve.exceptions import RayServeException

        family = app_name(spec.family)
        if isinstance(error, ray.exceptions.RayTaskError):
            cause = getattr(error, "cause", None)
            if isinstance(cause, ToolError):  # the tool's own recorded failure, advice and all
                return cause
            what = type(cause).__name__ if cause is not None else "an error"
            text = str(cause).strip().splitlines()[0] if cause is not None and str(cause).strip() else ""
            return ToolError(f"{spec.id} raised {what} on its {family} replica" + (f": {text}" if text else ""))
        if isinstance(
            error, ray.exceptions.RayActorError | ray.exceptions.WorkerCrashedError | ray.exceptions.NodeDiedError
        ):
            self._forget(spec.family)
            return ToolError(
                f"the {family} replica running {spec.id} died during the call ({type(error).__name__});"
                " Serve starts a new one"
            )
        if isinstance(error, ray.exceptions.TaskCancelledError):  # cancelled elsewhere (Serve shutting the app down)
            return ToolError(f"the {family} request for {spec.id} was cancelled by Ray")
        if isinstance(error, ray.exceptions.RayError | RayServeException):
            self._forget(spec.family)
            return ToolError(f"Ray could not run {spec.id} on {family!r} ({type(error).__name__})")
        return error  # not Ray's: a bug in costa, raised as it is
