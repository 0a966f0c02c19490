/**
 * The console's picture of a selection (SPEC §17.3), from the real resolver and report over literal catalogs and
 * inventories: what a card, an upstream panel and the costs say, and what a caller with fewer grants never sees.
 */
import { describe, expect, test } from "vitest";
import { withAccess } from "../../src/access.js";
import type { Principal } from "../../src/auth/types.js";
import type { Inventory } from "../../src/catalog/inventory.js";
import type { Catalog } from "../../src/catalog/types.js";
import { consolePayload } from "../../src/console/payload.js";
import type { ConsoleSource, ReportView } from "../../src/console/source.js";
import type { ServerInfo } from "../../src/console/wire.js";
import { resolveEverything, toolsetsReport } from "../../src/report.js";
import { resolve } from "../../src/resolve.js";
import { select } from "../../src/selection.js";
import { catalogOf, inventoryOf } from "../helpers/catalog.js";

const catalog = catalogOf(`
auth:
  tokens: ["a-static-token-for-tests"]
upstreams:
  mail: { command: mail-server }
  vault: { command: vault-server }
  down: { command: down-server }
toolsets:
  mail: { tools: [mail/send, mail/read] }
  inbox: { default: false, tools: [mail/read, mail/search, mail/archive] }
  core: { always: true, tools: [mail/ping] }
  secrets: { default: false, tools: [vault/open_secret], requires: { scopes: [vault] } }
  broken: { default: false, tools: [down/x] }
`);

const inventory = inventoryOf({
  mail: ["send", "read", "search", "ping", "play_game"],
  vault: ["open_secret", "rotate"],
  down: "unreachable: connect ECONNREFUSED",
});

const SERVER = { name: "t" } as ServerInfo;
const source = {
  catalog,
  extraTools: () => [],
} as unknown as ConsoleSource;

/** What the gateway's report gives for a query and principal, over this inventory (the pure parts of it). */
function view(
  query: string,
  principal: Principal | undefined,
  known: Inventory = inventory,
  of: Catalog = catalog,
): ReportView {
  const r = select(of, query);
  if (!r.ok) throw new Error(r.error);
  const selection = withAccess(of, r.selection, principal);
  const resolution = resolve(of, selection, known);
  const instances = [...known].map(([upstream, state]) => ({ upstream, kind: "shared" as const, state }));
  const report = toolsetsReport(
    of,
    selection,
    resolution,
    [],
    resolveEverything(
      of,
      instances.map((i) => ({ ref: { kind: i.kind, upstream: i.upstream }, state: i.state })),
    ),
  );
  return { selection, report, resolution, instances };
}

const everyone: Principal = { subject: "op", scopes: new Set(["vault"]), claims: {}, via: "token" };
const scoped: Principal = { subject: "alice", scopes: new Set(), claims: {}, via: "token" };
const card = (p: ReturnType<typeof consolePayload>, name: string) => p.toolsets.find((t) => t.name === name)!;

describe("the console's payload", () => {
  test("it carries the /toolsets report unchanged, and a card per toolset in catalog order", () => {
    const v = view("", everyone);
    const p = consolePayload(source, v, SERVER, "");
    expect(p.report).toBe(v.report);
    expect(p.toolsets.map((t) => [t.name, t.state])).toEqual([
      ["mail", "active"],
      ["inbox", "off"],
      ["core", "active"],
      ["secrets", "off"],
      ["broken", "off"],
    ]);
    expect(card(p, "mail").tools!.map((t) => t.name)).toEqual(["send", "read"]);
  });

  test("a toolset the selection leaves out is judged alone by what its upstream listed last", () => {
    const p = consolePayload(source, view("", everyone), SERVER, "");
    expect(card(p, "inbox").tools).toBeNull();
    expect(card(p, "inbox").problem).toEqual({
      reason: "missing",
      missing: ["mail/archive"],
      detail: expect.any(String),
    });
    expect(card(p, "broken").problem?.reason).toBe("upstream-unavailable");
    expect(card(p, "secrets").tools!.map((t) => t.name)).toEqual(["open_secret"]);
    expect(card(p, "secrets").cost?.tools).toBe(1);
  });

  test("one whose upstream has not listed yet has no tools and no cost, and the totals name it", () => {
    const known = new Map([...inventory].filter(([u]) => u !== "vault"));
    const p = consolePayload(source, view("", everyone, known), SERVER, "");
    expect(card(p, "secrets")).toMatchObject({ state: "off", tools: null, cost: null });
    expect(card(p, "secrets").problem).toBeUndefined();
    expect(p.costs.unknown).toEqual(["secrets"]);
  });

  test("a forbidden toolset is a card that says what it needs, and nothing of its members, upstream or tools", () => {
    const p = consolePayload(source, view("secrets", scoped), SERVER, "secrets");
    expect(card(p, "secrets")).toEqual({
      name: "secrets",
      title: "secrets",
      description: "",
      default: false,
      always: false,
      deferred: false,
      implicit: false,
      requires: { scopes: ["vault"] },
      forbidden: true,
      state: "forbidden",
      problem: { reason: "forbidden", missing: [], detail: "needs the scope vault" },
      deferred_now: false,
      tools: null,
      cost: null,
    });
    expect(p.scoped).toBe(true);
    expect(p.upstreams.map((u) => u.name)).toEqual(["mail", "down"]);
    expect(JSON.stringify(p.toolsets)).not.toContain("open_secret");
    expect(JSON.stringify(p.upstreams)).not.toContain("open_secret");
  });

  test("the tools no toolset claims are shown to a caller who may use every toolset, and to no other", () => {
    const all = consolePayload(source, view("", everyone), SERVER, "");
    expect(all.upstreams.find((u) => u.name === "mail")!.unclaimed).toEqual(["play_game"]);
    expect(all.upstreams.find((u) => u.name === "vault")!.unclaimed).toEqual(["rotate"]);
    const some = consolePayload(source, view("", scoped), SERVER, "");
    expect(some.upstreams.some((u) => u.unclaimed)).toBe(false);
  });

  test("every toolset on lists all the caller may use; everything deferred lists the always ones and the search tools", () => {
    const p = consolePayload(source, view("", everyone), SERVER, "");
    expect(p.costs.everything.tools).toBe(4); // send, read, ping, open_secret (inbox misses a member, broken is down)
    expect(p.costs.deferred.tools).toBe(3); // ping (always), find_tools, call_tool
    const fewer = consolePayload(source, view("", scoped), SERVER, "");
    expect(fewer.costs.everything.tools).toBe(3);
  });
});

describe("what is wrong with a toolset, as its card says it", () => {
  const tangled = catalogOf(`
upstreams:
  mail: { command: mail-server }
  chat: { command: chat-server }
  drive: { url: "https://drive.example/mcp" }
toolsets:
  mail: { tools: [mail/*] }
  chat: { tools: [chat/*] }
  drive: { tools: [drive/*] }
`);
  const known: Inventory = new Map([
    ...inventoryOf({ mail: ["send", "read"], chat: ["read", "post"] }),
    [
      "drive",
      {
        status: "unavailable",
        reason: "waiting for an authorization",
        authorizeUrl: "https://auth.example/authorize?client_id=toolpacks",
      },
    ],
  ]);
  const p = consolePayload({ ...source, catalog: tangled }, view("", undefined, known, tangled), SERVER, "");

  test("two toolsets that expose the same name: the second is not on, and its card's problem says conflict", () => {
    expect(card(p, "mail").state).toBe("active");
    expect(card(p, "chat")).toMatchObject({
      state: "conflict",
      problem: { reason: "conflict", missing: [], detail: expect.stringContaining("read") },
    });
    expect(card(p, "chat").problem!.url).toBeUndefined();
  });

  test("a toolset waiting for an authorization says so, with the link to authorize at", () => {
    expect(card(p, "drive")).toMatchObject({
      state: "authorization_required",
      problem: {
        reason: "authorization_required",
        url: "https://auth.example/authorize?client_id=toolpacks",
      },
    });
  });
});
