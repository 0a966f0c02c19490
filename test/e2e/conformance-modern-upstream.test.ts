/**
 * The conformance 0.2 server suite at 2026-07-28 through `toolpacks serve` in front of the native 2026-07-28
 * fixture (test/fixtures/modern-server.mjs), over HTTP and over stdio: toolpacks finds the upstream's era by server/discover and speaks
 * to it statelessly, so a 2026-07-28 client's requests pass through (bridge B2): `input_required` with the
 * upstream's own input keys, its `requestState` wrapped in toolpacks' signed one, the retry by route.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  MODERN_FIXTURE,
  type ModernServer,
  runModernConformance,
  startModernServer,
} from "../helpers/modern.js";
import { type Served, serve, tempDir } from "../helpers/proc.js";

/** Scenarios of conformance 0.2.0-alpha.12 that apply at 2026-07-28 (`--suite all`, extensions excluded). */
const MODERN_SCENARIOS = 40;

describe.each(["http", "stdio"] as const)("a 2026-07-28 upstream over %s", (transport) => {
  const tmp = tempDir();
  let upstream: ModernServer | undefined;
  let served: Served;
  beforeAll(async () => {
    let spec: string;
    if (transport === "http") {
      upstream = await startModernServer();
      spec = `url: ${upstream.url}`;
    } else {
      spec = `command: ${process.execPath}\n    args: [${MODERN_FIXTURE}, --stdio]`;
    }
    const config = tmp.file("packs.yaml", `name: conformance-gateway\nupstreams:\n  conf:\n    ${spec}\n`);
    served = await serve([config]);
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
    await upstream?.stop();
    tmp.cleanup();
  });

  test("the 2026-07-28 suite passes through toolpacks (B2, a shared upstream)", {
    timeout: 240_000,
  }, async () => {
    const run = await runModernConformance([
      "--url",
      served.url(),
      "--spec-version",
      "2026-07-28",
      "--timeout",
      "120000",
    ]);
    console.log(
      `conformance 0.2, 2026-07-28, through toolpacks, modern-server.mjs over ${transport}: ${run.tally}`,
    );
    const failing = run.scenarios.filter((s) => !s.pass).map((s) => s.name);
    expect(failing, run.out).toEqual([]);
    expect(run.scenarios).toHaveLength(MODERN_SCENARIOS);
  });
});
