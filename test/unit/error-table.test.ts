/**
 * The one error table (src/wire/errors.ts): every JSON-RPC error toolpacks makes is a named entry of it, so its
 * codes and messages live in one place. The sources are read as text: a raw code written anywhere else fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { CODE, errors, WireError } from "../../src/wire/errors.js";

const SRC = join(import.meta.dirname, "../../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the error table", () => {
  test("no JSON-RPC error is made with a raw code outside src/wire/errors.ts", () => {
    // An error made from a number literal: rpcError(-32603, …) (over lines too), or a body's `code: -32000`.
    const raw = /rpcError\(\s*-\d|\bcode:\s*-32\d{3}/g;
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const name = relative(SRC, file);
      if (name === "wire/errors.ts") continue;
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(raw)) {
        const line = text.slice(0, m.index).split("\n").length;
        found.push(`src/${name}:${line}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  test("the entries that replaced raw codes keep their codes and messages", () => {
    const body = (e: WireError) => ({ code: e.code, message: e.message, data: e.data });
    expect(body(errors.callEnded())).toEqual({
      code: -32603,
      message: "the call ended before the client answered",
      data: undefined,
    });
    expect(body(errors.cancelledByUpstream())).toMatchObject({
      code: -32603,
      message: "cancelled by the upstream",
    });
    expect(body(errors.bridgeEnded("the client cancelled the call"))).toMatchObject({
      code: -32603,
      message: "the client cancelled the call",
    });
    expect(body(errors.requestState())).toEqual({
      code: -32602,
      message: "Invalid or expired requestState",
      data: { reason: "invalid_request_state" },
    });
    expect(body(errors.parkedCalls(3, false))).toMatchObject({
      code: -32603,
      message: "too many calls are waiting for input (at most 3, limits.parked_calls)",
    });
    expect(body(errors.tooManyRounds("up", 8))).toMatchObject({
      code: -32603,
      message: "upstream up asked for input 8 times in one call",
    });
    expect(body(errors.subscriptions(100))).toMatchObject({
      code: -32000,
      message: "a session may hold at most 100 resource subscriptions",
    });
    expect(body(errors.clientLacks("sampling/createMessage", "sampling", "request"))).toMatchObject({
      code: -32601,
      message: "the client does not support sampling/createMessage (no sampling capability)",
    });
    expect(body(errors.clientLacks("sampling/createMessage", "sampling", "session"))).toMatchObject({
      code: -32601,
      message: "the client of this session does not support sampling/createMessage (no sampling capability)",
    });
    expect(body(errors.needsCapability("sampling", { sampling: {} }))).toEqual({
      code: -32021,
      message: "this call needs the client's sampling capability, which this request did not declare",
      data: { requiredCapabilities: { sampling: {} } },
    });
    expect(body(errors.untied("roots/list", "two clients use it"))).toMatchObject({
      code: -32603,
      message:
        "toolpacks cannot tell which client roots/list is for: two clients use it (declare the upstream with isolation: per-session)",
    });
    expect(errors.connectionClosed("line too long").body).toEqual({ code: -32000, message: "line too long" });
    const notFound = errors.as2025ResourceNotFound(
      new WireError(CODE.invalidParams, "Not found: x", { uri: "x" }),
    );
    expect(body(notFound)).toEqual({ code: -32002, message: "Not found: x", data: { uri: "x" } });
  });
});
