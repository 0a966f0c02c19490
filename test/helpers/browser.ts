/**
 * Debian's chromium, driven by playwright-core (which downloads no browser): one browser per test file, with a
 * fresh profile, started before the file's tests and closed after them; pages are made from it as tests need.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ROOT } from "./proc.js";

/** Where Debian's chromium may be (the launcher script, or the binary itself), in the order tried: as `.ci/run` checks. */
const CHROMIUM_PATHS = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"] as const;

/** The first of the places chromium may be that exists, or undefined. */
export function chromiumAt(exists: (path: string) => boolean = existsSync): string | undefined {
  return CHROMIUM_PATHS.find((p) => exists(p));
}

/** The chromium the browser tests drive (undefined: not installed). */
export const CHROMIUM = chromiumAt();

/** Why the browser tests cannot run here (in CI they run anyway, and fail), or undefined. */
export const NO_CHROMIUM =
  CHROMIUM || process.env.CI
    ? undefined
    : "chromium is not installed: apt-get install -y chromium (.ci/run does), then run this file again";

/** Where the console tests write their screenshots (PNG), kept after the run. */
const SCREENSHOTS = join(ROOT, ".toolpacks-tmp", "console-screenshots");

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function browserForFile(): {
  context(): BrowserContext;
  /** A new tab (its own sessionStorage), with page errors collected. */
  page(viewport?: { width: number; height: number }): Promise<Page & { errors: string[] }>;
  /** A PNG of the page (all of it, or what the window shows) into SCREENSHOTS. */
  shot(page: Page, name: string, fullPage?: boolean): Promise<string>;
} {
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  beforeAll(async () => {
    if (NO_CHROMIUM) return;
    profile = mkdtempSync(join(tmpdir(), "toolpacks-chromium-"));
    // launchPersistentContext passes the profile as --user-data-dir.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM!,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
      // No transitions: a screenshot shows a switch where it ends, not half way.
      reducedMotion: "reduce",
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });
  return {
    context: () => context!,
    page: async (viewport) => {
      const page = (await context!.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on("pageerror", (e) => page.errors.push(e.message));
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    shot: async (page, name, fullPage = true) => {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage });
      return path;
    },
  };
}
