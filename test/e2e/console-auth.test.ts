/**
 * The browser console with `auth:` (SPEC §17.4): it refuses without a token, keeps a token in the tab only and never
 * shows it, and shows a scoped principal only its toolsets: a forbidden one is a card that says what it needs.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserForFile, NO_CHROMIUM } from "../helpers/browser.js";
import { FIXTURE, type Served, serve, tempDir } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const ADMIN = "admin-console-token-1234";
const ALICE = "alice-console-token-1234";

describe.skipIf(NO_CHROMIUM !== undefined)(unless(NO_CHROMIUM, "the browser console with auth:"), () => {
  const browser = browserForFile();
  const tmp = tempDir();
  let served: Served;

  beforeAll(async () => {
    const config = tmp.file(
      "packs.yaml",
      [
        "name: console-auth",
        "auth:",
        "  tokens:",
        `    - { token: "\${ADMIN_TOKEN}", subject: admin, scopes: [notes, admin] }`,
        `    - { token: "\${ALICE_TOKEN}", subject: alice, scopes: [notes] }`,
        "upstreams:",
        `  fx: { command: node, args: ["${FIXTURE}", "--tools", "echo,add,fail", "--whoami"] }`,
        "toolsets:",
        "  open: { title: Open, tools: [fx/echo] }",
        "  notes: { title: Notes, tools: [fx/add], requires: { scopes: [notes] } }",
        "  admin: { title: Admin, tools: [fx/whoami], requires: { scopes: [admin] } }",
        "",
      ].join("\n"),
    );
    served = await serve([config], { ADMIN_TOKEN: ADMIN, ALICE_TOKEN: ALICE });
  });
  afterAll(async () => {
    await served?.stop();
    tmp.cleanup();
  });

  test("the page refuses without a token, and its data needs one like every route", async () => {
    for (const path of ["/ui/api/toolsets", "/ui/api/live", "/ui/api/recheck/open"]) {
      const res = await fetch(`${served.base}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    const page = await browser.page();
    await page.goto(`${served.base}/ui`);
    await page.locator("#token").waitFor();
    expect(await page.locator("#app").isHidden()).toBe(true);
    expect(await page.locator("[data-toolset]").count()).toBe(0);
    await page.locator("#token").fill("not-a-token-at-all");
    await page.locator("#token-form button").click();
    await expect.poll(() => page.locator("#token-why").textContent()).toMatch(/^That token was refused/);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.close();
  });

  test("a scoped principal sees only its toolsets; the token stays in the tab and is never shown", async () => {
    const page = await browser.page();
    await page.goto(`${served.base}/ui`);
    await page.locator("#token").fill(ALICE);
    await page.locator("#token-form button").click();
    await page.waitForSelector("body[data-ready=true]");
    const names = await page
      .locator("[data-toolset]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-toolset")));
    expect(names).toEqual(["open", "notes", "admin"]);
    expect(await page.locator("#ts-notes-switch").getAttribute("aria-checked")).toBe("true");
    const admin = page.locator('[data-toolset="admin"]');
    expect(await admin.locator("#ts-admin-switch").getAttribute("aria-disabled")).toBe("true");
    expect(await admin.locator(".problem").textContent()).toBe("forbidden: needs the scope admin");
    expect(await admin.locator("details").isHidden()).toBe(true);
    // Nothing of the forbidden toolset's tools, in the page or in its data.
    expect(await page.locator("body").textContent()).not.toContain("whoami");
    const data = await (
      await fetch(`${served.base}/ui/api/toolsets`, { headers: { authorization: `Bearer ${ALICE}` } })
    ).text();
    expect(data).not.toContain("whoami");
    expect(data).not.toContain(ALICE);
    expect(await page.locator("[data-upstream=fx] .unclaimed").count()).toBe(0);
    // The switch of a forbidden toolset does not move.
    await admin.locator("#ts-admin-switch").click({ force: true });
    expect(await admin.locator("#ts-admin-switch").getAttribute("aria-checked")).toBe("false");
    await expect
      .poll(() => page.locator("#announce").textContent())
      .toBe("Admin is forbidden to you: needs the scope admin");

    expect(await page.evaluate("sessionStorage.length")).toBe(1);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(await page.content()).not.toContain(ALICE);
    const snippet = await page.locator("#snippet-claude-code").textContent();
    expect(snippet).toContain('--header "Authorization: Bearer $TOOLPACKS_TOKEN"');
    await browser.shot(page, "auth-scoped");
    // Another tab has its own session storage: it asks again.
    const other = await browser.page();
    await other.goto(`${served.base}/ui`);
    await other.locator("#token").waitFor();
    await other.close();
    await page.close();
  });

  test("a principal with every grant sees every toolset's tools and the tools no toolset claims", async () => {
    const page = await browser.page();
    await page.goto(`${served.base}/ui`);
    await page.locator("#token").fill(ADMIN);
    await page.locator("#token-form button").click();
    await page.waitForSelector("body[data-ready=true]");
    const admin = page.locator('[data-toolset="admin"]');
    expect(await admin.locator("#ts-admin-switch").getAttribute("aria-checked")).toBe("true");
    await admin.locator("summary").click();
    expect(await admin.locator(".tool-name").allTextContents()).toEqual(["whoami"]);
    expect(await page.locator("[data-upstream=fx] .unclaimed li").allTextContents()).toEqual(["fail"]);
    await page.locator("#forget-token").click();
    await page.locator("#token").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.close();
  });
});
