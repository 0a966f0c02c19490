/**
 * What a server/discover probe's outcome says about an upstream's era: the SDK v2 client's verdicts
 * (client/src/client/probeClassifier.ts), case by case, and the one correction a -32022 allows.
 */
import { describe, expect, test } from "vitest";
import { classifyProbe, type ProbeOutcome, probeWith } from "../../src/upstream/probe.js";

const discover = (supportedVersions: string[]) => ({
  resultType: "complete",
  supportedVersions,
  capabilities: { tools: { listChanged: true } },
  _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } },
});
const rpc = (code: number, data?: unknown): ProbeOutcome => ({ kind: "rpc-error", code, message: "m", data });
const http = (status: number, body = ""): ProbeOutcome => ({ kind: "http-error", status, body });
const body = (code: number, data?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message: "m", data } });

describe("a probe's outcome", () => {
  test.each<[string, ProbeOutcome, "http" | "stdio", string]>([
    [
      "a DiscoverResult sharing 2026-07-28 is modern",
      { kind: "result", result: discover(["2026-07-28"]) },
      "http",
      "modern",
    ],
    [
      "a DiscoverResult sharing no version is legacy",
      { kind: "result", result: discover(["2027-01-01"]) },
      "http",
      "legacy",
    ],
    [
      "a result that is no DiscoverResult is legacy",
      { kind: "result", result: { tools: [] } },
      "http",
      "legacy",
    ],
    [
      "-32022 listing 2026-07-28 is a retry at it",
      rpc(-32022, { supported: ["2026-07-28"] }),
      "http",
      "corrective",
    ],
    [
      "-32022 listing only 2025 versions is legacy",
      rpc(-32022, { supported: ["2025-11-25"] }),
      "http",
      "legacy",
    ],
    [
      "-32022 listing only modern versions we lack is an error",
      rpc(-32022, { supported: ["2027-01-01"] }),
      "http",
      "error",
    ],
    ["-32022 without a supported list is legacy", rpc(-32022), "http", "legacy"],
    ["-32601 is legacy", rpc(-32601), "stdio", "legacy"],
    ["-32000 (no session) is legacy", rpc(-32000), "http", "legacy"],
    ["-32001, -32020 and -32021 are no era evidence: legacy", rpc(-32021), "http", "legacy"],
    ["HTTP 401 is an auth error, never an era", http(401, body(-32601)), "http", "error"],
    ["HTTP 403 is an auth error, never an era", http(403), "http", "error"],
    [
      "HTTP 5xx is a failure, not legacy",
      http(503, body(-32022, { supported: ["2025-11-25"] })),
      "http",
      "error",
    ],
    ["a 400 with toolpacks' 2025 refusal is legacy", http(400, body(-32000)), "http", "legacy"],
    [
      "a 400 carrying -32022 with 2026-07-28 is a retry",
      http(400, body(-32022, { supported: ["2026-07-28"] })),
      "http",
      "corrective",
    ],
    ["a 404 without a JSON-RPC body is legacy", http(404, "Not Found"), "http", "legacy"],
    [
      "an HTTP network error is a failure",
      { kind: "network-error", message: "ECONNREFUSED" },
      "http",
      "error",
    ],
    ["an HTTP timeout is a failure (silence is an outage)", { kind: "timeout", ms: 1000 }, "http", "error"],
    ["a stdio timeout is legacy (silence on a pipe)", { kind: "timeout", ms: 1000 }, "stdio", "legacy"],
    ["a stdio probe process that exits is legacy", { kind: "closed" }, "stdio", "legacy"],
    ["an HTTP connection closed mid-probe is a failure", { kind: "closed" }, "http", "error"],
  ])("%s", (_name, outcome, transport, kind) => {
    expect(classifyProbe(outcome, transport).kind).toBe(kind);
  });

  test("an auth refusal says it is about credentials", () => {
    const verdict = classifyProbe(http(401), "http");
    expect(verdict).toMatchObject({ kind: "error", auth: true });
    expect(verdict.kind === "error" && verdict.message).toMatch(/credentials/);
  });
});

describe("a probe exchange", () => {
  test("follows one -32022 correction, at the version it names", async () => {
    const asked: string[] = [];
    const verdict = await probeWith(async (version) => {
      asked.push(version);
      return asked.length === 1
        ? rpc(-32022, { supported: ["2026-07-28"], requested: version })
        : { kind: "result", result: discover(["2026-07-28"]) };
    }, "http");
    expect(verdict.kind).toBe("modern");
    expect(asked).toEqual(["2026-07-28", "2026-07-28"]);
  });

  test("a second correction is an error, not a loop", async () => {
    let asked = 0;
    const verdict = await probeWith(async () => {
      asked++;
      return rpc(-32022, { supported: ["2026-07-28"] });
    }, "http");
    expect(verdict.kind).toBe("error");
    expect(asked).toBe(2);
  });
});
