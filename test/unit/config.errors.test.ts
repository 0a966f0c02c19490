/** One check reports every config error, each at its own node, and nothing that only follows from another. */
import { describe, expect, test } from "vitest";
import { errorsOf } from "../helpers/catalog.js";

describe("every config error in one run", () => {
  test("an unknown key in one upstream does not hide a member naming an undeclared upstream", () => {
    const errors = errorsOf(
      "upstreams:\n  a: { command: x, bogus: 1 }\ntoolsets:\n  t:\n    tools: [a/one, b/two]\n",
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:2:20: unknown key "bogus" in upstreams\.a/),
      expect.stringMatching(/^packs\.yaml:5:20: "b\/two" refers to upstream "b", which is not declared/),
    ]);
  });

  test("a missing variable does not hide a name collision", () => {
    const errors = errorsOf(
      [
        "upstreams:",
        "  a: { url: 'https://x/mcp', headers: { A: '${TOKEN}' } }",
        "  b: { command: x }",
        "toolsets:",
        "  one: { tools: [a/search] }",
        "  two: { tools: [b/search] }",
      ].join("\n"),
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:2:44: environment variable TOKEN is not set/),
      expect.stringMatching(/^packs\.yaml:6:18: exposed tool name "search" is used by b\/search/),
    ]);
  });

  test.each([
    [
      "a wrong type in an upstream's other key, and its members' duplicate as:",
      "upstreams:\n  a: { command: x, call_timeout: slow }\ntoolsets:\n  one: { tools: [{ tool: a/search, as: find }] }\n  two: { tools: [{ tool: a/other, as: find }] }\n",
      [
        /^packs\.yaml:2:34: upstreams\.a\.call_timeout must be a number/,
        /^packs\.yaml:5:26: exposed tool name "find" is used by a\/other \(toolset two\) and by a\/search \(toolset one, at packs\.yaml:4:26\)/,
      ],
    ],
    [
      "a wrong type in a member's title, and that member's duplicate as:",
      "upstreams:\n  a: { command: x }\ntoolsets:\n  one: { tools: [{ tool: a/search, as: find, title: 5 }] }\n  two: { tools: [{ tool: a/other, as: find }] }\n",
      [
        /^packs\.yaml:4:53: toolsets\.one\.tools\.0\.title must be a string/,
        /^packs\.yaml:5:26: exposed tool name "find" is used by a\/other/,
      ],
    ],
    [
      "a wrong type in an upstream's prefix, and its members' duplicate as: (without as: their names are not known)",
      "upstreams:\n  a: { command: x, prefix: 7 }\ntoolsets:\n  one: { tools: [{ tool: a/search, as: find }, a/x] }\n  two: { tools: [{ tool: a/other, as: find }, a/x] }\n",
      [
        /^packs\.yaml:2:28: upstreams\.a\.prefix must be a string/,
        /^packs\.yaml:5:26: exposed tool name "find"/,
      ],
    ],
    [
      "a missing variable in a member's title, and that member's duplicate as:",
      "public_env: [T]\nupstreams:\n  a: { command: x }\ntoolsets:\n  one: { tools: [{ tool: a/search, as: find, title: '${T}' }] }\n  two: { tools: [{ tool: a/other, as: find }] }\n",
      [/^packs\.yaml:5:53: environment variable T is not set/, /^packs\.yaml:6:26: exposed tool name "find"/],
    ],
    [
      "a wrong type in an upstream no toolset names, and a toolset of its name",
      "upstreams:\n  fs: { command: x, max_instances: many }\n  b: { command: y }\ntoolsets:\n  fs: { tools: [b/x] }\n",
      [
        /^packs\.yaml:2:3: upstream "fs" is in no toolset, so it would get a toolset of its own name, but toolset "fs" \(at packs\.yaml:5:3\) exists/,
        /^packs\.yaml:2:36: upstreams\.fs\.max_instances must be a whole number/,
      ],
    ],
  ])("a schema error never hides a compile error of the same run: %s", (_, yaml, expected) => {
    const errors = errorsOf(yaml);
    // In the file's order: by position.
    expect(errors).toEqual(expected.map((p) => expect.stringMatching(p)));
  });

  test("members of an upstream whose spec is broken are not reported as undeclared, nor twice", () => {
    const errors = errorsOf(
      "upstreams:\n  a: { command: 5, isolation: nope }\ntoolsets:\n  t: { tools: [a/one, a/two, 'a/bad name'] }\n  u: { tools: [a/one] }\n",
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:2:17: upstreams\.a\.command must be a string/),
      expect.stringMatching(/^packs\.yaml:2:31: upstreams\.a\.isolation must be one of shared, per-session/),
      // The member's own problem is still found.
      expect.stringMatching(/^packs\.yaml:4:30: "bad name" is not a valid tool name/),
    ]);
  });

  test("an upstream that fails a compiler check still counts as declared", () => {
    const errors = errorsOf(
      "upstreams:\n  a: { command: x, url: 'https://x' }\ntoolsets:\n  t: { tools: [a/one] }\n",
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:2:3: upstream "a" has both url and command/),
    ]);
  });

  test("a toolset with a broken member still checks its other members", () => {
    const errors = errorsOf(
      "upstreams: { u: { command: x } }\ntoolsets:\n  t:\n    tools:\n      - { tool: u/a, bogus: 1 }\n      - nope/b\n      - 7\n      - u/c d\n",
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:5:22: unknown key "bogus" in toolsets\.t\.tools\.0/),
      expect.stringMatching(/^packs\.yaml:6:9: "nope\/b" refers to upstream "nope"/),
      expect.stringMatching(
        /^packs\.yaml:7:9: toolsets\.t\.tools\.2 must be a string "upstream\/tool" or a mapping/,
      ),
      expect.stringMatching(/^packs\.yaml:8:9: "c d" is not a valid tool name/),
    ]);
  });

  test("a wrongly typed toolset key is reported once and the toolset's members are still checked", () => {
    const errors = errorsOf(
      "upstreams: { u: { command: x } }\ntoolsets:\n  t: { title: 5, default: maybe, tools: [v/x] }\n",
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:3:15: toolsets\.t\.title must be a string/),
      expect.stringMatching(/^packs\.yaml:3:27: toolsets\.t\.default must be true or false/),
      expect.stringMatching(/^packs\.yaml:3:42: "v\/x" refers to upstream "v"/),
    ]);
  });

  test("a missing variable in a url, a command or a token is one error, not also a bad url, an empty command or a short token", () => {
    const errors = errorsOf(
      "auth: { tokens: ['${T}'] }\nupstreams:\n  a: { url: '${URL}' }\n  b: { command: '${CMD}' }\ntoolsets:\n  t: { tools: [a/x, b/y, '${UP}/z'] }\n",
    );
    expect(errors).toHaveLength(4);
    for (const e of errors) expect(e).toMatch(/environment variable (T|URL|CMD|UP) is not set/);
  });

  test("a value that fails the schema is not also reported for the variable it names", () => {
    const errors = errorsOf(
      "upstreams:\n  u: { command: x, env: ['${A}'], forward_headers: ['${B}'], bogus: '${C}' }\n",
    );
    expect(errors).toHaveLength(3);
    expect(errors.join("\n")).not.toMatch(/is not set/);
  });

  test("a toolset that is not a mapping does not also make its upstream's implicit toolset clash", () => {
    const errors = errorsOf("upstreams: { fs: { command: x } }\ntoolsets:\n  fs: 5\n");
    expect(errors).toEqual([expect.stringMatching(/^packs\.yaml:3:7: toolsets\.fs must be a mapping/)]);
  });

  test("a YAML syntax error stops its own file only, and its upstreams are not called undeclared elsewhere", () => {
    const errors = errorsOf([
      { file: "base.yaml", text: "upstreams:\n  gh: [unclosed\n" },
      { file: "team.yaml", text: "toolsets:\n  t: { tools: [gh/list], defalt: true }\n" },
    ]);
    expect(errors).toEqual([
      expect.stringMatching(/^base\.yaml:\d+:\d+: YAML syntax/),
      expect.stringMatching(/^team\.yaml:2:26: unknown key "defalt"/),
    ]);
  });

  test("errors come in file order, then by position, whatever check found them", () => {
    const errors = errorsOf([
      { file: "a.yaml", text: "toolsets:\n  t: { tools: [x/y] }\nbogus: 1\n" },
      { file: "b.yaml", text: "upstreams:\n  u: { command: x, nope: 1 }\n" },
    ]);
    expect(errors.map((e) => e.split(": ")[0])).toEqual(["a.yaml:2:16", "a.yaml:3:1", "b.yaml:2:20"]);
  });

  test("a value from the environment stays redacted when schema, variable and compiler errors are reported together", () => {
    const errors = errorsOf(
      "upstreams:\n  u: { url: 'ftp://${S}', bogus: 1 }\n  v: { url: 'ftp://${S}' }\n  w: { command: x, args: ['${MISSING}'] }\n",
      { S: "sekrit-value" },
    );
    expect(errors).toHaveLength(3);
    expect(errors.join("\n")).not.toContain("sekrit-value");
    expect(errors.join("\n")).toContain("ftp://${S}");
  });
});
