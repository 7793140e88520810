"""runlog's MCP server asked through the official Python SDK (`mcp`), as an agent framework
would: initialize, list the tools, call each tool that looks on the recorded fixtures and check
its structured answer against the tool's outputSchema (jsonschema), then act.

    sdk_client.py stdio RUNLOG STORE RUN          # `runlog mcp`, as the user who started it
    sdk_client.py http URL READ_TOKEN STEER_TOKEN RUN   # `runlog serve`'s /mcp, with tokens

Over HTTPS, the CA to trust is the file named by RUNLOG_TEST_CA.

RUN is a run whose task `a` waits for a person: it is approved, then rolled back.
"""

import asyncio
import json
import os
import sys

import httpx2
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

LOOKS = {
    "runs": {},
    "status": {"run": "quickstart", "at": 10},
    "log": {"run": "quickstart", "task": "implement"},
    "show": {"run": "seed-001-eval-gate", "task": "capped"},
    "audit": {"run": "seed-001-eval-gate"},
    "judges": {},
    "review": {},
    "diff": {"left": "quickstart", "right": "seed-001-eval-gate"},
    "cost": {"run": "quickstart"},
    "experiments": {},
}
ACTS = ["approve", "reject", "reopen", "rollback", "fork", "budget", "rerun", "resume"]


def wire(model):
    """A result as it crossed the wire (the SDK's models are snake_case)."""
    return model.model_dump(by_alias=True, exclude_none=True)


async def looks(session, tools):
    by_name = {t.name: t for t in tools.tools}
    for name, args in LOOKS.items():
        tool = by_name[name]
        assert tool.annotations.read_only_hint is True, name
        result = await session.call_tool(name, args)
        assert not result.is_error, (name, result.content)
        jsonschema.validate(result.structured_content, tool.output_schema)
        assert json.loads(result.content[1].text) == result.structured_content, name
    missing = await session.call_tool("experiment", {"name": "none-such"})
    assert missing.is_error, wire(missing)
    shown = await session.call_tool("show", LOOKS["show"])
    notes = [e["event"]["notes"] for e in shown.structured_content["events"] if e["event"]["type"] == "eval-scored"]
    assert "missing error handling for empty input" in notes, notes


async def acts(session, run, tools):
    rollback = next(t for t in tools.tools if t.name == "rollback")
    assert rollback.annotations.destructive_hint is True
    approved = await session.call_tool("approve", {"run": run, "task": "a"})
    assert not approved.is_error, wire(approved)
    head = approved.structured_content["head"]
    jsonschema.validate(approved.structured_content, next(t for t in tools.tools if t.name == "approve").output_schema)
    rolled = await session.call_tool("rollback", {"run": run, "to": head - 1, "reason": "approved too soon"})
    assert not rolled.is_error, wire(rolled)


async def over_stdio(runlog, store, run):
    params = StdioServerParameters(command=runlog, args=["--store", store, "mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            assert init.server_info.name == "runlog"
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == list(LOOKS) + ["experiment"] + ACTS, tools
            await looks(session, tools)
            await acts(session, run, tools)
    print("stdio: 19 tools")


async def over_http(url, token, steer, run):
    headers = {"Authorization": f"Bearer {token}"}
    verify = os.environ.get("RUNLOG_TEST_CA", True)
    async with httpx2.AsyncClient(headers=headers, timeout=60, verify=verify) as client:
        async with streamable_http_client(url, http_client=client) as (r, w, *_):
            async with ClientSession(r, w) as session:
                await session.initialize()
                tools = await session.list_tools()
                names = [t.name for t in tools.tools]
                if steer:
                    assert names == list(LOOKS) + ["experiment"] + ACTS[:6], names
                else:
                    assert not set(names) & set(ACTS), names
                await looks(session, tools)
                if steer:
                    await acts(session, run, tools)
                else:
                    try:
                        await session.call_tool("approve", {"run": run, "task": "a"})
                        raise AssertionError("a read token approved")
                    except MCPError as e:
                        assert "needs a token with the steer scope" in str(e), e
                print(f"{'steer' if steer else 'read'} token: {len(names)} tools")


async def main(argv):
    if argv[1] == "stdio":
        await over_stdio(argv[2], argv[3], argv[4])
    else:
        url, read, steer, run = argv[2:6]
        await over_http(url, read, False, run)
        await over_http(url, steer, True, run)
        # No token: refused before any tool is reached.
        async with httpx2.AsyncClient(timeout=60, verify=os.environ.get("RUNLOG_TEST_CA", True)) as client:
            answer = await client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                       headers={"Accept": "application/json, text/event-stream"})
            assert answer.status_code == 401, answer.status_code


asyncio.run(main(sys.argv))
