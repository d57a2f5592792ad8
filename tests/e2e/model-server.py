#!/usr/bin/python3
"""model-server.py: a stand-in model API on loopback for the e2e tests.

Speaks enough of Anthropic's Messages API (POST /v1/messages, streaming SSE
or not, count_tokens, the model list) for Claude Code (and Copilot CLI with
an anthropic provider), of OpenAI's Responses API (POST /v1/responses,
streaming) for the Codex CLI, of OpenAI's Chat Completions (POST
.../chat/completions, SSE or not, with tool calls) for Qwen Code and
opencode, and of the Gemini API (POST /v1beta/models/M:streamGenerateContent
?alt=sse, :generateContent, :countTokens) for Gemini CLI.  The shell tool is
the one the harness offers by name (SHELL_TOOLS), its schema's required keys
filled.  What it answers is chosen by the words of the user's latest prompt:

  e2e-slow WORD   a reply streamed over SLOW_SECONDS, so the harness shows
                  itself working
  e2e-ask         the same with ASK_COMMAND, which writes a file: a harness
                  in a mode that asks before such commands asks the user
  e2e-commit      the same running COMMIT_COMMAND (git add and commit)
  e2e-tool        one call of the harness's shell tool (claude's Bash,
                  codex's exec_command or shell, gemini's and qwen's
                  run_shell_command, copilot's and opencode's bash)
                  running TOOL_COMMAND (PLAIN_TOOL_COMMAND for gemini); the
                  tool result that comes back is written to RECORD_DIR/tool-result
  anything else   the plain reply "pong: <prompt>"

For each request that offers tools (the conversation's own turns, not the
harness's side requests), RECORD_DIR/history holds the user's prompts the
request carried, one a line: how a test knows a resumed session has the
earlier conversation.

Usage: model-server.py PORT_FILE LOG_FILE RECORD_DIR [--listen ADDR:PORT] [--tls CERT KEY]
It listens on 127.0.0.1 on a free port (or on ADDR:PORT) and writes the port
to PORT_FILE once it is listening; every request (path, headers, body) is
appended to LOG_FILE.  With --tls it speaks HTTPS with that certificate and
key (PEM files), as the real API hosts do: e2e-net runs it in the tests'
network world as api.anthropic.com and api.openai.com.
Python 3 standard library only.
"""
import http.server
import json
import os
import re
import socketserver
import ssl
import sys
import threading
import time

SLOW_SECONDS = 6.0
# The shell must run it for the marker to appear: 6*7 is computed, not echoed.
TOOL_COMMAND = "echo E2E_TOOL_OUTPUT_$((6*7))"
# e2e-sbxtool: what a sandboxed agent tries: write the project, read a host
# secret (the test puts E2E-HOST-SECRET in ~/.ssh/id_ed25519), then the marker.
SBX_COMMAND = ("echo from-the-agent > e2e-from-agent.txt; "
               "cat ~/.ssh/id_ed25519 2>&1 | head -c 100; echo; echo E2E_TOOL_OUTPUT_$((6*7))")


# e2e-commit: a sandboxed agent commits in its worktree (its private git
# store, docs/sandbox.md "Commits"), then the marker.
COMMIT_COMMAND = ("echo from-the-agent > e2e-commit.txt && git add e2e-commit.txt && "
                  "git commit -qm 'e2e: the agent commits' && echo E2E_COMMITTED_$((6*7))")
# e2e-ask: not read-only, so a harness that asks for such commands asks.
ASK_COMMAND = "touch e2e-approved.txt && echo E2E_APPROVED_$((6*7))"


# The same without '$': Gemini CLI refuses $((...)), $(...) and backticks
# ("Command injection detected"); expr still computes 42.
PLAIN_TOOL_COMMAND = "expr 6 '*' 7 | sed 's/^/E2E_TOOL_OUTPUT_/'"
PLAIN_ASK_COMMAND = "touch e2e-approved.txt && expr 6 '*' 7 | sed 's/^/E2E_APPROVED_/'"
# The sleep: Gemini CLI's shell tool, in a sandbox on a loaded machine,
# sometimes read no output of a command that ended at once ("Output:
# (empty)").
PLAIN_SBX_COMMAND = ("echo from-the-agent > e2e-from-agent.txt; "
                     "cat ~/.ssh/id_ed25519 2>&1 | head -c 100; echo; " + PLAIN_TOOL_COMMAND +
                     "; sleep 1")


def tool_command(prompt, plain=False):
    if "e2e-ask" in prompt:
        return PLAIN_ASK_COMMAND if plain else ASK_COMMAND
    if "e2e-commit" in prompt:
        return COMMIT_COMMAND
    if "e2e-sbxtool" in prompt:
        return PLAIN_SBX_COMMAND if plain else SBX_COMMAND
    return PLAIN_TOOL_COMMAND if plain else TOOL_COMMAND


# The shell tools of the harnesses, by name, in order of preference: claude's
# Bash, opencode's and copilot's bash, gemini's and qwen's run_shell_command,
# codex's exec_command and shell.
SHELL_TOOLS = ("Bash", "bash", "run_shell_command", "exec_command", "shell")
# Tools whose shell refuses '$' in a command.
PLAIN_TOOLS = ("run_shell_command",)


def pick_shell(tools):
    """The shell tool among tools ({name: JSON schema}), or None."""
    for name in SHELL_TOOLS:
        if name in tools:
            return name
    return None


def shell_args(name, schema, prompt):
    """The arguments of a call of shell tool name: its command, and each
    other required key of its schema filled."""
    cmd = tool_command(prompt, name in PLAIN_TOOLS)
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties") or {}
    if name == "exec_command":
        return {"cmd": cmd}
    if name == "shell":
        return {"command": ["bash", "-lc", cmd]}
    args = {"command": cmd}
    for key in schema.get("required") or []:
        if key in args:
            continue
        kind = (props.get(key) or {}).get("type") if isinstance(props.get(key), dict) else None
        if kind in ("integer", "number"):
            args[key] = 60000 if "timeout" in key else 1
        elif kind == "boolean":
            args[key] = False
        else:
            args[key] = "Print a marker"
    if "description" in props and "description" not in args:
        args["description"] = "Print a marker"
    return args


def said(seen):
    """The reply to a tool result: its marker when it has one (a result
    wrapped in the harness's own words), else its tail."""
    m = re.search(r"E2E_[A-Z_]+_42", seen)
    return "tool said: " + (m.group(0) if m else seen.strip()[-200:])


def wants_tool(prompt):
    return ("e2e-tool" in prompt or "e2e-sbxtool" in prompt or "e2e-ask" in prompt or
            "e2e-commit" in prompt)
MODEL = "e2e-model"

lock = threading.Lock()
counter = [0]


def next_id(prefix):
    with lock:
        counter[0] += 1
        return "%s_e2e%06d" % (prefix, counter[0])


def log(text):
    with lock:
        with open(LOG_FILE, "a", encoding="utf-8") as f:
            f.write(text + "\n")


def record(name, text):
    path = os.path.join(RECORD_DIR, name)
    with lock:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


def record_history(texts):
    prompts = [last_prompt([t]) for t in texts]
    record("history", "".join(p + "\n" for p in prompts if p))


def text_of(content):
    """The plain text of a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") in ("text", "input_text", "output_text"):
                out.append(block.get("text", ""))
    return "\n".join(out)


def last_prompt(texts):
    """The user's words: the last line of user text that is not a system
    reminder or other wrapping the harnesses add."""
    for text in reversed(texts):
        lines = [l.strip() for l in text.splitlines() if l.strip()]
        lines = [l for l in lines if not l.startswith("<") and not l.endswith(">")]
        if lines:
            return lines[-1]
    return ""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        # The TLS handshake in the connection's own thread: a client that
        # never says hello holds up no other.
        if TLS is not None:
            self.request.settimeout(30)
            self.request = TLS.wrap_socket(self.request, server_side=True)
            self.request.settimeout(None)
        super().setup()

    def log_message(self, fmt, *args):  # quiet on stderr; LOG_FILE has it all
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        headers = "".join("%s: %s\n" % (k, v) for k, v in self.headers.items()
                          if k.lower() not in ("authorization", "x-api-key"))
        log("== %s %s %s from %s\n%s\n%s" % (time.strftime("%H:%M:%S"), self.command, self.path,
                                             self.client_address[0], headers,
                                             # no NUL: readers take the log for text
                                             # (copilot's telemetry is gzip)
                                             raw.decode("utf-8", "replace")[:20000]
                                             .replace("\0", "\\0")))
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {}

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, name, obj):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(obj))).encode())
        self.wfile.flush()

    def do_GET(self):
        self.body()
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            # Anthropic's list; Copilot's API (a signed-in copilot) reads
            # the same entries' name, vendor, capabilities and endpoints
            self.send_json(200, {"data": [{"type": "model", "id": MODEL, "display_name": MODEL,
                                           "created_at": "2026-01-01T00:00:00Z",
                                           "object": "model", "name": MODEL,
                                           "vendor": "Anthropic", "version": MODEL,
                                           "preview": False, "model_picker_enabled": True,
                                           "policy": {"state": "enabled"},
                                           "supported_endpoints": ["/v1/messages",
                                                                   "/chat/completions"],
                                           "capabilities": {
                                               "family": "claude-sonnet-4.6", "type": "chat",
                                               "object": "model_capabilities",
                                               "tokenizer": "o200k_base",
                                               "limits": {"max_context_window_tokens": 200000,
                                                          "max_output_tokens": 32000,
                                                          "max_prompt_tokens": 128000},
                                               "supports": {"streaming": True,
                                                            "tool_calls": True,
                                                            "parallel_tool_calls": True}}}],
                                 "has_more": False, "first_id": MODEL, "last_id": MODEL,
                                 "models": []})
        elif path == "/copilot_internal/user":
            # GitHub's answer to a signed-in Copilot CLI: who, which plan,
            # and where its Copilot API is (the host names of that plan)
            self.send_json(200, {
                "login": "e2e-user", "access_type_sku": "free_limited_copilot",
                "analytics_tracking_id": "e2e", "assigned_date": None,
                "can_signup_for_limited": False, "chat_enabled": True,
                "copilot_plan": "individual", "copilotignore_enabled": False,
                "codex_agent_enabled": False, "organization_list": [],
                "restricted_telemetry": True,
                "endpoints": {
                    "api": "https://api.individual.githubcopilot.com",
                    "origin-tracker": "https://origin-tracker.individual.githubcopilot.com",
                    "proxy": "https://proxy.individual.githubcopilot.com",
                    "telemetry": "https://telemetry.individual.githubcopilot.com"},
                "quota_reset_date": "2099-01-01", "quota_snapshots": {}})
        else:
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "not here"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        req = self.body()
        path = self.path.split("?")[0]
        try:
            if path.endswith("/messages/count_tokens"):
                self.send_json(200, {"input_tokens": 100})
            elif path.endswith("/chat/completions"):
                self.chat(req)
            elif ":streamGenerateContent" in path:
                self.gemini(req, True)
            elif ":generateContent" in path:
                self.gemini(req, False)
            elif ":countTokens" in path:
                self.send_json(200, {"totalTokens": 100})
            elif path.endswith("/messages"):
                self.anthropic(req)
            elif path.endswith("/responses"):
                self.openai(req)
            else:
                self.send_json(404, {"error": {"type": "not_found", "message": "not here"}})
        except (BrokenPipeError, ConnectionResetError):
            log("-- client went away")

    # ---- Anthropic Messages ----

    def anthropic(self, req):
        msgs = req.get("messages") or []
        schemas = {t.get("name"): t.get("input_schema") for t in req.get("tools") or []
                   if isinstance(t, dict)}
        tools = list(schemas)
        shell = pick_shell(schemas)
        last = msgs[-1] if msgs else {}
        results = [b for b in (last.get("content") if isinstance(last.get("content"), list) else [])
                   if isinstance(b, dict) and b.get("type") == "tool_result"]
        prompt = last_prompt([text_of(m.get("content")) for m in msgs if m.get("role") == "user"])
        if tools:
            record_history([text_of(m.get("content")) for m in msgs if m.get("role") == "user"])
        blocks, stop, delay = [], "end_turn", 0.0
        if results:
            seen = results[-1].get("content")
            seen = text_of(seen) if not isinstance(seen, str) else seen
            record("tool-result", seen)
            blocks.append({"type": "text", "text": "tool said: " + seen.strip()})
        elif wants_tool(prompt) and shell is not None:
            blocks.append({"type": "text", "text": "Running the command."})
            blocks.append({"type": "tool_use", "id": next_id("toolu"), "name": shell,
                           "input": shell_args(shell, schemas[shell], prompt)})
            stop = "tool_use"
        else:
            if "e2e-slow" in prompt and tools:
                delay = SLOW_SECONDS
            blocks.append({"type": "text", "text": "pong: " + prompt})
        log("-> anthropic prompt=%r tools=%d results=%d stop=%s" % (prompt, len(tools), len(results), stop))
        usage = {"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        mid = next_id("msg")
        if not req.get("stream"):
            self.send_json(200, {"id": mid, "type": "message", "role": "assistant",
                                 "model": req.get("model", MODEL), "content": blocks,
                                 "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self.start_sse()
        self.event("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": req.get("model", MODEL),
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": dict(usage, output_tokens=1)}})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}})
                for piece in chunks(b["text"], delay):
                    self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": piece}})
            else:
                self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": dict(b, input={})})
                self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(b["input"])}})
            self.event("content_block_stop", {"type": "content_block_stop", "index": i})
        self.event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}})
        self.event("message_stop", {"type": "message_stop"})
        log("<- anthropic done prompt=%r tools=%d at=%.6f" % (prompt, len(tools), time.time()))

    # ---- OpenAI Responses ----

    def openai(self, req):
        items = req.get("input") or []
        tools = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
        last = items[-1] if items else {}
        users = [text_of(i.get("content")) for i in items
                 if isinstance(i, dict) and i.get("role") == "user"]
        prompt = last_prompt(users)
        if tools:
            record_history(users)
        out, delay = [], 0.0
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            seen = last.get("output")
            seen = seen if isinstance(seen, str) else json.dumps(seen)
            record("tool-result", seen)
            out.append(("text", "tool said: " + seen.strip()[-200:]))
        elif wants_tool(prompt) and ("exec_command" in tools or "shell" in tools):
            if "exec_command" in tools:
                args = {"cmd": tool_command(prompt)}
                if "e2e-ask" in prompt:
                    # asks for more than codex's sandbox: an approval
                    args.update(sandbox_permissions="require_escalated",
                                justification="e2e: a command that needs approval")
                call = ("exec_command", args)
            else:
                call = ("shell", {"command": ["bash", "-lc", tool_command(prompt)]})
            out.append(("call", call))
        else:
            if "e2e-slow" in prompt:
                delay = SLOW_SECONDS
            out.append(("text", "pong: " + prompt))
        log("-> openai prompt=%r tools=%s out=%s" % (prompt, tools, [o[0] for o in out]))
        rid = next_id("resp")
        self.start_sse()
        self.event("response.created", {"type": "response.created",
                                        "response": {"id": rid, "status": "in_progress"}})
        for n, (kind, what) in enumerate(out):
            if kind == "text":
                iid = next_id("msg")
                self.event("response.output_item.added", {
                    "type": "response.output_item.added", "output_index": n,
                    "item": {"type": "message", "id": iid, "role": "assistant",
                             "status": "in_progress", "content": []}})
                for piece in chunks(what, delay):
                    self.event("response.output_text.delta", {
                        "type": "response.output_text.delta", "item_id": iid,
                        "output_index": n, "content_index": 0, "delta": piece})
                item = {"type": "message", "id": iid, "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": what, "annotations": []}]}
            else:
                name, args = what
                item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                        "name": name, "arguments": json.dumps(args), "status": "completed"}
                self.event("response.output_item.added", {
                    "type": "response.output_item.added", "output_index": n, "item": item})
            self.event("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": n, "item": item})
        self.event("response.completed", {"type": "response.completed", "response": {
            "id": rid, "status": "completed",
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 110}}})
        log("<- openai done prompt=%r tools=%d at=%.6f" % (prompt, len(tools), time.time()))

    # ---- OpenAI Chat Completions ----

    def chat(self, req):
        msgs = [m for m in req.get("messages") or [] if isinstance(m, dict)]
        schemas = {}
        for t in req.get("tools") or []:
            f = t.get("function") if isinstance(t, dict) else None
            if isinstance(f, dict) and f.get("name"):
                schemas[f["name"]] = f.get("parameters")
        shell = pick_shell(schemas)
        last = msgs[-1] if msgs else {}
        users = [text_of(m.get("content")) for m in msgs if m.get("role") == "user"]
        prompt = last_prompt(users)
        if schemas:
            record_history(users)
        text, call, delay = None, None, 0.0
        if last.get("role") == "tool":
            seen = last.get("content")
            seen = seen if isinstance(seen, str) else text_of(seen) or json.dumps(seen)
            record("tool-result", seen)
            text = said(seen)
        elif wants_tool(prompt) and shell is not None:
            call = {"index": 0, "id": next_id("call"), "type": "function",
                    "function": {"name": shell,
                                 "arguments": json.dumps(shell_args(shell, schemas[shell], prompt))}}
        else:
            if "e2e-slow" in prompt and schemas:
                delay = SLOW_SECONDS
            text = "pong: " + prompt
        finish = "tool_calls" if call else "stop"
        log("-> chat prompt=%r tools=%d out=%s" % (prompt, len(schemas), finish))
        cid, model, created = next_id("chatcmpl"), req.get("model", MODEL), int(time.time())
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if not req.get("stream"):
            msg = {"role": "assistant", "content": text}
            if call:
                msg["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}]
            self.send_json(200, {"id": cid, "object": "chat.completion", "created": created,
                                 "model": model, "choices": [{"index": 0, "message": msg,
                                                              "finish_reason": finish}],
                                 "usage": usage})
            return

        def chunk(delta, reason=None, **more):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": model, "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": reason}]}
            obj.update(more)
            self.wfile.write(("data: %s\n\n" % json.dumps(obj)).encode())
            self.wfile.flush()

        self.start_sse()
        chunk({"role": "assistant", "content": ""})
        if text is not None:
            for piece in chunks(text, delay):
                chunk({"content": piece})
        if call:
            chunk({"tool_calls": [call]})
        chunk({}, finish)
        obj = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [], "usage": usage}
        self.wfile.write(("data: %s\n\ndata: [DONE]\n\n" % json.dumps(obj)).encode())
        self.wfile.flush()
        log("<- chat done prompt=%r tools=%d at=%.6f" % (prompt, len(schemas), time.time()))

    # ---- Gemini API ----

    def gemini(self, req, stream):
        contents = [c for c in req.get("contents") or [] if isinstance(c, dict)]
        schemas = {}
        for t in req.get("tools") or []:
            for f in (t.get("functionDeclarations") or []) if isinstance(t, dict) else []:
                if isinstance(f, dict) and f.get("name"):
                    schemas[f["name"]] = f.get("parametersJsonSchema") or f.get("parameters")
        shell = pick_shell(schemas)
        # The user's words: text parts of user turns, without the
        # <session_context> block gemini opens a conversation with.
        users = []
        for c in contents:
            if c.get("role") != "user":
                continue
            texts = [p.get("text") for p in c.get("parts") or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str)
                     and not p["text"].lstrip().startswith("<session_context>")]
            if texts:
                users.append("\n".join(texts))
        prompt = last_prompt(users)
        if schemas:
            record_history(users)
        last = contents[-1] if contents else {}
        responses = [p["functionResponse"] for p in last.get("parts") or []
                     if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]
        parts, delay = [], 0.0
        if responses:
            out = responses[-1].get("response")
            seen = out.get("output") if isinstance(out, dict) else None
            seen = seen if isinstance(seen, str) else json.dumps(out)
            record("tool-result", seen)
            parts.append({"text": said(seen)})
        elif wants_tool(prompt) and shell is not None:
            parts.append({"functionCall": {"name": shell,
                                           "args": shell_args(shell, schemas[shell], prompt)}})
        else:
            if "e2e-slow" in prompt and schemas:
                delay = SLOW_SECONDS
            parts.append({"text": "pong: " + prompt})
        log("-> gemini prompt=%r tools=%d out=%s" % (prompt, len(schemas), list(parts[0])))
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}

        def response(part, done):
            cand = {"content": {"role": "model", "parts": [part]}, "index": 0}
            if done:
                cand["finishReason"] = "STOP"
            return {"candidates": [cand], "usageMetadata": usage, "modelVersion": MODEL}

        if not stream:
            self.send_json(200, {"candidates": [{"content": {"role": "model", "parts": parts},
                                                 "index": 0, "finishReason": "STOP"}],
                                 "usageMetadata": usage})
            return
        self.start_sse()
        part = parts[0]
        pieces = list(chunks(part["text"], delay)) if "text" in part else [None]
        for i, piece in enumerate(pieces):
            p = {"text": piece} if piece is not None else part
            self.wfile.write(("data: %s\r\n\r\n" % json.dumps(
                response(p, i == len(pieces) - 1))).encode())
            self.wfile.flush()
        log("<- gemini done prompt=%r tools=%d at=%.6f" % (prompt, len(schemas), time.time()))


def chunks(text, delay):
    """The text in pieces, spread over delay seconds (a generator: each
    piece goes out before the next wait)."""
    words = text.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    steps = max(len(pieces), 6) if delay > 0 else len(pieces)
    for i in range(steps):
        if delay > 0:
            time.sleep(delay / steps)
        if i < len(pieces):
            yield pieces[i]


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        log("-- connection from %s failed: %s" % (client_address[0], sys.exc_info()[1]))


TLS = None

if __name__ == "__main__":
    USAGE = "usage: model-server.py PORT_FILE LOG_FILE RECORD_DIR [--listen ADDR:PORT] [--tls CERT KEY]"
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(USAGE)
    PORT_FILE, LOG_FILE, RECORD_DIR = args[:3]
    address = ("127.0.0.1", 0)
    rest = args[3:]
    while rest:
        if rest[0] == "--listen" and len(rest) >= 2:
            host, _, port = rest[1].rpartition(":")
            address = (host, int(port))
            # beside the network world's stand-ins, which listen on any
            # address of the world at that port (tests/support/networld.py)
            Server.allow_reuse_port = True
            rest = rest[2:]
        elif rest[0] == "--tls" and len(rest) >= 3:
            TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            TLS.load_cert_chain(rest[1], rest[2])
            rest = rest[3:]
        else:
            sys.exit(USAGE)
    server = Server(address, Handler)
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()
