/**
 * A stdio session's client profile, in process: the real core behind the stdio edge on in-memory streams. The
 * session opens before its client's initialize; the profile that initialize matches is applied before it is
 * answered, and requests sent before that answer wait for it: the first tools/list is already fitted.
 */
import { describe, expect, test } from "vitest";
import type { Gateway } from "../../src/proxy/gateway.js";
import { sharedRef } from "../../src/upstream/instance.js";
import { stdioInProcess, V2025 } from "../helpers/in-process.js";

const CONFIG = `
upstreams:
  main: { command: in-process }
  other: { command: in-process, prefix: o_ }
toolsets:
  a: { tools: [main/echo] }
  b: { tools: [main/add, main/slow, main/ask] }
  c: { default: false, tools: [other/echo] }
clients:
  - client: tiny
    max_tools: 4
  - client: elsewhere
    selection: only=c
`;

const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!ok()) throw new Error(`never: ${what}`);
};

async function listed(name: string): Promise<string[]> {
  const io = await stdioInProcess(CONFIG);
  try {
    io.send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: V2025, capabilities: {}, clientInfo: { name, version: "1" } },
    });
    io.send({ method: "notifications/initialized" });
    io.send({ id: 2, method: "tools/list" });
    await until(() => io.lines.some((l) => l.id === 2), "tools/list answered");
    const answer = io.lines.find((l) => l.id === 2) as { result: { tools: { name: string }[] } };
    return answer.result.tools.map((t) => t.name);
  } finally {
    await io.close();
  }
}

describe("a stdio client's profile, from its initialize", () => {
  test("a stdio client over its profile's cap gets its first tools/list fitted, even one sent right behind its initialize", async () => {
    expect(await listed("tiny")).toEqual(["echo", "find_tools", "call_tool", "list_server_toolsets"]);
    expect(await listed("anyone")).toEqual(["echo", "add", "slow", "ask", "list_server_toolsets"]);
  });

  test("a stdio client whose profile selects other toolsets is served them, on their own upstream", async () => {
    expect(await listed("elsewhere")).toEqual(["o_echo", "list_server_toolsets"]);
  });
});

describe("a stdio session fitted at its initialize, in the registry", () => {
  test("it is found under the instances it now uses (list changes, authorizations and untied traffic look there), and under none once closed", async () => {
    const io = await stdioInProcess(CONFIG);
    // The core behind the door, read through its registry: the one index of sessions by instance.
    const gateway = (io.front as unknown as { gateway: Gateway }).gateway;
    try {
      io.send({
        id: 1,
        method: "initialize",
        params: { protocolVersion: V2025, capabilities: {}, clientInfo: { name: "elsewhere", version: "1" } },
      });
      io.send({ id: 2, method: "tools/list" });
      await until(() => io.lines.some((l) => l.id === 2), "tools/list answered");
      const [session] = [...gateway.sessions.values()];
      const refs = [...session!.refs.values()];
      expect(refs.map((r) => r.upstream)).toEqual(["other"]);
      for (const ref of refs) expect(gateway.sessions.users(ref)).toEqual([session]);
      expect(gateway.sessions.users(sharedRef("main"))).toEqual([]);
      await gateway.closeSession(session!);
      for (const ref of [...refs, sharedRef("main")]) expect(gateway.sessions.users(ref)).toEqual([]);
    } finally {
      await io.close();
    }
  });
});
