/** The library mounted inside an Express app, next to the app's own routes. */
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, describe, expect, test } from "vitest";
import { createToolpacks, loadCatalog } from "../../src/index.js";
import { alive, FIXTURE, httpClient, tempDir, toolNames } from "../helpers/proc.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("embedding", () => {
  test("mounting toolpacks in Express keeps the app's own routes, and leaks no upstream process on close", async () => {
    const config = tmp.file(
      "packs.yaml",
      `
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--pid-file", "${tmp.dir}/main.pid"] }
toolsets:
  core: { tools: [main/echo] }
  math: { default: false, tools: [main/add] }
`,
    );
    const loaded = loadCatalog([config]);
    if (!loaded.ok) throw new Error("config");
    const toolpacks = createToolpacks(loaded.catalog, { logger: false, path: "/mcp" });
    const app = express();
    app.use(express.json());
    app.get("/hello", (_req, res) => {
      res.json({ hello: "world" });
    });
    app.use(toolpacks.middleware);
    app.use((_req, res) => {
      res.status(404).json({ app: "not found" });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: "world" });
      expect((await fetch(`${base}/nope`)).status).toBe(404);
      expect(toolpacks.activeFor("/mcp?math")).toEqual({
        active: ["core", "math"],
        unknown: [],
        forbidden: [],
      });
      expect(toolpacks.activeFor("/mcp?only=math&typo")).toEqual({
        active: ["math"],
        unknown: ["typo"],
        forbidden: [],
      });
      // activeFor built nothing: no upstream was started.
      expect(await import("node:fs").then((fs) => fs.existsSync(`${tmp.dir}/main.pid`))).toBe(false);

      const client = await httpClient(`${base}/mcp?math`);
      expect(await toolNames(client)).toEqual(["echo", "add", "list_server_toolsets"]);
      expect(await client.callTool({ name: "add", arguments: { a: 1, b: 2 } })).toMatchObject({
        structuredContent: { sum: 3 },
      });
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(
        /toolpacks_calls_total\{toolset="math",tool="add",upstream="main",outcome="ok"\} 1/,
      );
      expect(metrics).toMatch(/toolpacks_sessions\{selection="core,math"\} 1/);
      expect(metrics).toMatch(/toolpacks_upstream_up\{upstream="main",instance="shared"\} 1/);
      await client.close();
    } finally {
      await toolpacks.close();
      await new Promise((r) => server.close(r));
    }
    const pid = Number((await import("node:fs")).readFileSync(`${tmp.dir}/main.pid`, "utf8"));
    expect(alive(pid)).toBe(false);
  });
});
