/**
 * Two replicas sharing a session secret (the library, each on its own node:http server): a signed session id
 * carries a keyed digest of its subject, so a replica that rebuilds the session serves only that subject. And
 * a reload that changes what a principal may use ends that principal's sessions, and only those.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { compileTexts, createToolpacks, loadCatalog, type Toolpacks } from "../../src/index.js";
import { FIXTURE, tempDir } from "../helpers/proc.js";
import { openSession, post } from "../helpers/wire.js";

const ALICE = "alice-static-token-1";
const BOB = "bob-static-token-22";
const SECRET = "shared-session-secret-for-replicas";
const tmp = tempDir();
const replicas: { toolpacks: Toolpacks; server: Server; url: string }[] = [];

beforeAll(async () => {
  const file = tmp.file(
    "packs.yaml",
    `
auth:
  tokens:
    - { token: "${ALICE}", subject: alice, scopes: [ops] }
    - { token: "${BOB}", subject: bob }
upstreams:
  fx: { command: node, args: ["${FIXTURE}"] }
toolsets:
  notes: { tools: [fx/echo] }
  ops:
    requires: { scopes: [ops] }
    tools: [fx/add]
`,
  );
  const loaded = loadCatalog([file]);
  if (!loaded.ok) throw new Error("config");
  for (let i = 0; i < 2; i++) {
    const toolpacks = createToolpacks(loaded.catalog, { logger: false, sessionSecret: SECRET });
    const server = createServer((req, res) => void toolpacks.handle(req, res));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    replicas.push({
      toolpacks,
      server,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    });
  }
});

afterAll(async () => {
  for (const r of replicas) {
    r.server.closeAllConnections();
    await new Promise<void>((ok) => r.server.close(() => ok()));
    await r.toolpacks.close();
  }
  tmp.cleanup();
});

describe("signed session ids carry their subject", () => {
  test("a replica that rebuilds a session refuses another subject's token, and serves the session's own", async () => {
    const [one, two] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const { session } = await openSession(one.url, { headers: { authorization: `Bearer ${ALICE}` } });
    // The id's readable payload names no subject.
    const payload = Buffer.from(session.split(".")[1]!, "base64url").toString();
    expect(payload).not.toContain("alice");
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    const bob = await post(two.url, ping, { session, headers: { authorization: `Bearer ${BOB}` } });
    expect(bob.status).toBe(403);
    expect(bob.text).toContain("another identity");
    const alice = await post(two.url, ping, { session, headers: { authorization: `Bearer ${ALICE}` } });
    expect(alice.status).toBe(200);
  });
});

describe("a reload and who may use what", () => {
  test("a reload that takes a toolset from a principal ends its session; another principal's session goes on", async () => {
    // Its own server without a session secret: a signed id would be rebuilt (for the new config) instead.
    const file = join(tmp.dir, "packs.yaml");
    const loaded = loadCatalog([file]);
    if (!loaded.ok) throw new Error("config");
    const toolpacks = createToolpacks(loaded.catalog, { logger: false });
    const server = createServer((req, res) => void toolpacks.handle(req, res));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const one = { toolpacks, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
    replicas.push(one);
    const alice = { authorization: `Bearer ${ALICE}` };
    const bob = { authorization: `Bearer ${BOB}` };
    const a = await openSession(one.url, { headers: alice });
    const b = await openSession(one.url, { headers: bob });
    const text = readFileSync(file, "utf8").replace(
      "requires: { scopes: [ops] }",
      "requires: { scopes: [admin] }",
    );
    expect(text).toContain("scopes: [admin]");
    const next = compileTexts([{ file, text }]);
    if (!next.ok) throw new Error("reloaded config");
    await one.toolpacks.front.reload(next.catalog);
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    // alice (scope ops) may no longer use the ops toolset: her session's lists would change under it.
    expect((await post(one.url, list, { session: a.session, headers: alice })).status).toBe(404);
    // bob's static token has every scope: what he may use did not change.
    const kept = await post(one.url, list, { session: b.session, headers: bob });
    expect(kept.status).toBe(200);
    expect(JSON.stringify(kept.messages)).toContain('"add"');
    // A new session of alice's gets the new lists.
    const again = await openSession(one.url, { headers: alice });
    const fresh = await post(one.url, list, { session: again.session, headers: alice });
    expect(JSON.stringify(fresh.messages)).not.toContain('"add"');
  });
});
