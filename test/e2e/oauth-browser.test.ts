/**
 * A handed-out per-user link in a real browser (chromium through playwright-core): the page names whose account
 * it binds, nothing happens until the person continues, and continuing goes through the authorization server
 * (oidc-provider's sign-in and consent pages) back to toolpacks, whose grant is then that principal's.
 */

import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CHROMIUM, NO_CHROMIUM } from "../helpers/browser.js";
import { type AuthServer, type Protected, startAuthServer, startProtectedServer } from "../helpers/oauth.js";
import { httpClient, type Served, serve, tempDir, toolNames, until } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const tmp = tempDir();
const TOKENS = { BOB_TOKEN: "bob-token-1Qz7Wd4Lm", ALICE_TOKEN: "alice-token-8Tp3Xv6Nc" };
let as: AuthServer;
let mcp: Protected;
let mcpUrl = "";
let served: Served;

describe.skipIf(NO_CHROMIUM !== undefined)(unless(NO_CHROMIUM, "the start page in a real browser"), () => {
  beforeAll(async () => {
    as = await startAuthServer({ resource: () => mcpUrl });
    mcp = await startProtectedServer(as.issuer);
    mcpUrl = mcp.url;
    const file = tmp.file(
      "packs.yaml",
      `state_dir: ${join(tmp.dir, "state")}
auth:
  tokens:
    - { token: "\${BOB_TOKEN}", subject: bob }
    - { token: "\${ALICE_TOKEN}", subject: alice }
upstreams:
  tools:
    url: ${mcpUrl}
    oauth: { mode: per-user }
toolsets:
  me:
    tools: [tools/whoami]
`,
    );
    served = await serve([file], { TOOLPACKS_TOKEN_KEY: randomBytes(32).toString("base64"), ...TOKENS });
  });
  afterAll(async () => {
    await served?.stop();
    await mcp?.stop();
    await as?.stop();
    tmp.cleanup();
  });

  const whoami = async (c: Client) =>
    ((await c.callTool({ name: "whoami", arguments: {} })).structuredContent as { sub: string }).sub;

  test("a person opens their link, is told whose account it binds, continues, signs in at the authorization server, and their calls then run as that account", async () => {
    const { chromium } = await import("playwright-core");
    const bob = await httpClient(served.url(), {}, { authorization: `Bearer ${TOKENS.BOB_TOKEN}` });
    const url = ((await whoami(bob).catch((e: McpError) => e)) as McpError).data as { url: string };
    const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage();
      await page.goto(url.url);
      expect(await page.locator("h1").textContent()).toBe("Connect tools for bob?");
      expect(await page.textContent("body")).toContain("If you are not bob");
      await page.click("button[type=submit]");
      // oidc-provider's dev interactions: sign in, then consent.
      for (let step = 0; step < 6 && !page.url().startsWith(`${served.base}/oauth/callback`); step++) {
        await page.waitForLoadState();
        if (await page.locator("input[name=login]").count()) {
          await page.fill("input[name=login]", "bob-at-as");
          await page.fill("input[name=password]", "any");
        }
        if (page.url().startsWith(`${served.base}/oauth/callback`)) break;
        await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      }
      expect(await page.textContent("body")).toContain("You can close this window");
    } finally {
      await browser.close();
    }
    await until(async () => (await toolNames(bob)).includes("whoami"), "bob's grant in use");
    expect(await whoami(bob)).toBe("bob-at-as");
    await bob.close();
  });
});
