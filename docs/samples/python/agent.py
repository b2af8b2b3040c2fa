"""A Python workflow that drives durable-browser by activity name.

It opens a browser (browser.create on the shared queue), then schedules every
browser call on the session's host queue with the options of its replay class,
and handles session_replaced and effect_unknown as docs/cross-language.md says.

    pip install temporalio
    python3 agent.py --address 127.0.0.1:7233 --site http://127.0.0.1:8380

It runs its own worker (task queue py-browser-agent) for its workflow; the
browser activities run on durable-browser workers. It prints the page title
and exits 0.
"""

import argparse
import asyncio
import uuid
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, TimeoutType
from temporalio.worker import Worker

SHARED_QUEUE = "durable-browser"
NON_RETRYABLE = [
    "refused", "stale_snapshot", "session_ended", "session_replaced", "effect_unknown",
    "code_error", "not_content", "blocked", "auth", "waiting_for_human",
]


def options(cls: str, queue: str, hosted: bool) -> dict:
    """The activity options of a replay class (workflows.ActivityOptions in Go)."""
    o = dict(
        task_queue=queue,
        heartbeat_timeout=timedelta(seconds=10),
        # A host queue nobody polls means its worker is gone: give up fast.
        schedule_to_start_timeout=timedelta(seconds=10 if hosted else 30),
    )
    if cls == "effect":  # run, browser_upload: at most once
        o.update(start_to_close_timeout=timedelta(minutes=5), retry_policy=RetryPolicy(maximum_attempts=1))
    elif cls in ("custody", "human"):  # create, release, reconcile, notify: idempotent by tag
        o.update(start_to_close_timeout=timedelta(minutes=2), retry_policy=RetryPolicy(
            initial_interval=timedelta(seconds=1), backoff_coefficient=2, maximum_interval=timedelta(seconds=10),
            maximum_attempts=4, non_retryable_error_types=NON_RETRYABLE))
    else:  # read: snapshot, screenshot, browser_read, downloads, web_fetch, web_search
        o.update(start_to_close_timeout=timedelta(seconds=60), retry_policy=RetryPolicy(
            initial_interval=timedelta(milliseconds=500), backoff_coefficient=2, maximum_interval=timedelta(seconds=5),
            maximum_attempts=3, non_retryable_error_types=NON_RETRYABLE))
    return o


def fail(code: str, message: str, effect: str = "none") -> dict:
    return {"ok": False, "code": code, "retryable": False, "effect": effect, "message": message}


@workflow.defn(name="PyBrowserAgent")
class PyBrowserAgent:
    def __init__(self) -> None:
        self.seq = 0
        self.session: dict = {}
        self.policy = "allow"

    async def open(self) -> None:
        # The tag names the browser: <workflow id>-<n>; creating twice with one tag gives one browser.
        self.seq += 1
        res = await workflow.execute_activity(
            "browser.create",
            {"tag": f"{workflow.info().workflow_id}-{self.seq}", "options": {"provider": "local", "action_policy": self.policy}},
            **options("custody", SHARED_QUEUE, False))
        self.session = res["session"]

    async def call(self, activity: str, cls: str, args: dict) -> dict:
        """One browser call: its result, or a failure envelope (a dict with ok false)."""
        try:
            return await workflow.execute_activity(
                activity, {"session": self.session, "policy": self.policy, "args": args},
                **options(cls, self.session["host_queue"], True))
        except ActivityError as e:
            cause = e.cause
            if isinstance(cause, TimeoutError) and cause.type == TimeoutType.SCHEDULE_TO_START:
                # The worker holding the browser is gone and nothing ran: open a new one.
                await self.open()
                return fail("session_replaced", "the browser was lost before the call ran; a new one is open at about:blank: navigate again")
            if isinstance(cause, TimeoutError) and cls == "effect":
                # It started, then its worker went silent: it may have had an effect. Never repeat it blindly.
                return fail("effect_unknown", "the run may have had an effect; take a snapshot before acting again", "possibly_effected")
            if isinstance(cause, ApplicationError) and cause.details:
                return cause.details[0]  # the failure envelope; cause.type is its code
            raise

    @workflow.run
    async def run(self, site: str) -> str:
        await self.open()
        try:
            out = await self.call("browser.run", "effect", {"actions": [{"op": "goto", "url": site + "/"}]})
            if not out.get("ok"):
                if out["code"] == "effect_unknown":
                    pass  # look before acting: the snapshot below does
                elif out["code"] != "session_replaced":
                    return "run failed: " + out["message"]
            snap = await self.call("browser.snapshot", "read", {"mode": "interactive"})
            if not snap.get("ok"):
                return "snapshot failed: " + snap["message"]
            return snap["title"]
        finally:
            await workflow.execute_activity("browser.release", {"session": self.session},
                                            **options("custody", self.session["host_queue"], True))


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--address", default="127.0.0.1:7233")
    p.add_argument("--namespace", default="default")
    p.add_argument("--site", default="http://127.0.0.1:8380")
    a = p.parse_args()
    client = await Client.connect(a.address, namespace=a.namespace)
    async with Worker(client, task_queue="py-browser-agent", workflows=[PyBrowserAgent]):
        title = await client.execute_workflow(PyBrowserAgent.run, a.site, id=f"py-agent-{uuid.uuid4().hex[:8]}",
                                              task_queue="py-browser-agent", execution_timeout=timedelta(minutes=3))
    print(f"title: {title}")


if __name__ == "__main__":
    asyncio.run(main())
