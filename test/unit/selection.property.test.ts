import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseQuery, select } from "../../src/selection.js";
import { catalogOf } from "../helpers/catalog.js";

const catalog = catalogOf(`
upstreams: { u: { command: srv } }
toolsets:
  a: { tools: [u/a] }
  b: { default: false, tools: [u/b] }
  c: { default: false, tools: [u/c] }
  core: { always: true, tools: [u/core] }
  base: { always: true, default: false, tools: [u/base] }
`);
const names = ["a", "b", "c", "core", "base", "zz", "toolsets", "only", "without", ""];
const part = fc.oneof(
  fc.constantFrom(...names),
  fc
    .tuple(
      fc.constantFrom("toolsets", "only", "without", "a", "x"),
      fc.array(fc.constantFrom(...names), { maxLength: 4 }),
    )
    .map(([k, v]) => `${k}=${v.join(",")}`),
);

describe("selection properties", () => {
  test("parsing a random query string never throws", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (q) => {
        const r = parseQuery(q);
        expect(typeof r.ok).toBe("boolean");
        const s = select(catalog, q);
        if (!s.ok) expect(s.error).toMatch(/\w/);
      }),
      { numRuns: 2000 },
    );
  });

  test("no query drops an always toolset", () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        const s = select(catalog, parts.join("&"));
        expect(s.ok).toBe(true);
        if (s.ok) expect(s.selection.active).toEqual(expect.arrayContaining(["core", "base"]));
      }),
    );
  });

  test("the order of query keys never changes the result", () => {
    fc.assert(
      fc.property(
        fc
          .array(part, { maxLength: 8 })
          .chain((parts) =>
            fc.tuple(fc.constant(parts), fc.shuffledSubarray(parts, { minLength: parts.length })),
          ),
        ([parts, shuffled]) => {
          const x = select(catalog, parts.join("&"));
          const y = select(catalog, shuffled.join("&"));
          if (!x.ok || !y.ok) throw new Error("unexpected parse failure");
          expect(y.selection.active).toEqual(x.selection.active);
          expect(y.selection.key).toBe(x.selection.key);
          expect([...y.selection.unknown].sort()).toEqual([...x.selection.unknown].sort());
        },
      ),
    );
  });
});
