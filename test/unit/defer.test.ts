/** Deferred toolsets, pure: the config keys, the URL's `defer=`, automatic deferral, what is listed, and the report's figures. */
import { describe, expect, test } from "vitest";
import { SearchIndexes } from "../../src/proxy/search-indexes.js";
import { toolsetsToolDef } from "../../src/proxy/toolsets-tool.js";
import { listFigure, toolsetsReport } from "../../src/report.js";
import { resolve } from "../../src/resolve.js";
import { listedRoutes, searchEntries, searchToolDefs } from "../../src/search/deferred.js";
import { select } from "../../src/selection.js";
import { catalogOf, errorsOf, inventoryOf } from "../helpers/catalog.js";
import { listsFor } from "../helpers/tools.js";

const YAML = `
upstreams:
  gh: { command: gh-server }
  fs: { command: fs-server }
  k8s: { command: k8s-server }
toolsets:
  issues:
    description: GitHub issues.
    tools: [gh/list_issues, gh/create_issue]
  files:
    tools: [fs/read_file, gh/list_issues]
  cluster:
    title: Kubernetes
    description: Pods and deployments.
    deferred: true
    default: false
    tools: [k8s/*]
  core:
    always: true
    tools: [fs/whoami]
`;
const catalog = catalogOf(YAML);
const inventory = inventoryOf({
  gh: ["list_issues", "create_issue"],
  fs: ["read_file", "whoami"],
  k8s: ["list_pods", "delete_pod", "find_tools"],
});

function selection(query: string, options = {}, c = catalog) {
  const r = select(c, query, options);
  if (!r.ok) throw new Error(r.error);
  return r.selection;
}
const resolved = (query: string, c = catalog) => resolve(c, selection(query, {}, c), inventory);
const listed = (query: string) =>
  (listsFor(resolved(query), true).tools.tools as { name: string }[]).map((t) => t.name);

describe("the config keys", () => {
  test("deferred: true compiles onto the toolset; toolsets are listed by default", () => {
    expect(catalog.toolset.get("cluster")?.deferred).toBe(true);
    expect(catalog.toolset.get("issues")?.deferred).toBe(false);
  });

  test("search.auto_over_tokens compiles; the first file that sets it wins", () => {
    const c = catalogOf("search: { auto_over_tokens: 1500 }\nupstreams: { u: { command: x } }\n");
    expect(c.autoDeferOverTokens).toBe(1500);
    expect(catalog.autoDeferOverTokens).toBeUndefined();
  });

  test.each([
    [
      "a toolset named defer",
      "upstreams: { u: { command: x } }\ntoolsets:\n  defer:\n    tools: [u/t]\n",
      /^packs\.yaml:3:3: toolset name "defer" is a reserved query key \(toolsets, only, without, defer\)/,
    ],
    [
      "an upstream named defer in no toolset",
      "upstreams:\n  defer: { command: x }\n",
      /^packs\.yaml:2:3: upstream "defer" is in no toolset and its name cannot be a toolset name/,
    ],
    [
      "auto_over_tokens of 0",
      "search:\n  auto_over_tokens: 0\n",
      /^packs\.yaml:2:21: .*auto_over_tokens.*>= 1/,
    ],
    [
      "a word for auto_over_tokens",
      "search:\n  auto_over_tokens: lots\n",
      /^packs\.yaml:2:21: search\.auto_over_tokens must be a whole number/,
    ],
    [
      "an unknown key under search",
      "search:\n  auto_over_token: 5\n",
      /^packs\.yaml:2:3: .*auto_over_token.*auto_over_tokens/,
    ],
    [
      "deferred that is not a boolean",
      "upstreams: { u: { command: x } }\ntoolsets:\n  t:\n    deferred: yes please\n    tools: [u/a]\n",
      /^packs\.yaml:4:15: toolsets\.t\.deferred must be true or false/,
    ],
  ])("%s is a config error at its place", (_what, yaml, error) => {
    expect(errorsOf(yaml)).toEqual([expect.stringMatching(error)]);
  });
});

describe("deferral by URL and by config", () => {
  test.each([
    ["nothing deferred by default", "", [], "issues,files,core"],
    [
      "defer=all defers every active toolset but the always ones",
      "defer=all",
      ["issues", "files"],
      "issues,files,core;defer=issues,files",
    ],
    ["defer=a,b defers those", "defer=files", ["files"], "issues,files,core;defer=files"],
    [
      "a config-deferred toolset is deferred when selected",
      "cluster",
      ["cluster"],
      "issues,files,cluster,core;defer=cluster",
    ],
    ["defer= does not select: an unselected name is ignored", "defer=cluster", [], "issues,files,core"],
    [
      "the URL cannot defer an always toolset",
      "defer=core,issues",
      ["issues"],
      "issues,files,core;defer=issues",
    ],
    [
      "defer spelled as a repeated key and with spaces",
      "defer=issues&defer=files+core",
      ["issues", "files"],
      "issues,files,core;defer=issues,files",
    ],
  ])("%s", (_what, query, deferred, key) => {
    const s = selection(query);
    expect(s.deferred).toEqual(deferred);
    expect(s.key).toBe(key);
  });

  test("deferral is part of the canonical key: the same set in any spelling shares it, another does not", () => {
    expect(selection("files&defer=issues").key).toBe(selection("defer=issues&toolsets=files").key);
    expect(selection("defer=issues").key).not.toBe(selection("").key);
  });

  test("defer= alone keeps the deployment's default selection and defers within it", () => {
    const s = selection("defer=all", { defaultSelection: "only=issues" });
    expect(s.active).toEqual(["issues", "core"]);
    expect(s.deferred).toEqual(["issues"]);
  });

  test("an unknown name in defer= is reported; all is not a name", () => {
    expect(selection("defer=all,isues").unknown).toEqual(["isues"]);
  });

  test("an always toolset deferred in the config is deferred", () => {
    const c = catalogOf(
      "upstreams: { u: { command: x } }\ntoolsets:\n  t: { always: true, deferred: true, tools: [u/a] }\n",
    );
    const r = select(c, "");
    expect(r.ok && r.selection.deferred).toEqual(["t"]);
  });
});

describe("what a resolution with deferred toolsets lists", () => {
  test("deferred tools leave tools/list; find_tools and call_tool join it", () => {
    expect(listed("defer=issues")).toEqual([
      "list_issues",
      "read_file",
      "whoami",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
    ]);
    expect(listed("")).toEqual([
      "list_issues",
      "create_issue",
      "read_file",
      "whoami",
      "list_server_toolsets",
    ]);
  });

  test("a tool that a listed toolset also exposes stays listed", () => {
    const r = resolved("defer=issues");
    expect(listedRoutes(r).map((x) => x.name)).toContain("list_issues");
    expect(searchEntries(r).map((e) => e.name)).toEqual(["list_issues", "create_issue"]);
  });

  test("a deferred upstream tool named find_tools never takes the built-in's place in the list", () => {
    const r = resolved("cluster&defer=cluster");
    expect(searchToolDefs(r).map((d) => d.name)).toEqual(["find_tools", "call_tool"]);
    expect(listedRoutes(r).map((x) => x.name)).not.toContain("find_tools");
    expect(r.tool.get("find_tools")?.upstream).toBe("k8s");
  });

  test("the index entries carry the toolset's title and description", () => {
    const entries = searchEntries(resolved("cluster"));
    expect(entries.map((e) => [e.name, e.toolset, e.toolsetTitle, e.toolsetDescription])).toEqual([
      ["list_pods", "cluster", "Kubernetes", "Pods and deployments."],
      ["delete_pod", "cluster", "Kubernetes", "Pods and deployments."],
      ["find_tools", "cluster", "Kubernetes", "Pods and deployments."],
    ]);
  });

  test("the resolution says why each toolset is deferred", () => {
    expect(resolved("cluster&defer=files").deferred.map((d) => [d.name, d.by])).toEqual([
      ["files", "url"],
      ["cluster", "config"],
    ]);
  });
});

describe("the search index", () => {
  test("one deferred set has one index, whoever searches it, through whichever resolution", async () => {
    const indexes = new SearchIndexes();
    const r = resolved("cluster&defer=issues");
    const [a, b] = await Promise.all([indexes.of(r), indexes.of(r)]);
    expect(a).toBe(b);
    expect(a.size).toBe(5);
    expect(await indexes.of(resolved("cluster&defer=issues"))).toBe(a);
    expect(await indexes.of(resolved("cluster&defer=files"))).not.toBe(a);
  });
});

describe("automatic deferral", () => {
  const auto = (tokens: number) => catalogOf(`${YAML}search: { auto_over_tokens: ${tokens} }\n`);
  const full = listFigure(resolved("")).approx_tokens;

  test("over the limit, every active toolset but the always ones is deferred", () => {
    const r = resolved("", auto(10));
    expect(r.deferred.map((d) => [d.name, d.by])).toEqual([
      ["issues", "auto"],
      ["files", "auto"],
    ]);
    expect((listsFor(r, false).tools.tools as { name: string }[]).map((t) => t.name)).toEqual([
      "whoami",
      "find_tools",
      "call_tool",
    ]);
  });

  test("at or under the limit nothing is deferred", () => {
    expect(resolved("", auto(full)).deferred).toEqual([]);
  });
});

describe("the report with deferral", () => {
  test("each entry says whether it is deferred; the list is counted with and without deferral", () => {
    const r = resolved("cluster&defer=issues");
    const report = toolsetsReport(catalog, selection("cluster&defer=issues"), r, [toolsetsToolDef]);
    expect(report.toolsets.map((t) => [t.name, t.deferred])).toEqual([
      ["issues", true],
      ["files", false],
      ["cluster", true],
      ["core", false],
    ]);
    expect(report.tools).toEqual([
      "list_issues",
      "read_file",
      "whoami",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
    ]);
    const listedBytes = Buffer.byteLength(JSON.stringify(listsFor(r, true).tools));
    expect(report.schema_bytes).toBe(listedBytes);
    expect(report.without_deferral?.tools).toBe(r.tools.length + 1);
    expect(report.without_deferral!.schema_bytes).toBeGreaterThan(0);
  });

  test("with nothing deferred there is no second figure", () => {
    const report = toolsetsReport(catalog, selection(""), resolved(""), [toolsetsToolDef]);
    expect(report.without_deferral).toBeUndefined();
  });

  test("without upstreams asked, a config-deferred toolset shows deferred even when not selected", () => {
    const report = toolsetsReport(catalog, selection("defer=files"));
    expect(report.toolsets.map((t) => [t.name, t.deferred])).toEqual([
      ["issues", false],
      ["files", true],
      ["cluster", true],
      ["core", false],
    ]);
  });
});
