/**
 * What a session is told of its own selection, in process: list_server_toolsets in either era, and the server's
 * log line of a session that asked for toolsets it does not get. The real core behind its real HTTP edge.
 */
import { afterEach, describe, expect, test } from "vitest";
import { createLogger } from "../../src/log.js";
import { call2025, type InProcess, initialize, inProcess, modern } from "../helpers/in-process.js";

const YAML = `
upstreams:
  main: { command: in-process }
toolsets:
  a: { tools: [main/echo] }
  notes: { default: false, tools: [main/add, main/create_note] }
`;

const open: InProcess[] = [];
afterEach(async () => {
  for (const tp of open.splice(0)) await tp.close();
});

function served(options = {}): InProcess {
  const tp = inProcess(YAML, options);
  open.push(tp);
  return tp;
}

type Report = { unknown: string[]; unavailable?: { name: string; missing: string[] }[] };
const reportOf = (r: { answer?: { result?: Record<string, unknown> } }) =>
  r.answer?.result?.structuredContent as Report;

describe("list_server_toolsets names the request's unknown toolsets", () => {
  test("2026-07-28: ?only=a,bogus lists bogus, even when ?only=a made the context first", async () => {
    const { toolpacks } = served();
    const ask = (query: string) =>
      modern(toolpacks, "tools/call", { name: "list_server_toolsets", arguments: {} }, { query });
    expect(reportOf(await ask("only=a")).unknown).toEqual([]);
    expect(reportOf(await ask("only=a,bogus")).unknown).toEqual(["bogus"]);
    expect(reportOf(await ask("only=a,other")).unknown).toEqual(["other"]);
    expect(reportOf(await ask("only=a")).unknown).toEqual([]);
  });

  test("2025: a session's report lists the unknown names of its URL", async () => {
    const { toolpacks } = served();
    const session = await initialize(toolpacks, { query: "only=a,bogus" });
    expect(reportOf(await call2025(toolpacks, session, "list_server_toolsets")).unknown).toEqual(["bogus"]);
  });
});

describe("the server's log", () => {
  test("a session's not_enabled names each toolset's missing members, as list_server_toolsets does", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ format: "json", write: (l) => void lines.push(JSON.parse(l)) });
    const { toolpacks } = served({ logger });
    const session = await initialize(toolpacks, { query: "only=a,notes" });
    const report = reportOf(await call2025(toolpacks, session, "list_server_toolsets"));
    expect(report.unavailable).toMatchObject([{ name: "notes", missing: ["main/create_note"] }]);
    const opened = lines.find((l) => l.msg === "session opened");
    expect(opened?.not_enabled).toEqual(["notes: missing main/create_note"]);
  });
});
