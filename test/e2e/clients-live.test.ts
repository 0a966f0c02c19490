/**
 * What `toolpacks toolsets --client NAME --live` says when a profile defers, through the real CLI over a real
 * fixture server: why nothing is saved, and whether a list still over its caps is served as it is or deferred.
 */
import { afterAll, describe, expect, test } from "vitest";
import { FIXTURE, runCli, tempDir } from "../helpers/proc.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `upstreams:
  main:
    command: node
    args: [${JSON.stringify(FIXTURE)}, "--tools", "echo,add,slow,fail"]
toolsets:
  fx: { tools: [main/echo] }
  fy: { tools: [main/add, main/slow, main/fail] }
clients:
  - client: tiny
    max_tools: 2
  - client: stubborn
    max_tools: 2
    defer: none
`,
);
afterAll(() => tmp.cleanup());

async function live(client: string): Promise<string> {
  const run = await runCli(["toolsets", config, "--client", client, "--live"]);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

describe("toolsets --live under a profile that defers", () => {
  test("with every toolset deferred and the search tools the bigger, it says so, not that a toolset conflicts", async () => {
    const out = await live("tiny");
    expect(out).toContain("deferred by profile: fx, fy");
    expect(out).toMatch(
      /^saving: none \(find_tools and call_tool cost more than the deferral saves: ≈\d+ tokens a turn more than listing every tool\)$/m,
    );
    expect(out).not.toContain("conflicts");
    expect(out).toMatch(
      /^over its caps: max_tools 2: 3 tools are listed \(even with every toolset it may defer deferred: served with them deferred\)$/m,
    );
    expect(out).not.toContain("served as it is");
  });

  test("only a profile that defers nothing (defer: none) is served as it is", async () => {
    const out = await live("stubborn");
    expect(out).toMatch(/^over its caps: max_tools 2: 5 tools are listed \(defer none: served as it is\)$/m);
    expect(out).not.toContain("deferred by profile");
  });
});
