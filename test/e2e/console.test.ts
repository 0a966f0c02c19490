/**
 * The browser console (SPEC §17) in Debian's chromium: the bundled example's cards and costs, switches that go
 * through the enable gate, the URL and client configs pasted into real clients, and upstream text that stays text.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserForFile, NO_CHROMIUM } from "../helpers/browser.js";
import { pasteInto } from "../helpers/paste.js";
import { FIXTURE, httpClient, ROOT, runCli, type Served, serve, tempDir } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const HOSTILE = join(ROOT, "test/fixtures/hostile-server.mjs");
const tokens = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n.toLocaleString("en-US"));

async function open(page: Page, base: string, query = ""): Promise<void> {
  await page.goto(`${base}/ui${query ? `?${query}` : ""}`);
  await page.waitForSelector("body[data-ready=true]");
}

const card = (page: Page, name: string) => page.locator(`[data-toolset="${name}"]`);
const toggle = (page: Page, name: string) =>
  card(page, name).locator(`#ts-${name.replace(/\./g, "\\.")}-switch`);
const checked = (page: Page, name: string) => toggle(page, name).getAttribute("aria-checked");
/** Waits until the page has done what was asked (it marks the body while actions are queued). */
const settled = (page: Page) => page.locator("body:not([data-busy])").waitFor();
const selectedTools = (page: Page) => page.locator("#selected-tool-names code").allTextContents();

async function cliJson(args: string[]): Promise<Record<string, unknown>> {
  const run = await runCli(args);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe.skipIf(NO_CHROMIUM !== undefined)(unless(NO_CHROMIUM, "the browser console"), () => {
  const browser = browserForFile();
  const tmp = tempDir();
  let example: Served;
  let fixture: Served;
  let fixtureConfig: string;

  beforeAll(async () => {
    fixtureConfig = tmp.file(
      "packs.yaml",
      [
        "name: console-fixture",
        `audit: { file: ${tmp.dir}/audit.jsonl }`,
        "upstreams:",
        `  fx: { command: node, args: ["${FIXTURE}", "--tools", "echo,add"] }`,
        `  grow: { command: node, args: ["${FIXTURE}", "--tools", "echo", "--grow-after", "1"], prefix: g_ }`,
        `  crash: { command: node, args: ["${FIXTURE}", "--tools", "fail", "--crash-on", "fail"], prefix: c_ }`,
        `  hostile: { command: node, args: ["${HOSTILE}"] }`,
        `  broken: { command: node, args: ["-e", "process.stderr.write('<img src=x onerror=window.__pwned=1>'); process.exit(3)"] }`,
        "toolsets:",
        "  base: { title: Base, description: Echo and add., tools: [fx/echo, fx/add] }",
        "  growing: { title: Growing, description: Its upstream lists late_tool from its second list on., tools: [grow/echo] }",
        "  late: { title: Late, default: false, tools: [grow/late_tool] }",
        "  never: { title: Never, default: false, tools: [fx/add, fx/never_tool] }",
        "  crashy: { title: Crashy, default: false, tools: [crash/fail] }",
        "  hostile: { title: Hostile, default: false, tools: [hostile/pwn_img, hostile/pwn_script] }",
        "  broken: { title: Broken, default: false, tools: [broken/anything] }",
        "",
      ].join("\n"),
    );
    [example, fixture] = await Promise.all([
      serve([join(ROOT, "packs.example.yaml")]),
      serve([fixtureConfig]),
    ]);
  });
  afterAll(async () => {
    await Promise.all([example?.stop(), fixture?.stop()]);
    tmp.cleanup();
  });

  describe("the bundled example", () => {
    let page: Awaited<ReturnType<typeof browser.page>>;
    beforeAll(async () => {
      page = await browser.page();
    });

    test("its first load transfers at most 150 KB compressed", async () => {
      // The file's first visit to the page, in a fresh profile: nothing cached yet (it runs first for that).
      const fresh = await browser.page();
      const cdp = await browser.context().newCDPSession(fresh);
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
      const sizes: Promise<number>[] = [];
      fresh.on("requestfinished", (r) =>
        sizes.push(r.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)),
      );
      await open(fresh, example.base);
      await fresh.waitForLoadState("networkidle");
      const total = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      process.stderr.write(`console first load: ${sizes.length} responses, ${total} bytes\n`);
      expect(total).toBeGreaterThan(0);
      expect(total).toBeLessThanOrEqual(150 * 1024);
      await fresh.close();
    });

    test("has a card per toolset with its tools and costs, and the cost bar beside everything on and everything deferred", async () => {
      await open(page, example.base);
      const report = (await (await fetch(`${example.base}/toolsets`)).json()) as {
        toolsets: { name: string; approx_tokens?: number }[];
        tools: string[];
        approx_tokens: number;
      };
      expect(
        await page
          .locator("[data-toolset]")
          .evaluateAll((els) => els.map((e) => e.getAttribute("data-toolset"))),
      ).toEqual(["basics", "files", "notes", "diagnostics"]);
      expect(await checked(page, "basics")).toBe("true");
      expect(await checked(page, "files")).toBe("true");
      expect(await checked(page, "notes")).toBe("false");
      expect(await checked(page, "diagnostics")).toBe("false");
      for (const t of report.toolsets.filter((x) => x.approx_tokens !== undefined))
        await expect
          .poll(() => card(page, t.name).locator(".status").textContent())
          .toContain(`≈${tokens(t.approx_tokens!)} tokens`);
      expect(await selectedTools(page)).toEqual(report.tools);
      expect(await page.locator("#url").textContent()).toBe(`${example.base}/mcp`);
      await expect
        .poll(() => page.locator("[data-cost=selection]").textContent())
        .toContain(`≈${tokens(report.approx_tokens)} tokens`);

      // Nothing has started the memory server yet: its card says so, and the totals say what they leave out.
      await expect
        .poll(() => card(page, "notes").locator("summary").textContent())
        .toBe("Tools not listed yet");
      expect(await page.locator("#costs").textContent()).toContain(
        "Not counted (their upstreams have not listed yet): notes.",
      );
      await card(page, "notes").locator("summary").click();
      await card(page, "notes").getByRole("button", { name: "List its tools" }).click();
      await expect
        .poll(() => card(page, "notes").locator("summary").textContent(), { timeout: 20_000 })
        .toBe("9 tools");
      expect(await page.locator("#costs").textContent()).not.toContain("Not counted");

      // Every toolset on, and everything deferred, are what the CLI counts with every upstream asked.
      const config = join(ROOT, "packs.example.yaml");
      const all = await cliJson(["toolsets", config, "--live", "--json"]);
      const everything = all.everything as { tools: number; approx_tokens: number };
      const deferred = await cliJson([
        "toolsets",
        config,
        "--select",
        "only=basics,files,notes,diagnostics&defer=all",
        "--live",
        "--json",
      ]);
      expect(await page.locator("[data-cost=everything] .bar-value").textContent()).toBe(
        `≈${tokens(everything.approx_tokens)} tokens · ${everything.tools} tools`,
      );
      expect(await page.locator("[data-cost=deferred] .bar-value").textContent()).toBe(
        `≈${tokens(deferred.approx_tokens as number)} tokens · ${(deferred.tools as string[]).length} tools`,
      );

      // A tool's description is the one its upstream lists.
      const client = await httpClient(`${example.base}/mcp`);
      const echo = (await client.listTools()).tools.find((t) => t.name === "echo")!;
      await client.close();
      await card(page, "basics").locator("summary").click();
      const line = card(page, "basics").locator("li", { has: page.locator("code", { hasText: /^echo$/ }) });
      expect(await line.locator(".tool-desc").textContent()).toBe(echo.description);
      await browser.shot(page, "example");
    });

    test("switches are labelled switches a keyboard can move, focus is visible, and it fits 360 px and dark mode", async () => {
      await open(page, example.base);
      await expect.poll(() => page.getByRole("switch", { name: "Notes", exact: true }).count()).toBe(1);
      expect(await page.getByRole("switch", { name: "Deferred Basics", exact: true }).count()).toBe(1);
      for (const s of await page.locator("[role=switch]").all()) {
        expect(await s.getAttribute("aria-checked")).toMatch(/^(true|false)$/);
        expect(await s.getAttribute("aria-labelledby")).toBeTruthy();
      }
      await toggle(page, "notes").focus();
      await page.keyboard.press("Shift+Tab");
      await page.keyboard.press("Tab");
      expect(await page.evaluate<string>("document.activeElement.id")).toBe("ts-notes-switch");
      expect(await page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle")).not.toBe(
        "none",
      );
      await page.keyboard.press("Space");
      await settled(page);
      await expect.poll(() => checked(page, "notes"), { timeout: 20_000 }).toBe("true");
      expect(await page.evaluate<string>("document.activeElement.id")).toBe("ts-notes-switch");
      expect(await page.locator("#url").textContent()).toBe(`${example.base}/mcp?notes`);
      await browser.shot(page, "console", false);
      await expect.poll(() => page.locator("#announce").textContent()).toBe("Notes is on");

      await page.setViewportSize({ width: 360, height: 800 });
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(360);
      await browser.shot(page, "example-360");
      await page.emulateMedia({ colorScheme: "dark" });
      const bg = await page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
      const [r, g, b] = bg.match(/\d+/g)!.map(Number);
      expect(r! + g! + b!).toBeLessThan(150);
      await page.setViewportSize({ width: 1280, height: 900 });
      await browser.shot(page, "example-dark");
      await page.emulateMedia({ colorScheme: "light" });
    });
  });

  describe("the defer switch", () => {
    test("deferring a toolset that is on spells the URL with defer= and moves its tools behind find_tools; undeferring undoes it", async () => {
      const page = await browser.page();
      await open(page, fixture.base);
      const defer = card(page, "base").locator("#ts-base-defer");
      expect(await defer.getAttribute("aria-checked")).toBe("false");
      const listed = await selectedTools(page);
      expect(listed).toEqual(expect.arrayContaining(["echo", "add"]));
      expect(listed).not.toContain("find_tools");
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp`);

      await defer.click();
      await settled(page);
      expect(await defer.getAttribute("aria-checked")).toBe("true");
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp?defer=base`);
      const deferred = await selectedTools(page);
      expect(deferred).not.toContain("echo");
      expect(deferred).not.toContain("add");
      expect(deferred).toEqual(expect.arrayContaining(["find_tools", "call_tool"]));
      expect(await card(page, "base").locator(".status").textContent()).toContain("deferred (find_tools)");
      // The URL it offers gives a real client exactly that list.
      const client = await httpClient(`${fixture.base}/mcp?defer=base`);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(deferred);
      await client.close();

      await defer.click();
      await settled(page);
      expect(await defer.getAttribute("aria-checked")).toBe("false");
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp`);
      expect(await selectedTools(page)).toEqual(listed);
      expect(page.errors).toEqual([]);
      await page.close();
    });
  });

  describe("switches against upstreams whose lists change", () => {
    let page: Awaited<ReturnType<typeof browser.page>>;
    beforeAll(async () => {
      page = await browser.page();
      await open(page, fixture.base);
    });

    test("a toolset whose member appears only after a refresh switches on", async () => {
      expect(await checked(page, "late")).toBe("false");
      expect(await card(page, "late").locator(".problem").textContent()).toContain("missing: grow/late_tool");
      await toggle(page, "late").click();
      await settled(page);
      expect(await checked(page, "late")).toBe("true");
      expect(await card(page, "late").locator(".problem").isHidden()).toBe(true);
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp?late`);
      expect(await selectedTools(page)).toContain("g_late_tool");
    });

    test("a toolset whose member never appears stays off and names it", async () => {
      await toggle(page, "never").click();
      await settled(page);
      expect(await checked(page, "never")).toBe("false");
      expect(await card(page, "never").locator(".problem").textContent()).toBe(
        "Stays off: missing: fx/never_tool",
      );
      await expect
        .poll(() => page.locator("#announce").textContent())
        .toBe("Never stays off: missing: fx/never_tool");
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp?late`);
      expect(await selectedTools(page)).not.toContain("never_tool");
    });

    test("switching off always works: at once, even while toolpacks cannot be reached, and after its upstream died", async () => {
      await page.route("**/ui/api/**", (route) => route.abort());
      await toggle(page, "growing").click();
      expect(await checked(page, "growing")).toBe("false");
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp?only=base,late`);
      await expect.poll(() => page.locator("#notice").textContent()).toContain("toolpacks cannot be reached");
      await page.unroute("**/ui/api/**");

      await toggle(page, "crashy").click();
      await settled(page);
      expect(await checked(page, "crashy")).toBe("true");
      const client = await httpClient(`${fixture.base}/mcp?only=crashy`);
      await client.callTool({ name: "c_fail", arguments: {} }).catch(() => {});
      await client.close();
      // Its upstream is gone: the live panel notices, the card says why, and the switch is off.
      await expect.poll(() => checked(page, "crashy"), { timeout: 20_000 }).toBe("false");
      expect(await card(page, "crashy").locator(".problem").textContent()).toMatch(
        /^Stays off: upstream unavailable: /,
      );
      expect(await page.locator("#url").textContent()).toBe(`${fixture.base}/mcp?only=base,late`);
      await browser.shot(page, "fixture");
    });

    test("the URL and every client config it offers, pasted into real clients, list exactly the selected tools", async () => {
      const want = await selectedTools(page);
      expect(want).toEqual(["echo", "add", "g_late_tool", "list_server_toolsets"]);
      const url = (await page.locator("#url").textContent())!;
      const client = await httpClient(url);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(want);
      await client.close();
      const ids = await page
        .locator("[data-snippet]")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-snippet")!));
      expect(ids).toEqual([
        "claude-desktop",
        "claude-code",
        "cursor",
        "vscode-http",
        "vscode-stdio",
        "inspector",
        "toolsets-cli",
      ]);
      const elsewhere = tempDir();
      try {
        for (const id of ids) {
          const text = (await page.locator(`#snippet-${id}`).textContent())!;
          const pasted = await pasteInto(id, text, { cwd: elsewhere.dir, env: {} });
          expect(pasted.tools, `${id}: ${pasted.target}`).toEqual(want);
        }
      } finally {
        elsewhere.cleanup();
      }
    });

    test("what an upstream writes is shown as text and runs nothing", async () => {
      await toggle(page, "hostile").click();
      await settled(page);
      expect(await checked(page, "hostile")).toBe("true");
      const hostile = card(page, "hostile");
      await hostile.locator("summary").click();
      expect(await hostile.locator(".tool-title").allTextContents()).toEqual([
        ` <b>bold</b> <img src=x onerror="window.__pwned='img'">`,
        ` <script>window.__pwned='script'</script>`,
      ]);
      expect(await hostile.locator(".tool-desc").first().textContent()).toBe(
        `Loads an image: <img src=x onerror="window.__pwned='img'">`,
      );
      await toggle(page, "broken").click();
      await settled(page);
      expect(await card(page, "broken").locator(".problem").textContent()).toContain(
        "<img src=x onerror=window.__pwned=1>",
      );
      expect(await page.locator("main img, main script, main b, a[href^=javascript]").count()).toBe(0);
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(page.errors).toEqual([]);
      await browser.shot(page, "hostile");
    });

    test("the live panel counts sessions and calls per toolset, and lists the audit log's latest calls", async () => {
      const client = await httpClient(`${fixture.base}/mcp?only=base`);
      await client.callTool({ name: "echo", arguments: { text: "one" } });
      await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
      await expect
        .poll(() => page.locator('[data-calls="base"] td').first().textContent(), { timeout: 20_000 })
        .toBe("2");
      expect(await page.locator('#sessions [data-selection="base"]').textContent()).toBe(
        "base 1 open session",
      );
      expect(await page.locator("#recent").textContent()).toMatch(/echo \(base\)ok/);
      await client.close();
    });
  });
});
