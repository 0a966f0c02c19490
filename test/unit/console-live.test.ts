/** The console's live panel pieces (SPEC §17.3): calls per minute from samples, and the audit log's tail. */
import { appendFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { encodingFor } from "../../src/console/assets.js";
import { auditTail, parseAuditLines } from "../../src/console/audit-tail.js";
import { CallHistory, WINDOW_MINUTES } from "../../src/console/history.js";
import { totalsOf } from "../../src/console/live.js";
import { tempDir } from "../helpers/proc.js";

const MIN = 60_000;
const totals = (ok: number, errors: number) => new Map([["t", [ok, errors] as const]]);

describe("calls per minute", () => {
  test("a minute is the difference of the counts at its two ends", () => {
    const h = new CallHistory();
    h.record(0, totals(0, 0));
    h.record(MIN, totals(5, 1));
    h.record(2 * MIN, totals(7, 1));
    const m = h.minutes(2 * MIN, "t");
    expect(m).toHaveLength(WINDOW_MINUTES);
    expect(m.slice(-2)).toEqual([
      { ok: 5, errors: 1 },
      { ok: 2, errors: 0 },
    ]);
  });

  test("a minute nobody looked at is unknown, not zero", () => {
    const h = new CallHistory();
    h.record(5 * MIN, totals(3, 0));
    const m = h.minutes(5 * MIN + 30_000, "t");
    expect(m.at(-1)).toBeNull();
    expect(m.every((x) => x === null)).toBe(true);
  });

  test("samples closer than 5 s are not kept, and none older than the window but one", () => {
    const h = new CallHistory();
    for (let t = 0; t <= 30 * MIN; t += 1000) h.record(t, totals(t / 1000, 0));
    const m = h.minutes(30 * MIN, "t");
    expect(m.every((x) => x !== null && x.ok === 60)).toBe(true);
    expect((h as unknown as { samples: unknown[] }).samples.length).toBeLessThanOrEqual(
      (WINDOW_MINUTES * 60) / 5 + 2,
    );
  });

  test("a toolset's calls are ok, or errors (a tool's error, a failure, a timeout), cancelled ones neither", () => {
    const t = totalsOf([
      { toolset: "a", outcome: "ok", count: 3 },
      { toolset: "a", outcome: "tool_error", count: 1 },
      { toolset: "a", outcome: "timeout", count: 1 },
      { toolset: "a", outcome: "error", count: 2 },
      { toolset: "a", outcome: "cancelled", count: 9 },
    ]);
    expect(t.get("a")).toEqual([3, 4]);
  });
});

describe("the audit log's latest calls", () => {
  test("are read from the file's end, without arguments, skipping a line cut in half", async () => {
    const tmp = tempDir();
    try {
      const file = `${tmp.dir}/audit.jsonl`;
      writeFileSync(file, "");
      for (let i = 0; i < 3000; i++) {
        appendFileSync(
          file,
          `${JSON.stringify({ time: `t${i}`, subject: "alice", selection: "a", toolset: "a", tool: `tool${i}`, upstream: "u", outcome: "ok", duration_ms: i, session: "abc", arguments: { secret: "x" } })}\n`,
        );
      }
      const lines = await auditTail(file, 5);
      expect(lines.map((l) => l.tool)).toEqual(["tool2995", "tool2996", "tool2997", "tool2998", "tool2999"]);
      expect(JSON.stringify(lines)).not.toContain("secret");
      expect(await auditTail(`${tmp.dir}/none.jsonl`, 5)).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  });

  test("a piece that starts mid-line loses that line only", () => {
    expect(
      parseAuditLines('ol":1}\n{"tool":"x","toolset":"a"}\nnot json\n', false).map((l) => l.tool),
    ).toEqual(["x"]);
  });
});

describe("encodings", () => {
  test.each([
    ["gzip, deflate, br", "br"],
    ["gzip", "gzip"],
    ["br;q=0, gzip", "gzip"],
    [undefined, "identity"],
    ["identity", "identity"],
  ])("%s gets %s", (accept, encoding) => {
    expect(encodingFor(accept)).toBe(encoding);
  });
});
