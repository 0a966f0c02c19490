/**
 * The console's card code (src/console/page/cards.ts, bundled as the page bundles it) in Debian's chromium, drawing
 * payloads the real resolver made: a toolset waiting for an authorization links to where to authorize only when
 * that is an http(s) URL; any other scheme an upstream's metadata names is shown as text, never as a link.
 */
import { join } from "node:path";
import { build } from "rolldown";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Inventory } from "../../src/catalog/inventory.js";
import { consolePayload } from "../../src/console/payload.js";
import type { ConsoleSource } from "../../src/console/source.js";
import type { ServerInfo } from "../../src/console/wire.js";
import { resolveEverything, toolsetsReport } from "../../src/report.js";
import { resolve } from "../../src/resolve.js";
import { select } from "../../src/selection.js";
import { browserForFile, NO_CHROMIUM } from "../helpers/browser.js";
import { catalogOf, inventoryOf } from "../helpers/catalog.js";
import { ROOT, tempDir } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const catalog = catalogOf(`
upstreams:
  mail: { command: mail-server }
  chat: { command: chat-server }
  drive: { url: "https://drive.example/mcp" }
  sly: { url: "https://sly.example/mcp" }
toolsets:
  mail: { title: Mail, tools: [mail/*] }
  chat: { title: Chat, tools: [chat/*] }
  drive: { title: Drive, tools: [drive/*] }
  sly: { title: Sly, tools: [sly/*] }
`);

const waiting = (authorizeUrl: string) =>
  ({ status: "unavailable", reason: "waiting for an authorization", authorizeUrl }) as const;
const known: Inventory = new Map([
  ...inventoryOf({ mail: ["send", "read"], chat: ["read", "post"] }),
  ["drive", waiting("https://auth.example/authorize?client_id=toolpacks")],
  ["sly", waiting("javascript:window.__pwned=1")],
]);

/** The console's payload for a bare URL over that inventory, as the server would send it. */
function payload() {
  const r = select(catalog, "");
  if (!r.ok) throw new Error(r.error);
  const selection = r.selection;
  const resolution = resolve(catalog, selection, known);
  const instances = [...known].map(([upstream, state]) => ({ upstream, kind: "shared" as const, state }));
  const report = toolsetsReport(
    catalog,
    selection,
    resolution,
    [],
    resolveEverything(
      catalog,
      instances.map((i) => ({ ref: { kind: i.kind, upstream: i.upstream }, state: i.state })),
    ),
  );
  const source = { catalog, extraTools: () => [] } as unknown as ConsoleSource;
  return consolePayload(
    source,
    { selection, report, resolution, instances },
    { name: "t" } as ServerInfo,
    "",
  );
}

describe.skipIf(NO_CHROMIUM !== undefined)(unless(NO_CHROMIUM, "the console's cards"), () => {
  const browser = browserForFile();
  const tmp = tempDir();
  let bundle: string;

  beforeAll(async () => {
    const page = join(ROOT, "src/console/page");
    const entry = tmp.file(
      "entry.ts",
      `import { Cards } from ${JSON.stringify(join(page, "cards.ts"))};
import { Model } from ${JSON.stringify(join(page, "model.ts"))};
globalThis.draw = (p) => {
  const model = new Model();
  model.start(p);
  new Cards(document.getElementById("cards"), { toggle() {}, toggleDefer() {}, list() {} }).update(model);
};
`,
    );
    const out = await build({
      input: entry,
      write: false,
      resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
      platform: "browser",
      output: { format: "iife" },
      logLevel: "warn",
    });
    bundle = out.output[0].code;
  });
  afterAll(() => tmp.cleanup());

  test("a card waiting for an authorization links to an http(s) URL only; another scheme is text", async () => {
    const page = await browser.page();
    await page.setContent('<main id="cards"></main><div id="announce"></div>');
    await page.addScriptTag({ content: bundle });
    await page.evaluate((p) => (globalThis as unknown as { draw(p: unknown): void }).draw(p), payload());

    const problem = (name: string) => page.locator(`[data-toolset="${name}"] .problem`);
    expect(await problem("chat").textContent()).toMatch(/^Stays off: conflict: exposed name read/);
    expect(await problem("drive").textContent()).toMatch(
      /^Stays off: waiting for an authorization: .* authorize$/,
    );
    const a = problem("drive").locator("a");
    expect(await a.getAttribute("href")).toBe("https://auth.example/authorize?client_id=toolpacks");
    expect(await a.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await a.textContent()).toBe("authorize");

    expect(await problem("sly").locator("a").count()).toBe(0);
    expect(await problem("sly").locator("code").textContent()).toBe("javascript:window.__pwned=1");
    expect(await page.locator("a[href^=javascript]").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(page.errors).toEqual([]);
  });
});
