/** Client profiles, pure: `clients:` compiled, matching, version ranges, deferral under caps, caching by effect, cutting. */
import { describe, expect, test } from "vitest";
import { withAccess } from "../../src/access.js";
import { BUILTIN_CLIENTS } from "../../src/catalog/builtin-clients.js";
import { parseRange, satisfies } from "../../src/catalog/client-version.js";
import { compileTexts } from "../../src/catalog/load.js";
import type { Catalog } from "../../src/catalog/types.js";
import { applyProfile } from "../../src/clients/apply.js";
import { cutDescription } from "../../src/clients/cut.js";
import { profileOf } from "../../src/clients/match.js";
import { listing } from "../../src/clients/plan.js";
import { profileKey, selectFor } from "../../src/clients/select.js";
import { listFigure, toolsetsReport } from "../../src/report.js";
import { resolve } from "../../src/resolve.js";
import { buildIndex } from "../../src/search/build.js";
import { listedRoutes, searchEntries, searchToolDefs } from "../../src/search/deferred.js";
import { catalogOf, errorsOf, inventoryOf } from "../helpers/catalog.js";

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

const YAML = `
upstreams:
  a: { command: a }
  b: { command: b }
  c: { command: c }
  d: { command: d }
toolsets:
  core: { always: true, tools: [a/*] }
  docs: { tools: [b/*] }
  issues: { tools: [c/*] }
  extra: { tools: [d/*] }
clients:
  - client: forty*
    max_tools: 40
  - client: [thirty-eight, other-38]
    max_tools: 38
  - client: roomy
    max_tools: 100
  - client: tiny
    max_tools: 8
  - client: never
    max_tools: 4
  - client: none
    max_tools: 8
    defer: none
  - client: everything-deferred
    defer: all
  - client: docs-only
    selection: only=docs
  - client: short
    max_description_bytes: 40
`;
const catalog = catalogOf(YAML);
const inventory = inventoryOf({ a: names("a", 5), b: names("b", 10), c: names("c", 20), d: names("d", 15) });

function fitted(client: string | undefined, query = "", c: Catalog = catalog, inv = inventory) {
  const profile = client === undefined ? undefined : profileOf(c, { name: client, version: "1.0" });
  const r = selectFor(c, query, {}, profile);
  if (!r.ok) throw new Error(r.error);
  const base = resolve(c, r.selection, inv);
  return { selection: r.selection, base, resolution: applyProfile(c, base, r.selection) };
}
const listed = (r: ReturnType<typeof fitted>["resolution"]) => listFigure(r).tools;
const profileDeferred = (r: ReturnType<typeof fitted>["resolution"]) =>
  r.deferred.filter((d) => d.by === "profile").map((d) => d.name);

describe("clients: compiled", () => {
  test("every file's entries are joined in file order, the built-in profiles after them", () => {
    const r = catalogOf(YAML).clients;
    expect(r.slice(0, 2).map((p) => p.clients)).toEqual([["forty*"], ["thirty-eight", "other-38"]]);
    expect(r[0]?.where).toBe("packs.yaml:13:5");
    expect(r.slice(-BUILTIN_CLIENTS.length).every((p) => p.where === "built-in" && p.source)).toBe(true);
  });

  test("clients: [] in any file turns the built-in profiles off, and keeps the entries of the others", () => {
    const two = [
      { file: "a.yaml", text: "upstreams: { u: { command: x } }\nclients: []\n" },
      { file: "b.yaml", text: "clients:\n  - client: mine\n    max_tools: 3\n" },
    ];
    const r = compileTexts(two);
    if (!r.ok) throw new Error("does not compile");
    expect(r.catalog.clients.map((p) => p.clients)).toEqual([["mine"]]);
  });

  test("a bad range, an unknown toolset in selection and an unknown key are errors at their positions", () => {
    const errors = errorsOf(`
upstreams: { u: { command: x } }
toolsets: { docs: { tools: [u/a] } }
clients:
  - client: x
    version: ">=banana"
  - client: y
    selection: only=dosc
  - client: z
    max_tool: 3
`);
    expect(errors).toEqual([
      'packs.yaml:6:14: version: ">=banana" is not a version comparison (e.g. ">=1.2 <2")',
      'packs.yaml:8:16: selection names toolset "dosc", which is not declared (did you mean "docs"?)',
      'packs.yaml:10:5: unknown key "max_tool" in clients.2 (did you mean "max_tools"?)',
    ]);
  });

  test("an entry must name a client, and caps are whole numbers of at least 1", () => {
    const errors = errorsOf("clients:\n  - max_tools: 0\n    defer: later\n");
    expect(errors.join("\n")).toMatch(/clients\.0 needs "client"/);
    expect(errors.join("\n")).toMatch(/max_tools must be >= 1/);
    expect(errors.join("\n")).toMatch(/defer must be one of auto, all, none/);
  });
});

describe("matching a client", () => {
  test("a glob or exact name, case-insensitive; the first entry that matches wins", () => {
    expect(profileOf(catalog, { name: "Forty-Two" })?.maxTools).toBe(40);
    expect(profileOf(catalog, { name: "OTHER-38" })?.maxTools).toBe(38);
    expect(profileOf(catalog, { name: "roomy2" })).toBeUndefined();
    expect(profileOf(catalog, undefined)).toBeUndefined();
    expect(profileOf(catalog, { name: 42 })).toBeUndefined();
  });

  test("a user's entry for a well-known client comes before its built-in profile", () => {
    const c = catalogOf("clients:\n  - client: cursor-vscode\n    max_tools: 12\n");
    expect(profileOf(c, { name: "cursor-vscode" })?.maxTools).toBe(12);
    expect(profileOf(c, { name: "cursor-nightly" })?.where).toBe("built-in");
  });

  test("the built-in profiles match the names those clients send", () => {
    const c = catalogOf("upstreams: { u: { command: x } }\n");
    expect(profileOf(c, { name: "cursor-vscode", version: "1.0.0" })?.maxTools).toBe(40);
    expect(profileOf(c, { name: "Visual Studio Code", version: "1.104.0" })?.maxTools).toBe(128);
    expect(profileOf(c, { name: "Visual Studio Code - Insiders" })?.maxTools).toBe(128);
    expect(profileOf(c, { name: "JetBrains-IU-copilot-intellij" })?.maxTools).toBe(128);
    expect(profileOf(c, { name: "claude-code" })).toBeUndefined();
  });

  test("a version range and declared capabilities narrow the match", () => {
    const c = catalogOf(`
clients:
  - client: agent
    version: ">=2.1 <3 || =1.0.7"
    capabilities: { elicitation.url: true, sampling: false }
    max_tools: 5
`);
    const url = { elicitation: { url: {} } };
    expect(profileOf(c, { name: "agent", version: "2.4.1" }, url)?.maxTools).toBe(5);
    expect(profileOf(c, { name: "agent", version: "1.0.7" }, url)?.maxTools).toBe(5);
    expect(profileOf(c, { name: "agent", version: "3.0" }, url)).toBeUndefined();
    expect(profileOf(c, { name: "agent", version: "2.4.1" }, { elicitation: {} })).toBeUndefined();
    expect(profileOf(c, { name: "agent", version: "2.4.1" }, { ...url, sampling: {} })).toBeUndefined();
    expect(profileOf(c, { name: "agent" }, url)).toBeUndefined();
  });

  test("a name longer than any client's matches nothing, even a catch-all", () => {
    const c = catalogOf("clients:\n  - client: '*'\n    max_tools: 5\n");
    expect(profileOf(c, { name: "x".repeat(257) })).toBeUndefined();
    expect(profileOf(c, { name: "x".repeat(256) })?.maxTools).toBe(5);
  });
});

describe("version ranges", () => {
  const cases: [string, string, boolean][] = [
    [">=1.2 <2", "1.2.0", true],
    [">=1.2 <2", "1.9.9", true],
    [">=1.2 <2", "2.0.0", false],
    [">1.2", "1.2.9", false],
    [">1.2", "1.3", true],
    ["<=1.2", "1.2.5", true],
    ["<=1.2", "1.3.0", false],
    ["^1.4", "1.9.0", true],
    ["^1.4", "2.0.0", false],
    ["^0.2.3", "0.2.9", true],
    ["^0.2.3", "0.3.0", false],
    ["~1.2.3", "1.2.9", true],
    ["~1.2.3", "1.3.0", false],
    ["1.x", "1.7.2", true],
    ["1.x", "2.0.0", false],
    ["1.0.3", "1.0.3", true],
    ["1.0.3", "1.0.4", false],
    ["*", "0.0.1", true],
    ["1.x || >=3", "3.1", true],
    ["1.x || >=3", "2.5", false],
    [">= 1.2", "v1.2.0-beta", true],
    [">=1", "nightly", false],
  ];
  test.each(cases)("%s holds for %s: %s", (range, version, holds) => {
    const r = parseRange(range);
    if (!r.ok) throw new Error(r.error);
    expect(satisfies(r.range, version)).toBe(holds);
  });

  test.each([">=", "1.2.3.4.5", "=>1", "1.2 ||", "<*"])("%s is refused", (range) => {
    expect(parseRange(range).ok).toBe(false);
  });
});

describe("deferral under the caps", () => {
  test("the list's size is counted exactly as tools/list carries it", () => {
    const { resolution } = fitted("forty");
    const tools = resolution.tools.map((r) => ({
      toolsets: r.toolsets,
      bytes: Buffer.byteLength(JSON.stringify(r.definition)),
    }));
    const deferred = new Set(resolution.deferred.map((d) => d.name));
    const l = listing(tools, deferred, { tools: 0, bytes: 0 }, false);
    expect(l).toEqual({ tools: listFigure(resolution).tools, bytes: listFigure(resolution).schema_bytes });
  });

  test("over max_tools, the last declared toolset is deferred first, and the list fits", () => {
    const { resolution, base } = fitted("forty");
    expect(listed(base)).toBe(50);
    expect(profileDeferred(resolution)).toEqual(["extra"]);
    expect(listed(resolution)).toBe(37);
    expect(listedRoutes(resolution).map((r) => r.name)).not.toContain("d1");
    expect(resolution.profile?.reason).toBe("max_tools 40: 50 tools would be listed");
  });

  test("no tool is dropped: every tool deferred by a profile is found with find_tools", () => {
    const { resolution } = fitted("forty");
    const index = buildIndex(searchEntries(resolution));
    expect(index.size).toBe(15);
    expect(index.search("d7", { limit: 1 }).tools[0]?.name).toBe("d7");
    expect(searchToolDefs(resolution).map((d) => d.name)).toEqual(["find_tools", "call_tool"]);
  });

  test("a toolset the URL names is deferred only after every other one", () => {
    const { resolution } = fitted("forty", "extra");
    expect(profileDeferred(resolution)).toEqual(["issues"]);
    const { resolution: tiny } = fitted("tiny", "extra");
    expect(profileDeferred(tiny)).toEqual(["docs", "issues", "extra"]);
    expect(listed(tiny)).toBe(7);
  });

  test("a toolset deferred on the way that would fit back in is listed again", () => {
    const c = catalogOf(`
upstreams: { a: { command: a }, b: { command: b }, c: { command: c } }
toolsets:
  big: { tools: [a/*] }
  mid: { tools: [b/*] }
  small: { tools: [c/*] }
clients:
  - client: x
    max_tools: 40
`);
    const inv = inventoryOf({ a: names("a", 30), b: names("b", 20), c: names("c", 2) });
    const { resolution } = fitted("x", "", c, inv);
    expect(profileDeferred(resolution)).toEqual(["mid"]);
    expect(listed(resolution)).toBe(34);
  });

  test("an always toolset is never deferred; over the cap even so, the session is served and says so", () => {
    const { resolution, selection } = fitted("never");
    expect(profileDeferred(resolution)).toEqual(["docs", "issues", "extra"]);
    expect(listed(resolution)).toBe(7);
    const report = toolsetsReport(catalog, selection, resolution);
    expect(report.client_profile).toMatchObject({
      client: ["never"],
      max_tools: 4,
      within_caps: false,
      over: "max_tools 4: 7 tools are listed",
    });
    expect(report.deferred_by_profile?.map((d) => d.name)).toEqual(["docs", "issues", "extra"]);
  });

  test("defer: none never defers; defer: all defers every toolset but the always ones", () => {
    const { resolution: none, base } = fitted("none");
    expect(none).toBe(base);
    const { resolution: all } = fitted("everything-deferred");
    expect(profileDeferred(all)).toEqual(["docs", "issues", "extra"]);
    expect(all.profile?.reason).toBe("defer: all");
  });

  test("what the config or the URL defers stays deferred, by them, beside the profile's", () => {
    const { resolution } = fitted("forty", "defer=docs");
    expect(resolution.deferred.map((d) => [d.name, d.by])).toEqual([
      ["docs", "url"],
      ["extra", "profile"],
    ]);
  });

  test("a profile's selection is what a URL naming nothing gets; a URL that names toolsets is read as it says", () => {
    expect(fitted("docs-only").selection.active).toEqual(["core", "docs"]);
    expect(fitted("docs-only", "only=issues").selection.active).toEqual(["core", "issues"]);
  });

  test("access narrowing keeps the profile and the URL's own names", () => {
    const { selection } = fitted("forty", "extra");
    const narrowed = withAccess(catalog, { ...selection, forbidden: [] }, undefined);
    expect(narrowed.profile).toBe(selection.profile);
    expect(narrowed.explicit).toEqual(["extra"]);
  });
});

describe("resolutions are shared by effect, not by client name", () => {
  test("a profile within its caps gives the resolution itself", () => {
    const { resolution, base } = fitted("roomy");
    expect(resolution).toBe(base);
  });

  test("two profiles that defer the same toolsets give the same resolution object", () => {
    const { base, selection } = fitted("forty");
    const { selection: other } = fitted("thirty-eight");
    expect(profileKey(selection)).not.toBe(profileKey(other));
    expect(applyProfile(catalog, base, selection)).toBe(applyProfile(catalog, base, other));
  });

  test("two client names matching one profile give the same resolution object", () => {
    const { base, selection } = fitted("thirty-eight");
    const { selection: other } = fitted("other-38");
    expect(applyProfile(catalog, base, selection)).toBe(applyProfile(catalog, base, other));
  });

  test("profiles with different effects give different resolutions", () => {
    const { base, selection } = fitted("forty");
    const { selection: tiny } = fitted("tiny");
    expect(applyProfile(catalog, base, selection)).not.toBe(applyProfile(catalog, base, tiny));
  });
});

describe("descriptions cut to a budget", () => {
  test.each([
    ["Read a file from the workspace, as text.", 40, "Read a file from the workspace, as text."],
    ["Read a file from the workspace, as text or as base64.", 30, "Read a file from the…"],
    ["Supercalifragilisticexpialidocious words", 12, "Supercali…"],
    ["Ärger über Öl, Übel überall", 16, "Ärger über…"],
  ])("%j in %i bytes is %j", (text, max, cut) => {
    expect(cutDescription(text, max)).toBe(cut);
    expect(Buffer.byteLength(cutDescription(text, max))).toBeLessThanOrEqual(max);
  });

  test("listed descriptions are cut; find_tools finds the tool by a word past the cut and returns all of it", () => {
    const c = catalogOf(`
upstreams: { a: { command: a } }
toolsets:
  files: { tools: [a/*] }
clients:
  - client: short
    max_description_bytes: 40
`);
    const long =
      "Read a file from the workspace as text. Large files are paged: pass offset to read further.";
    const inv = new Map([
      [
        "a",
        {
          status: "ready" as const,
          tools: [
            { name: "read", description: long, inputSchema: { type: "object" } },
            { name: "stat", description: "File size.", inputSchema: { type: "object" } },
          ],
          prompts: [],
          resources: [],
          templates: [],
        },
      ],
    ]);
    const { resolution } = fitted("short", "", c, inv);
    const listedDefs = listedRoutes(resolution).map((r) => r.definition as { description: string });
    expect(listedDefs[0]?.description).toBe("Read a file from the workspace as…");
    expect(listedDefs[1]?.description).toBe("File size.");
    expect(resolution.profile?.cut).toEqual(["read"]);
    expect(searchToolDefs(resolution).map((d) => d.name)).toEqual(["find_tools", "call_tool"]);
    const hit = buildIndex(searchEntries(resolution)).search("paged offset", { limit: 1 }).tools[0];
    expect(hit).toMatchObject({ name: "read", description: long, toolset: "files" });
  });
});
