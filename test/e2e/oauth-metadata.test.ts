/**
 * Where the proxy's OAuth metadata fetches may go, through the real CLI: an upstream that answers 401 and sends
 * the proxy's discovery, by a redirect, to an internal address (here 0.0.0.0, which reaches this machine but is
 * neither https nor a loopback name). No hop past the https-or-loopback rule is followed, and nothing of what such
 * an address answers is quoted to clients in /toolsets.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Served, serve, tempDir } from "../helpers/proc.js";

const tmp = tempDir();
const SECRET = `INTERNAL-${randomBytes(6).toString("hex")}`;
const internalHits: string[] = [];
let internal: Server;
let upstream: Server;
let served: Served;

const listen = async (s: Server) => {
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  return (s.address() as AddressInfo).port;
};

beforeAll(async () => {
  // What sits on an internal address: it answers anyone with a document that holds something private.
  internal = createServer((req, res) => {
    internalHits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ resource: SECRET, authorization_servers: [`http://127.0.0.1:1/${SECRET}`] }));
  });
  const inner = await listen(internal);
  // The upstream: every MCP request needs a token, and its protected resource metadata redirects inward.
  upstream = createServer((req, res) => {
    req.resume();
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/.well-known/oauth-protected-resource")) {
      res.writeHead(302, { location: `http://0.0.0.0:${inner}/latest/meta-data` }).end();
      return;
    }
    const port = (upstream.address() as AddressInfo).port;
    res
      .writeHead(401, {
        "www-authenticate": `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`,
      })
      .end();
  });
  const port = await listen(upstream);
  const file = tmp.file(
    "packs.yaml",
    `state_dir: ${join(tmp.dir, "state")}
upstreams:
  hostile:
    url: http://127.0.0.1:${port}/mcp
    oauth: { mode: shared }
toolsets:
  tools:
    tools: ["hostile/*"]
`,
  );
  served = await serve([file], { TOOLPACKS_TOKEN_KEY: randomBytes(32).toString("base64") });
});
afterAll(async () => {
  await served?.stop();
  for (const s of [upstream, internal]) {
    s?.closeAllConnections();
    await new Promise((ok) => s?.close(ok));
  }
  tmp.cleanup();
});

test("an upstream's redirect cannot send the proxy's metadata fetch to an internal address, and nothing fetched is quoted in /toolsets", async () => {
  const report = await (await fetch(`${served.base}/toolsets?tools`)).text();
  expect(JSON.parse(report)).toMatchObject({
    unavailable: [expect.objectContaining({ name: "tools", reason: "upstream-unavailable" })],
  });
  expect(report).toContain("redirected where the proxy may not follow");
  expect(internalHits).toEqual([]);
  expect(report).not.toContain(SECRET);
  expect(served.stderr()).not.toContain(SECRET);
});
