"""The server side of the Ray runner: `ToolReplica` (one replica of a family's Serve deployment) and
`start_deployments`, what `python -m costa serve` runs (the client side is `costa.models.ray_runner`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costa.errors import CostaError, InputError, ToolError
from costa.models.deployments import Deployment, is_served
from costa.models.ray_runner import Streamed, app_name
from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolCall, ToolOutput, ToolSpec

#: Requests one replica takes at once when its row batches little (Ray Serve's own default).
DEFAULT_ONGOING = 5


class ToolReplica:
    """One replica of a family's deployment: tools built from the callers' specs, each loaded once, run off the
    replica's event loop (so events stream back while they run, and a cancelled request can set the call's Stop
    flag).

    With `max_batch` > 1, the concurrent calls of a tool whose class batches (`Tool.batches`) are gathered by Ray
    Serve's batch queue (`serve.batch`: up to `max_batch` calls, waiting at most `batch_wait_s` after the first) and
    run as one `Tool.call_batch`, one pass of the model; each caller gets its own output or error. Such a call
    streams no events (the batching tools have no steps).
    """

    def __init__(self, family: str, max_batch: int = 1, batch_wait_s: float = 0.0) -> None:
        from costa.services import Services

        bind_grpc_to_node_address()
        self.family = family
        self.max_batch, self.batch_wait_s = max_batch, batch_wait_s
        #: This machine's settings (COSTA_MODELS_DIR, COSTA_DEVICE) and model cache; its runner is never used here.
        self.services = Services()
        self.counts = {"started": 0, "finished": 0, "failed": 0, "cancelled": 0, "running": 0}
        #: Batches run and the calls in them, and the largest (what `stats` reports of batching).
        self.counts |= {"batches": 0, "batched_calls": 0, "largest_batch": 0}
        self._batchers: dict[str, Callable[[ToolCall], Awaitable[ToolOutput | CostaError]]] = {}

    def _batcher(self, tool: Tool) -> Callable[[ToolCall], Awaitable[ToolOutput | CostaError]]:
        """`tool`'s batch queue on this replica (made on its first call): a call in, its output or error out."""
        found = self._batchers.get(tool.spec.id)
        if found is not None:
            return found
        from ray import serve

        async def run(calls: list[ToolCall]) -> list[ToolOutput | CostaError]:
            self.counts["batches"] += 1
            self.counts["batched_calls"] += len(calls)
            self.counts["largest_batch"] = max(self.counts["largest_batch"], len(calls))
            self.counts["running"] += len(calls)
            try:
                return await asyncio.to_thread(tool.call_batch, calls)
            finally:
                self.counts["running"] -= len(calls)

        batched = serve.batch(max_batch_size=self.max_batch, batch_wait_timeout_s=self.batch_wait_s)(run)
        self._batchers[tool.spec.id] = batched
        return batched

    async def _one_of_a_batch(self, tool: Tool, call: ToolCall) -> ToolOutput:
        """`call` through `tool`'s batch queue; its own error raised as the tool's."""
        self.counts["started"] += 1
        try:
            result = await self._batcher(tool)(call)
        except asyncio.CancelledError:
            self.counts["cancelled"] += 1
            raise
        except BaseException:
            self.counts["failed"] += 1
            raise
        if isinstance(result, CostaError):
            self.counts["failed"] += 1
            raise result
        self.counts["finished"] += 1
        return result

    def _tool(self, spec: ToolSpec) -> Tool:
        if spec.family != self.family:
            raise ToolError(f"the {self.family!r} deployment was sent tool {spec.id!r} of family {spec.family!r}")
        return self.services.tool_for(spec)

    async def missing(self, spec: ToolSpec) -> str | None:
        """Why `spec`'s tool cannot run on this replica's machine, or None."""
        try:
            return self._tool(spec).missing()
        except ImportError as e:
            return f"cannot import its module on the replica: {e}"

    async def load(self, spec: ToolSpec) -> None:
        await asyncio.to_thread(self._tool(spec).ensure_loaded)

    async def stream(
        self, spec: ToolSpec, state: EditState, subtask: Subtask, params: Mapping[str, Any]
    ) -> AsyncIterator[Streamed]:
        """Run the call in a worker thread; yield each event it reports (progress, endpoint requests) as it happens,
        then its output. A cancelled request (Stop, a timeout) sets the call's Stop flag: a tool with steps ends at
        its next step."""
        from costa.models.control import TurnControl, using_control

        tool = self._tool(spec)
        if tool.batches and self.max_batch > 1:
            yield Streamed(output=await self._one_of_a_batch(tool, ToolCall(state, subtask, params)))
            return
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def hand_over(ev: Any) -> None:  # called in the tool's thread: the queue belongs to the event loop
            loop.call_soon_threadsafe(events.put_nowait, ev)

        control = TurnControl(on_event=hand_over)

        def work() -> ToolOutput:
            self.counts["running"] += 1
            try:
                with using_control(control, subtask.id, spec.id, 0):
                    return tool(state, subtask, params)
            finally:
                self.counts["running"] -= 1

        self.counts["started"] += 1
        call = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            while not call.done():
                next_event = asyncio.ensure_future(events.get())
                await asyncio.wait({call, next_event}, return_when=asyncio.FIRST_COMPLETED)
                if next_event.done():
                    yield Streamed(event=next_event.result())
                else:
                    next_event.cancel()
            while not events.empty():
                yield Streamed(event=events.get_nowait())
            output = call.result()  # the tool's own exception, if it raised
        except (asyncio.CancelledError, GeneratorExit):
            control.stop.set()
            self.counts["cancelled"] += 1
            raise
        except BaseException:
            self.counts["failed"] += 1
            raise
        self.counts["finished"] += 1
        yield Streamed(output=output)

    async def call(
        self, spec: ToolSpec, state: EditState, subtask: Subtask, params: Mapping[str, Any]
    ) -> list[Streamed]:
        """`stream`'s items in one answer, for callers that cannot take a streaming request (a Ray client, ray://:
        Serve refuses streaming handles there); a cancelled request sets the call's Stop flag as `stream` does."""
        return [item async for item in self.stream(spec, state, subtask, params)]

    async def worker(self) -> dict[str, Any]:
        """This replica's worker process id and the address its inter-deployment gRPC port binds (for a probe that
        kills the worker, and for the check that nothing listens beyond the node's address)."""
        return {"pid": os.getpid(), "grpc_host": GRPC_HOST.get("host")}

    async def stats(self) -> dict[str, int]:
        """Calls this replica started, finished, failed and had cancelled, and how many still run in its threads
        (a cancelled call's thread runs on until its tool's next step, or its end); batches run, the calls they
        held and the largest."""
        return dict(self.counts)


#: The address `bind_grpc_to_node_address` made this process's replica gRPC server bind (empty until it ran).
GRPC_HOST: dict[str, str] = {}


def bind_grpc_to_node_address() -> str | None:
    """Make this replica's inter-deployment gRPC server bind the address its Ray node advertises (127.0.0.1 on a Ray
    costa starts) instead of every interface; returns that address, or None when Serve's code is not as expected.

    Ray Serve 2.60 hard-codes "[::]:0" for that server (ray/serve/_private/replica.py, `_on_initialized`), with no
    setting or environment variable for it; it starts after the user class is built, so wrapping the module's
    `add_port_to_grpc_server` here, in `ToolReplica.__init__`, reaches it. Handles call replicas through Ray actor
    calls unless RAY_SERVE_USE_GRPC_BY_DEFAULT=1; with it, the callers on other nodes reach this port at the node's
    address, which is still bound. Nothing changes outside a Serve replica's process.
    """
    try:
        import ray
        from ray.serve._private import replica as serve_replica
    except ImportError:
        return None
    original = getattr(serve_replica, "add_port_to_grpc_server", None)
    if original is None:
        return None
    if getattr(original, "costa_bound", False):
        return GRPC_HOST.get("host")
    node = ray.util.get_node_ip_address()
    host = f"[{node}]" if ":" in node else node

    def bound(server: Any, address: str) -> Any:
        if address.startswith("[::]:"):
            address = f"{host}:{address.removeprefix('[::]:')}"
        return original(server, address)

    bound.costa_bound = True  # type: ignore[attr-defined]
    serve_replica.add_port_to_grpc_server = bound
    GRPC_HOST["host"] = node
    return node


@dataclass(frozen=True)
class Started:
    """One deployment `start_deployments` started: its row, the GPUs each replica holds, the tools it serves."""

    row: Deployment
    gpu_fraction: float
    tools: tuple[str, ...]
    #: The most concurrent calls of one tool run in one pass (the row's GPU or CPU batch size; 1: none).
    batch: int = 1

    def line(self) -> str:
        gpu = f"{self.gpu_fraction:g} GPU" if self.gpu_fraction else "no GPU"
        batching = f", batches of up to {self.batch}" if self.batch > 1 else ""
        return (
            f"{app_name(self.row.family)}: {self.row.replicas} replica(s), {gpu} and {self.row.cpus:g} CPU each"
            f"{batching}; serves {', '.join(self.tools)}"
        )


def served_rows(rows: Mapping[str, Deployment], tools: Mapping[str, ToolSpec]) -> dict[Deployment, tuple[str, ...]]:
    """The served rows with at least one ready tool to serve, and those tools' ids (planned families wait)."""
    out: dict[Deployment, tuple[str, ...]] = {}
    for row in rows.values():
        ids = tuple(
            t.id for t in tools.values() if t.family == row.family and t.status == "ready" and is_served(t, rows)
        )
        if row.served and ids:
            out[row] = ids
    return out


def start_deployments(
    rows: Mapping[str, Deployment], tools: Mapping[str, ToolSpec], cpu_only: bool = False
) -> list[Started]:
    """Start (or update) the Serve application of every served family with a ready tool, on the Ray this process
    is connected to (`connect` first); Serve's HTTP proxy stays off, the runner calls the deployments by handle.

    Raises:
        InputError: the rows ask for more GPUs or CPUs than this Ray has (names them, and what to change): Serve
            would otherwise wait for ever for replicas no node can place.
    """
    import ray
    from ray import serve

    wanted = served_rows(rows, tools)
    need = 0.0 if cpu_only else sum(row.gpus for row in wanted)
    have = float(ray.cluster_resources().get("GPU", 0.0))
    if need > have + 1e-9:
        asks = ", ".join(f"{r.family} {r.gpus:g}" for r in wanted if r.gpus)
        raise InputError(
            f"the deployments table asks for {need:g} GPU(s) ({asks}) and this Ray has {have:g}; "
            "start it on a machine with GPUs, or pass --cpu-only to run the served families on CPUs"
        )
    need_cpus = sum(row.replicas * row.cpus for row in wanted)
    have_cpus = float(ray.cluster_resources().get("CPU", 0.0))
    if need_cpus > have_cpus + 1e-9:
        raise InputError(
            f"the deployments table asks for {need_cpus:g} CPU(s) for its replicas and this Ray has {have_cpus:g}; "
            "give a Ray this command starts more (--num-cpus) or lower the table's cpus"
        )
    serve.start(proxy_location="Disabled")
    started = []
    for row, ids in wanted.items():
        gpu = 0.0 if cpu_only else row.gpu_fraction
        options = {"num_cpus": row.cpus, "num_gpus": gpu}
        batch = row.batch(cpu_only)
        # a replica takes at least a full batch at once (Serve's default, 5, would cap a batch of 8 at 5)
        ongoing = max(DEFAULT_ONGOING, 2 * batch)
        deployment: Any = serve.deployment(
            name=row.family, num_replicas=row.replicas, ray_actor_options=options, max_ongoing_requests=ongoing
        )
        app = deployment(ToolReplica).bind(row.family, batch, row.batch_wait_s)
        serve.run(app, name=app_name(row.family), route_prefix=None)
        started.append(Started(row, gpu, ids, batch))
    return started
