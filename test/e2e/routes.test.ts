/** The 404 page's route list is what the server really answers: every route listed answers, none left out. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, expect, test } from "vitest";
import { servedRoutes } from "../../src/commands/serve-routes.js";
import { createToolpacks, loadCatalog } from "../../src/index.js";
import { FIXTURE, serve, tempDir } from "../helpers/proc.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const config = () =>
  tmp.file("packs.yaml", `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`);

/** Every GET route the HTTP handler can serve, whatever its options. */
const EVERY_GET = ["/toolsets", "/healthz", "/readyz", "/metrics"];

test("the 404 page lists /metrics and /readyz and every other route serve answers, and each of them answers", async () => {
  const served = await serve([config(), "--path", "/tools"]);
  try {
    const r = await fetch(`${served.base}/nope`);
    expect(r.status).toBe(404);
    const { routes } = (await r.json()) as { routes: string[] };
    // The console is on by default on loopback (SPEC §17.1): its page is a route too.
    expect(routes).toEqual(["/tools", ...EVERY_GET, "/ui/"]);
    for (const route of routes) {
      const answer = await fetch(`${served.base}${route}`);
      await answer.arrayBuffer();
      expect(answer.status, route).not.toBe(404);
    }
  } finally {
    await served.stop();
  }
});

test.each([
  ["everything on", {}],
  ["no /healthz or /readyz", { healthz: false }],
  ["no /metrics", { metrics: false }],
  ["no /toolsets", { toolsetsRoute: false }],
])("the route list honours the options that turn routes off: %s", async (_, off) => {
  const loaded = loadCatalog([config()]);
  if (!loaded.ok) throw new Error("config");
  const toolpacks = createToolpacks(loaded.catalog, { logger: false, path: "/mcp", ...off });
  const server = createServer((req, res) => {
    void toolpacks.handle(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const listed = servedRoutes({ path: "/mcp", ...off }, loaded.catalog);
    expect(listed[0]).toBe("/mcp");
    for (const route of ["/mcp", ...EVERY_GET]) {
      const answer = await fetch(`${base}${route}`);
      await answer.arrayBuffer();
      expect(answer.status !== 404, route).toBe(listed.includes(route));
    }
  } finally {
    server.close();
    await toolpacks.close();
  }
});
