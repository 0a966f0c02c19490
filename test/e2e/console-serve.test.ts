/**
 * Where `serve` offers the console and what its routes answer (SPEC §17.1, §17.3, §17.4), without a browser: the
 * options that turn it off or move it, the checks of the MCP path on its files and data, its JSON twin of
 * /toolsets, and a page with no inline script.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FIXTURE, runCli, type Served, serve, tempDir, until } from "../helpers/proc.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  [
    "upstreams:",
    `  fx: { command: node, args: ["${FIXTURE}", "--tools", "echo,add"] }`,
    // Writes its secret to stderr and exits: the failure toolpacks reports quotes it.
    `  leaky: { command: node, args: ["-e", "console.error('key=' + process.env.API_KEY); process.exit(1)"], env: { API_KEY: "\${CONSOLE_SECRET:-none}" } }`,
    "toolsets:",
    "  one: { tools: [fx/echo] }",
    "  two: { default: false, tools: [fx/add] }",
    "  leaky: { default: false, tools: [leaky/x] }",
    "",
  ].join("\n"),
);
const off = tmp.file("off.yaml", `ui: false\nupstreams:\n  fx: { command: node, args: ["${FIXTURE}"] }\n`);
const moved = tmp.file(
  "moved.yaml",
  `ui: { path: /console }\nupstreams:\n  fx: { command: node, args: ["${FIXTURE}"] }\n`,
);
const stops: Served[] = [];

async function served(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const s = await serve(args, env);
  stops.push(s);
  return s;
}

afterAll(async () => {
  await Promise.all(stops.map((s) => s.stop()));
  tmp.cleanup();
});

describe("the console's routes", () => {
  let s: Served;
  const SECRET = "console-secret-value-98765";
  beforeAll(async () => {
    s = await served([config], { CONSOLE_SECRET: SECRET });
  });

  test("is on by default on loopback, where its page holds no inline script and says what may run", async () => {
    await until(() => s.stderr().includes(`console on ${s.base}/ui/`), "the console's log line");
    const redirect = await fetch(`${s.base}/ui?two`, { redirect: "manual" });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get("location")).toBe("ui/?two");
    const page = await fetch(`${s.base}/ui/`, { headers: { "accept-encoding": "br" } });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).not.toContain("unsafe");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=|\sstyle=|javascript:/i);
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${s.base}/ui/console.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const again = await fetch(`${s.base}/ui/console.js`, {
      headers: { "if-none-match": js.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
    expect((await fetch(`${s.base}/ui/nothing.js`)).status).toBe(404);
    expect((await fetch(`${s.base}/ui/api/toolsets`, { method: "POST" })).status).toBe(405);
  });

  test("its data is a JSON twin of /toolsets: the same report, with what the cards draw", async () => {
    const twin = (await (await fetch(`${s.base}/ui/api/toolsets?two`)).json()) as Record<string, unknown>;
    const report = await (await fetch(`${s.base}/toolsets?two`)).json();
    expect(twin.report).toEqual(report);
    expect(twin.query).toBe("two");
    const cards = twin.toolsets as { name: string; state: string; tools: { name: string }[] | null }[];
    expect(cards.map((c) => [c.name, c.state, c.tools?.map((t) => t.name) ?? null])).toEqual([
      ["one", "active", ["echo"]],
      ["two", "active", ["add"]],
      ["leaky", "off", null],
    ]);
    const bad = await fetch(`${s.base}/ui/api/recheck/nope`);
    expect(bad.status).toBe(404);
    expect(await bad.json()).toEqual({ error: 'no toolset "nope"' });
  });

  test("no secret reaches its data: an upstream's failure that quotes one shows the variable instead", async () => {
    const recheck = await (await fetch(`${s.base}/ui/api/recheck/leaky?leaky`)).text();
    expect(recheck).toContain("(stderr: key=${CONSOLE_SECRET");
    const live = await (await fetch(`${s.base}/ui/api/live`)).text();
    for (const text of [recheck, live]) expect(text).not.toContain(SECRET);
  });

  test("its files and data pass the Host and Origin checks of the MCP path", async () => {
    const rebound = { host: "evil.example" };
    const { request } = await import("node:http");
    const get = (path: string, headers: Record<string, string>) =>
      new Promise<number>((ok, fail) => {
        const url = new URL(path, s.base);
        request(url, { headers }, (res) => {
          res.resume();
          ok(res.statusCode!);
        })
          .on("error", fail)
          .end();
      });
    expect(await get("/ui/", rebound)).toBe(403);
    expect(await get("/ui/api/toolsets", rebound)).toBe(403);
    expect(await get("/ui/api/live", { origin: "http://evil.example" })).toBe(403);
    expect(await get("/ui/api/live", { origin: s.base })).toBe(200);
  });
});

describe("where the console is served", () => {
  test("--no-ui, TOOLPACKS_UI=0 and ui: false turn it off; --ui turns it on over ui: false", async () => {
    for (const [args, env] of [
      [[config, "--no-ui"], {}],
      [[config], { TOOLPACKS_UI: "0" }],
      [[off], {}],
    ] as const) {
      const s = await served([...args], env);
      expect((await fetch(`${s.base}/ui/`)).status, args.join(" ")).toBe(404);
      await until(() => s.stderr().includes("console off: turned off"), "the console's log line");
    }
    const on = await served([off, "--ui"]);
    expect((await fetch(`${on.base}/ui/`)).status).toBe(200);
  });

  test("ui.path and --ui-path move it; a path that takes one of toolpacks' routes is refused before anything starts", async () => {
    const s = await served([moved]);
    expect((await fetch(`${s.base}/console/`)).status).toBe(200);
    expect((await fetch(`${s.base}/ui/`)).status).toBe(404);
    const flag = await served([config, "--ui-path", "/tp/console"]);
    expect((await fetch(`${flag.base}/tp/console/api/live`)).status).toBe(200);
    const clash = await runCli(["serve", config, "--port", "0", "--ui-path", "/mcp"]);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain("the console path /mcp collides with toolpacks' route /mcp");
  });
});
