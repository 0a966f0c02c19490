/**
 * Two replicas sharing a session secret (the library, each on its own node:http server): a signed session id
 * carries a keyed digest of its subject, so a replica that rebuilds the session serves only that subject.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createToolpacks, loadCatalog, type Toolpacks } from "../../src/index.js";
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
    - { token: "${ALICE}", subject: alice }
    - { token: "${BOB}", subject: bob }
upstreams:
  fx: { command: node, args: ["${FIXTURE}"] }
toolsets:
  notes: { tools: [fx/echo] }
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
