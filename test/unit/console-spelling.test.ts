/** The console's URL spelling: the shortest query that selects exactly what the switches say (SPEC §3, §17.2). */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  type SpellContext,
  type SpellToolset,
  shortestQuery,
  withQuery,
} from "../../src/console/spelling.js";
import { select } from "../../src/selection.js";

const t = (name: string, flags: Partial<SpellToolset> = {}): SpellToolset => ({
  name,
  default: true,
  always: false,
  deferred: false,
  ...flags,
});

const EXAMPLE: SpellContext = {
  toolsets: [t("basics"), t("files"), t("notes", { default: false }), t("diagnostics", { default: false })],
};

describe("the shortest spelling of a selection", () => {
  test.each([
    ["the defaults are the bare URL", [], ["basics", "files"], [], ""],
    ["one opt-in toolset more is its name", [], ["basics", "files", "notes"], [], "notes"],
    ["two more are two names", [], ["basics", "files", "notes", "diagnostics"], [], "notes&diagnostics"],
    ["one default left out is only= when that is shorter", [], ["basics"], [], "only=basics"],
    ["only= when it is shorter than names and without=", [], ["notes"], [], "only=notes"],
    ["nothing at all is only=", [], [], [], "only="],
    ["one deferred toolset is defer=", [], ["basics", "files"], ["files"], "defer=files"],
    ["every active toolset deferred is defer=all", [], ["basics", "files"], ["basics", "files"], "defer=all"],
  ])("%s", (_, __, on, defer, expected) => {
    expect(shortestQuery(EXAMPLE, { on, defer })).toBe(expected);
  });

  test("defaults left out are without= when that is shorter than only=", () => {
    const ctx = { toolsets: [t("alpha"), t("beta"), t("gamma")] };
    expect(shortestQuery(ctx, { on: ["alpha", "beta"] })).toBe("without=gamma");
  });

  test("an always toolset is never named, and cannot be left out or deferred", () => {
    const ctx = { toolsets: [t("core", { always: true }), t("a"), t("b", { default: false })] };
    expect(shortestQuery(ctx, { on: ["b"] })).toBe("only=b");
    expect(shortestQuery(ctx, { on: ["a"], defer: ["core"] })).toBe("");
  });

  test("a config-deferred toolset is deferred without defer=", () => {
    const ctx = { toolsets: [t("a"), t("big", { default: false, deferred: true })] };
    expect(shortestQuery(ctx, { on: ["a", "big"], defer: ["big"] })).toBe("big");
  });

  test("with a deployment default, the bare URL is that default, and its toolsets' own defaults need a name", () => {
    const ctx = { ...EXAMPLE, defaultSelection: "only=notes" };
    expect(shortestQuery(ctx, { on: ["notes"] })).toBe("");
    expect(shortestQuery(ctx, { on: ["basics", "files"] })).toBe("without=");
  });

  test("a toolset named like an ignored query key is asked for with toolsets=", () => {
    const ctx = {
      toolsets: [t("a"), t("b"), t("c"), t("scopes", { default: false })],
      ignoreKeys: ["scopes"],
    };
    expect(shortestQuery(ctx, { on: ["a", "b", "c", "scopes"] })).toBe("toolsets=scopes");
  });

  test("a toolset the caller may not use does not matter either way", () => {
    const ctx = { toolsets: [t("a"), t("admin"), t("b", { default: false })] };
    expect(shortestQuery(ctx, { on: ["a", "b"], ignore: ["admin"] })).toBe("b");
  });

  test("the path and its query", () => {
    expect(withQuery("/mcp", "")).toBe("/mcp");
    expect(withQuery("/mcp", "notes")).toBe("/mcp?notes");
  });

  test("whatever the catalog and the switches, the spelling reads back as exactly that selection, and no other spelling tried is shorter", () => {
    const catalogs = fc
      .uniqueArray(fc.constantFrom("a", "b", "c", "d", "e", "f"), { minLength: 1, maxLength: 6 })
      .chain((names) =>
        fc.record({
          toolsets: fc.tuple(
            ...names.map((name) =>
              fc.record({
                name: fc.constant(name),
                default: fc.boolean(),
                always: fc.boolean(),
                deferred: fc.boolean(),
              }),
            ),
          ),
          defaultSelection: fc.option(fc.constantFrom("only=a", "b", "without=a", "defer=all"), {
            nil: undefined,
          }),
          on: fc.subarray(names),
          defer: fc.subarray(names),
        }),
      );
    fc.assert(
      fc.property(catalogs, ({ toolsets, defaultSelection, on, defer }) => {
        const ctx: SpellContext = { toolsets, defaultSelection };
        const q = shortestQuery(ctx, { on, defer });
        const catalog = { toolsets, toolset: new Set(toolsets.map((x) => x.name)) };
        const r = select(catalog, q, defaultSelection !== undefined ? { defaultSelection } : {});
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const want = toolsets.filter((x) => x.always || on.includes(x.name)).map((x) => x.name);
        const deferred = toolsets
          .filter((x) => want.includes(x.name) && (x.deferred || (!x.always && defer.includes(x.name))))
          .map((x) => x.name);
        expect(r.selection.active).toEqual(want);
        expect(r.selection.deferred).toEqual(deferred);
        const plain = [`only=${want.filter((n) => !toolsets.find((x) => x.name === n)!.always).join(",")}`];
        expect(q.length).toBeLessThanOrEqual(
          plain[0]!.length + (deferred.length ? `&defer=${deferred.join(",")}`.length : 0),
        );
      }),
      { numRuns: 500 },
    );
  });
});
