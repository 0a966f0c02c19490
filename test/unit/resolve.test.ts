import { describe, expect, test } from "vitest";
import { EMPTY_OFFER, type UpstreamState } from "../../src/catalog/inventory.js";
import { type Resolution, resolve, resolveWithRefresh } from "../../src/resolve.js";
import { select } from "../../src/selection.js";
import { catalogOf, inventoryOf, tools } from "../helpers/catalog.js";

const catalog = catalogOf(`
instructions: Be brief.
upstreams:
  mail: { command: mail-server }
  gh: { url: "https://example.com/mcp", prefix: "gh_" }
  fs: { command: fs-server }
  extra: { command: extra-server }
toolsets:
  mail:
    title: Mail
    instructions: Draft before you send.
    tools: [mail/send, mail/read]
  inbox:
    default: false
    tools: [mail/read, mail/search]
  issues:
    title: Issues
    instructions: Search before you create.
    tools:
      - gh/list_issues
      - gh/*_issue
      - tool: gh/create_issue
        as: open_issue
        description: Open an issue here.
  files:
    default: false
    tools: [fs/read_file, fs/write_file]
  twohost:
    default: false
    tools: [mail/read, fs/read_file]
`);

const inventory = inventoryOf({
  mail: ["send", "read", "search", "play_game"],
  gh: ["list_issues", "create_issue", "close_issue", "list_prs"],
  fs: ["read_file", "write_file", "delete_file"],
  extra: ["a", "b"],
});

function run(query: string, inv = inventory): Resolution {
  const s = select(catalog, query);
  if (!s.ok) throw new Error(s.error);
  return resolve(catalog, s.selection, inv);
}
const names = (r: Resolution) => r.tools.map((t) => t.name);

describe("resolving what a selection exposes", () => {
  test("opening the mail pack never drags in the game on the same upstream", () => {
    expect(names(run("only=mail"))).toEqual(["send", "read"]);
  });

  test("enabling one pack never closes another upstream", () => {
    const r = run("files");
    expect(r.active).toEqual(["mail", "issues", "files", "extra"]);
    expect(names(r)).toEqual(
      expect.arrayContaining(["send", "read", "gh_list_issues", "read_file", "a", "b"]),
    );
  });

  test("two packs on one upstream never squeeze each other out", () => {
    const r = run("only=mail,inbox");
    expect(r.active).toEqual(["mail", "inbox"]);
    expect(names(r)).toEqual(["send", "read", "search"]);
    expect(r.tool.get("read")?.toolsets).toEqual(["mail", "inbox"]);
  });

  test("a pack short of one member is off, not partly enabled", () => {
    const r = run("only=mail", inventoryOf({ mail: ["send"] }));
    expect(r.active).toEqual([]);
    expect(names(r)).toEqual([]);
    expect(r.unavailable).toEqual([
      expect.objectContaining({ name: "mail", reason: "missing", missing: ["mail/read"] }),
    ]);
  });

  test("a glob that matches nothing leaves its pack missing", () => {
    const cat = catalogOf("upstreams: { g: { command: g } }\ntoolsets: { t: { tools: ['g/*_issue'] } }");
    const s = select(cat, "");
    if (!s.ok) throw new Error(s.error);
    const none = resolve(cat, s.selection, inventoryOf({ g: ["list_prs"] }));
    expect(none.active).toEqual([]);
    expect(none.unavailable[0]).toMatchObject({ reason: "missing", missing: ["g/*_issue"] });
    const some = resolve(cat, s.selection, inventoryOf({ g: ["list_prs", "close_issue"] }));
    expect(some.tools.map((t) => t.name)).toEqual(["close_issue"]);
  });

  test("a tool on a covered upstream that no pack names never leaks into the list", () => {
    const all = names(run("inbox&files&twohost"));
    expect(all).not.toContain("play_game");
    expect(all).not.toContain("delete_file");
    expect(all).not.toContain("gh_list_prs");
  });

  test("an upstream that no toolset mentions is served through its implicit toolset", () => {
    const r = run("");
    expect(r.active).toContain("extra");
    expect(names(r)).toEqual(expect.arrayContaining(["a", "b"]));
  });

  test("the prefix is kept, and not added to a name given with as:", () => {
    const r = run("only=issues");
    expect(names(r)).toEqual(["gh_list_issues", "gh_close_issue", "open_issue"]);
    expect(r.tool.get("open_issue")).toMatchObject({ upstream: "gh", original: "create_issue" });
    expect(r.tool.get("open_issue")?.definition).toMatchObject({
      name: "open_issue",
      description: "Open an issue here.",
    });
  });

  test("an override in one toolset hides the glob's plain exposure of the same tool", () => {
    expect(names(run("only=issues"))).not.toContain("gh_create_issue");
  });

  test("an upstream that is down never breaks the packs on other upstreams", () => {
    const inv = inventoryOf({
      mail: "spawn mail-server ENOENT",
      gh: ["list_issues", "create_issue"],
      fs: [],
      extra: ["a"],
    });
    const r = run("", inv);
    expect(r.active).toEqual(["issues", "extra"]);
    expect(r.unavailable).toEqual([
      expect.objectContaining({
        name: "mail",
        reason: "upstream-unavailable",
        detail: "mail: spawn mail-server ENOENT",
      }),
    ]);
  });

  test("a pack spanning two upstreams is off when one is down", () => {
    const inv = inventoryOf({ mail: ["read"], fs: "crashed" });
    const r = run("only=twohost", inv);
    expect(r.active).toEqual([]);
    expect(names(r)).toEqual([]);
    expect(r.unavailable[0]).toMatchObject({ reason: "upstream-unavailable", upstreams: ["fs"] });
  });

  test("an upstream that was never started is unavailable, not an upstream with no tools", () => {
    const r = run("only=files", inventoryOf({}));
    expect(r.unavailable[0]).toMatchObject({ reason: "upstream-unavailable", detail: "fs: not started" });
  });

  test("turning a pack off works when its tools are gone", () => {
    const inv = inventoryOf({ mail: [], gh: ["list_issues", "create_issue"], fs: [], extra: ["a"] });
    const r = run("without=mail", inv);
    expect(r.unavailable).toEqual([]);
    expect(r.active).toEqual(["issues", "extra"]);
  });

  test("only active toolsets' instructions reach the session, in order", () => {
    expect(run("only=issues,mail").instructions).toBe(
      "Be brief.\n\n## Issues\n\nSearch before you create.\n\n## Mail\n\nDraft before you send.",
    );
    expect(run("only=inbox").instructions).toBe("Be brief.");
  });

  test("a resolution is frozen when it is returned", () => {
    const r = run("");
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.tools)).toBe(true);
    expect(() => (r.tools as unknown as unknown[]).push(1)).toThrow();
  });

  test("the same inputs always resolve the same", () => {
    expect(JSON.stringify(run("files&inbox").tools)).toBe(JSON.stringify(run("inbox&files").tools));
  });

  test("unknown names are kept in the resolution", () => {
    expect(run("nope").unknown).toEqual(["nope"]);
  });

  test("unknown keys and _meta of an upstream tool are kept", () => {
    const def = {
      name: "send",
      inputSchema: { type: "object" },
      _meta: { ui: { resourceUri: "ui://x" } },
      "x-vendor": 1,
    };
    const inv = new Map<string, UpstreamState>([
      ["mail", { status: "ready", ...EMPTY_OFFER, tools: [def, ...tools("read")] }],
    ]);
    expect(run("only=mail", inv).tool.get("send")?.definition).toEqual(def);
  });
});

describe("glob collisions at run time", () => {
  const cat = catalogOf(`
upstreams:
  a: { command: a }
  b: { command: b }
toolsets:
  one: { tools: ["a/*"] }
  two: { tools: ["b/*"] }
`);
  test("two globbed upstreams with the same tool name are a named conflict, not a silent shadow", () => {
    const s = select(cat, "");
    if (!s.ok) throw new Error();
    const r = resolve(cat, s.selection, inventoryOf({ a: ["search", "x"], b: ["search", "y"] }));
    expect(r.active).toEqual(["one"]);
    expect(r.unavailable[0]).toMatchObject({ name: "two", reason: "conflict" });
    expect(r.unavailable[0]?.detail).toContain("search");
    expect(r.tool.get("search")?.upstream).toBe("a");
  });
});

describe("refresh, then recheck", () => {
  const sel = (q: string) => {
    const s = select(catalog, q);
    if (!s.ok) throw new Error(s.error);
    return s.selection;
  };

  test("a stale inventory is refreshed, not taken as an empty upstream", async () => {
    const stale = inventoryOf({ mail: ["send"] });
    const asked: string[] = [];
    const { resolution } = await resolveWithRefresh(catalog, sel("only=mail"), stale, async (u) => {
      asked.push(u);
      return { status: "ready", ...EMPTY_OFFER, tools: tools("send", "read") };
    });
    expect(asked).toEqual(["mail"]);
    expect(resolution.active).toEqual(["mail"]);
    expect(names(resolution)).toEqual(["send", "read"]);
  });

  test("a pack still short after the refresh stays off", async () => {
    const { resolution } = await resolveWithRefresh(
      catalog,
      sel("only=mail"),
      inventoryOf({ mail: ["send"] }),
      async () => ({
        status: "ready",
        ...EMPTY_OFFER,
        tools: tools("send"),
      }),
    );
    expect(resolution.active).toEqual([]);
    expect(resolution.unavailable[0]).toMatchObject({ reason: "missing", missing: ["mail/read"] });
  });

  test("a satisfied selection refreshes no upstream", async () => {
    let calls = 0;
    await resolveWithRefresh(catalog, sel("only=mail"), inventory, async () => {
      calls++;
      return { status: "ready", ...EMPTY_OFFER };
    });
    expect(calls).toBe(0);
  });

  test("refreshing for one pack leaves alone an upstream no missing pack needs", async () => {
    const asked: string[] = [];
    await resolveWithRefresh(
      catalog,
      sel("only=mail,issues"),
      inventoryOf({ mail: ["send"], gh: ["list_issues", "create_issue"] }),
      async (u) => {
        asked.push(u);
        return { status: "ready", ...EMPTY_OFFER, tools: tools("send", "read") };
      },
    );
    expect(asked).toEqual(["mail"]);
  });
});
