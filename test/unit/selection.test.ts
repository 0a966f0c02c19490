import { describe, expect, test } from "vitest";
import { LIMITS, parseQuery, select } from "../../src/selection.js";
import { catalogOf } from "../helpers/catalog.js";

const catalog = catalogOf(`
upstreams:
  u: { command: srv }
toolsets:
  issues: { tools: [u/list_issues] }
  docs: { tools: [u/search_docs] }
  benchmarks: { default: false, tools: [u/run_bench] }
  spaces: { default: false, tools: [u/list_spaces] }
  core: { always: true, tools: [u/whoami] }
`);

function active(query: string, options = {}) {
  const r = select(catalog, query, options);
  if (!r.ok) throw new Error(r.error);
  return r.selection;
}

describe("selecting toolsets by URL", () => {
  test.each([
    ["an empty URL gets the defaults and the always toolset", "", ["issues", "docs", "core"]],
    ["a bare flag adds an opt-in toolset", "benchmarks", ["issues", "docs", "benchmarks", "core"]],
    [
      "toolsets= is read like bare flags",
      "toolsets=benchmarks,spaces",
      ["issues", "docs", "benchmarks", "spaces", "core"],
    ],
    [
      "a key with a value is read as a name (?x=1 means x)",
      "benchmarks=1",
      ["issues", "docs", "benchmarks", "core"],
    ],
    ["only= drops the defaults", "only=spaces", ["spaces", "core"]],
    ["only= keeps an always toolset", "only=docs", ["docs", "core"]],
    ["with only, other named toolsets are not added", "only=docs&benchmarks", ["docs", "core"]],
    ["without never removes an always toolset", "without=core,docs", ["issues", "core"]],
    ["without applies after the additions", "benchmarks&without=benchmarks", ["issues", "docs", "core"]],
    [
      "spaces are separators",
      "toolsets=benchmarks%20spaces",
      ["issues", "docs", "benchmarks", "spaces", "core"],
    ],
    [
      "a plus is read as a space",
      "toolsets=benchmarks+spaces",
      ["issues", "docs", "benchmarks", "spaces", "core"],
    ],
    [
      "repeated keys unite",
      "toolsets=benchmarks&toolsets=spaces",
      ["issues", "docs", "benchmarks", "spaces", "core"],
    ],
    ["repeated only keys unite", "only=docs&only=spaces", ["docs", "spaces", "core"]],
    ["an empty only= selects only the always toolset, not the defaults", "only=", ["core"]],
    ["a leading question mark is no part of a name", "?benchmarks", ["issues", "docs", "benchmarks", "core"]],
  ])("%s", (_bug, query, expected) => {
    expect(active(query).active).toEqual(expected);
  });

  test("a typo in the URL is reported as unknown, not refused", () => {
    const s = active("benchmrks&issues");
    expect(s.active).toEqual(["issues", "docs", "core"]);
    expect(s.unknown).toEqual(["benchmrks"]);
  });

  test("unknown names in only= or without= are kept, once each", () => {
    expect(active("x&only=y,docs&without=z&x&toolsets=y").unknown).toEqual(["x", "y", "z"]);
  });

  test("?a&b, ?b&a and ?toolsets=a,b are the same selection", () => {
    const keys = [
      "benchmarks&spaces",
      "spaces&benchmarks",
      "toolsets=benchmarks,spaces",
      "toolsets=spaces&benchmarks=1",
    ].map((q) => active(q).key);
    expect(new Set(keys).size).toBe(1);
    expect(active("benchmarks").key).not.toBe(keys[0]);
  });

  test("an ignored query key (scopes=) is not read as a toolset name", () => {
    const s = active("scopes=data:read", { ignoreKeys: ["scopes"] });
    expect(s.unknown).toEqual([]);
    expect(s.active).toEqual(["issues", "docs", "core"]);
  });

  test("the deployment default applies to an empty URL", () => {
    expect(active("", { defaultSelection: "only=benchmarks" }).active).toEqual(["benchmarks", "core"]);
    expect(
      active("scopes=x", { defaultSelection: "only=benchmarks", ignoreKeys: ["scopes"] }).active,
    ).toEqual(["benchmarks", "core"]);
  });

  test("the deployment default does not override a URL that names something", () => {
    expect(active("spaces", { defaultSelection: "only=benchmarks" }).active).toEqual([
      "issues",
      "docs",
      "spaces",
      "core",
    ]);
  });

  test("a hostile query with thousands of names is refused as too many or too long", () => {
    const names = Array.from({ length: 5000 }, (_, i) => `n${i}`).join(",");
    const r = parseQuery(`toolsets=${names}`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/too (many|long)/);
    const long = parseQuery(`x${"a".repeat(LIMITS.queryLength + 1)}`);
    expect(long.ok).toBe(false);
  });

  test("a malformed percent-escape does not crash the parser", () => {
    const r = parseQuery("%E0%A4%A&docs");
    expect(r.ok).toBe(true);
  });
});
