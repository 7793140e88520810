"""An agent shaped like Claude Code, for `cargo bench -p runlog-cli --bench conversation`: TURNS
streamed Messages calls through runlog's gateway, each sending the whole conversation again
(system prompt, about 18 tool schemas, every message so far, the prompt-cache mark moved to the
last message), each reply a little text and one tool call whose result (a file read, 20 to 120
lines) is the next turn's new message. Deterministic: the same bytes on every run."""
import json
import os
import random
import sys
import urllib.request

TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
rng = random.Random(7)
WORDS = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
         for _ in range(3000)]


def prose(n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def code(lines):
    out = []
    for i in range(lines):
        name, arg = rng.choice(WORDS), rng.choice(WORDS)
        out.append(f"{i + 1:>6}\t    {name} = {arg}({rng.choice(WORDS)}, {rng.randint(0, 999)})")
    return "\n".join(out)


def schema():
    props = {rng.choice(WORDS): {"type": rng.choice(["string", "number", "boolean"]),
                                 "description": prose(25)} for _ in range(rng.randint(2, 6))}
    return {"type": "object", "properties": props, "required": list(props)[:1],
            "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"}


SYSTEM = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
          {"type": "text", "text": prose(2400), "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": name, "description": prose(rng.randint(60, 260)), "input_schema": schema()}
         for name in ["Task", "Bash", "Glob", "Grep", "ExitPlanMode", "Read", "Edit", "MultiEdit",
                      "Write", "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch", "BashOutput",
                      "KillShell", "SlashCommand", "ListMcpResources", "ReadMcpResource"]]
messages = [{"role": "user", "content": [
    {"type": "text", "text": "<system-reminder>" + prose(300) + "</system-reminder>"},
    {"type": "text", "text": "The parser test fails on empty input; find out why and fix it."}]}]


def ask(body):
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages?beta=true",
        data=json.dumps(body, separators=(",", ":")).encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
                 "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
                 "content-type": "application/json", "user-agent": "claude-cli/2.1 (external, cli)"})
    blocks, partial = [], ""
    for line in urllib.request.urlopen(request).read().decode().splitlines():
        if not line.startswith("data:"):
            continue
        event = json.loads(line[5:])
        if event["type"] == "content_block_start":
            blocks.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                blocks[-1]["text"] += delta["text"]
            else:
                partial += delta["partial_json"]
        elif event["type"] == "content_block_stop" and blocks[-1]["type"] == "tool_use":
            blocks[-1]["input"], partial = json.loads(partial), ""
    return blocks


for turn in range(TURNS):
    for m in messages:
        for block in m["content"]:
            block.pop("cache_control", None)
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    reply = ask({"model": "claude-sonnet-4-5-20250929", "messages": messages, "system": SYSTEM,
                 "tools": TOOLS, "metadata": {"user_id": "user_5f0c_account__session_9e1d"},
                 "max_tokens": 32000, "stream": True})
    messages.append({"role": "assistant", "content": reply})
    used = [b for b in reply if b["type"] == "tool_use"]
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b["id"], "content": code(rng.randint(20, 120))}
        for b in used]})
print(f"{TURNS} turns")
