/** Stateless serving and structured logs, against the real CLI. */
import { afterAll, describe, expect, test } from "vitest";
import { FIXTURE, serve, tempDir } from "../helpers/proc.js";
import { initializeRequest } from "../helpers/wire.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const config = () =>
  tmp.file("packs.yaml", `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`);
const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

describe("stateless mode", () => {
  test("a stateless server hands out no session id, and needs none to answer a call", async () => {
    const s = await serve(["--stateless", config()]);
    try {
      const init = await fetch(s.url(), {
        method: "POST",
        headers,
        body: JSON.stringify(initializeRequest(1)),
      });
      expect(init.status).toBe(200);
      expect(init.headers.get("mcp-session-id")).toBeNull();
      const call = await fetch(s.url(), {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "no session" } },
        }),
      });
      expect(call.status).toBe(200);
      expect(await call.json()).toMatchObject({
        id: 2,
        result: { content: [{ type: "text", text: "no session" }] },
      });
      expect((await fetch(s.url(), { headers: { accept: "text/event-stream" } })).status).toBe(405);
      expect(((await (await fetch(`${s.base}/healthz`)).json()) as { sessions: number }).sessions).toBe(0);
    } finally {
      await s.stop();
    }
  });
});

describe("logs", () => {
  test("log lines are one JSON object each, and keep the request id of a call", async () => {
    const s = await serve(["--log-format", "json", "--log-level", "debug", config()]);
    try {
      const init = await fetch(s.url(), {
        method: "POST",
        headers,
        body: JSON.stringify(initializeRequest(1)),
      });
      const sid = init.headers.get("mcp-session-id")!;
      await fetch(s.url(), {
        method: "POST",
        headers: { ...headers, "mcp-session-id": sid, "x-request-id": "req-42" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "x" } },
        }),
      });
    } finally {
      await s.stop();
    }
    const lines = s.stderr().trim().split("\n");
    // The helper asks for text format first; the later --log-format json wins.
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      records.every(
        (r) => typeof r.time === "string" && typeof r.level === "string" && typeof r.msg === "string",
      ),
    ).toBe(true);
    expect(records).toContainEqual(
      expect.objectContaining({ msg: "call", request_id: "req-42", tool: "echo", outcome: "ok" }),
    );
  });
});
