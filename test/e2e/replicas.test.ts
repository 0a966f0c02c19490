/** Two replicas behind a real nginx, round-robin: one session's calls land on both, and survive one dying. */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { NO_NGINX, startNginx as startNginxProcess } from "../helpers/nginx.js";
import { FIXTURE, httpClient, type Served, serve, tempDir } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const tmp = tempDir();
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(stops.map((s) => s().catch(() => {})));
  tmp.cleanup();
});

async function startNginx(backends: string[]) {
  const lb = await startNginxProcess(backends);
  stops.push(() => lb.stop());
  return lb;
}

describe.skipIf(NO_NGINX !== undefined)(unless(NO_NGINX, "replicas behind nginx"), () => {
  test("a session survives its calls landing on a replica that did not open it, and that replica dying", async () => {
    const config = tmp.file(
      "packs.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const env = { TOOLPACKS_SESSION_SECRET: "replica-shared-secret-for-tests" };
    const replicas: Served[] = [await serve([config], env), await serve([config], env)];
    for (const r of replicas) stops.push(() => r.stop());
    const backends = replicas.map((r) => new URL(r.base).host);
    const lb = await startNginx(backends);

    const client = await httpClient(`${lb.base}/mcp`);
    stops.push(() => client.close());
    for (let i = 0; i < 50; i++) {
      const r = await client.callTool({ name: "echo", arguments: { text: `call ${i}` } });
      expect(r.content).toEqual([{ type: "text", text: `call ${i}` }]);
    }
    const posts = readFileSync(lb.log, "utf8")
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("POST"));
    const served = new Set(posts.map((l) => l.split(" ")[1]));
    expect(served).toEqual(new Set(backends));
    const rebuilt = replicas.filter((r) => r.stderr().includes("session rebuilt"));
    expect(rebuilt).toHaveLength(1);
    console.log(
      `replicas: 50 calls, ${posts.length} POSTs through nginx, per replica:`,
      [...served].map((b) => `${b}=${posts.filter((l) => l.includes(b!)).length}`).join(" "),
    );

    expect(await replicas[0]!.stop()).toBe(0);
    for (let i = 50; i < 70; i++) {
      const r = await client.callTool({ name: "echo", arguments: { text: `after ${i}` } });
      expect(r.content).toEqual([{ type: "text", text: `after ${i}` }]);
    }
  });

  test("a forged or altered session id is refused by a replica", async () => {
    const config = tmp.file(
      "packs2.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const a = await serve([config], { TOOLPACKS_SESSION_SECRET: "one-secret-1234" });
    const b = await serve([config], { TOOLPACKS_SESSION_SECRET: "another-secret-5678" });
    stops.push(
      () => a.stop(),
      () => b.stop(),
    );
    const c = await httpClient(a.url());
    stops.push(() => c.close());
    const id = (c.transport as unknown as { sessionId: string }).sessionId;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const other = await fetch(b.url(), {
      method: "POST",
      headers: { ...headers, "mcp-session-id": id },
      body,
    });
    expect(other.status).toBe(404);
    const altered = `${id.slice(0, 10)}${id[10] === "A" ? "B" : "A"}${id.slice(11)}`;
    const forged = await fetch(a.url(), {
      method: "POST",
      headers: { ...headers, "mcp-session-id": altered },
      body,
    });
    expect(forged.status).toBe(404);
  });
});
