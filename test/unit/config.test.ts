import { describe, expect, test } from "vitest";
import { compileTexts } from "../../src/catalog/load.js";
import { catalogOf, errorsOf } from "../helpers/catalog.js";

describe("config errors point at the offending node", () => {
  test.each([
    [
      "a YAML syntax error is reported with its position",
      "toolsets:\n  a: [unclosed\n",
      /^packs\.yaml:3:1: YAML syntax/,
    ],
    [
      "an unknown key deep inside a toolset is refused, with a suggestion",
      "upstreams: { u: { command: x } }\ntoolsets:\n  a:\n    descripton: hi\n    tools: [u/t]\n",
      /^packs\.yaml:4:5: unknown key "descripton" in toolsets\.a \(did you mean "description"\?\)$/,
    ],
    [
      "an unknown top-level key is refused, with a suggestion",
      "upstream: {}\n",
      /^packs\.yaml:1:1: unknown key "upstream" .*did you mean "upstreams"/,
    ],
    [
      "a wrong type is refused",
      "upstreams: { u: { command: x } }\ntoolsets:\n  a:\n    default: yes please\n    tools: [u/t]\n",
      /^packs\.yaml:4:14: toolsets\.a\.default must be true or false, not string "yes please"$/,
    ],
    [
      "a ref to an undeclared upstream is refused",
      "upstreams: { github: { url: 'https://x/mcp' } }\ntoolsets:\n  a:\n    tools:\n      - githb/list\n",
      /^packs\.yaml:5:9: "githb\/list" refers to upstream "githb", which is not declared \(did you mean "github\/list"\?\)$/,
    ],
    [
      "a bad tool name is refused",
      "upstreams: { u: { command: x } }\ntoolsets:\n  a:\n    tools: ['u/has space']\n",
      /^packs\.yaml:4:13: "has space" is not a valid tool name/,
    ],
    [
      "a member without an upstream is refused",
      "toolsets:\n  a:\n    tools: [list_issues]\n",
      /is not a tool reference.*upstream\/tool/,
    ],
    [
      "a toolset named after a reserved query key is refused",
      "upstreams: { u: { command: x } }\ntoolsets:\n  only:\n    tools: [u/t]\n",
      /^packs\.yaml:3:3: toolset name "only" is a reserved query key/,
    ],
    [
      "a toolset name that is not URL-safe is refused",
      "upstreams: { u: { command: x } }\ntoolsets:\n  'my tools':\n    tools: [u/t]\n",
      /^packs\.yaml:3:3: toolset name "my tools" is not URL-safe/,
    ],
    [
      "an upstream with both url and command is refused",
      "upstreams:\n  u: { command: x, url: 'https://x' }\n",
      /^packs\.yaml:2:3: upstream "u" has both url and command/,
    ],
    [
      "an upstream with neither url nor command is refused",
      "upstreams:\n  u: { args: [a] }\n",
      /^packs\.yaml:2:3: upstream "u" has neither url nor command/,
    ],
    [
      "an override on a glob is refused",
      "upstreams: { u: { command: x } }\ntoolsets:\n  a:\n    tools:\n      - { tool: 'u/*', as: y }\n",
      /is a glob, but an override/,
    ],
  ])("%s", (_bug, yaml, pattern) => {
    const errors = errorsOf(yaml);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatch(pattern);
  });

  test("every one of several errors is reported, not only the first", () => {
    const errors = errorsOf(
      "upstreams:\n  u: { command: x, bogus: 1 }\ntoolsets:\n  a: { tools: [v/t], defalt: true }\n",
    );
    // The unknown key in u does not stop the check of the toolset's member (v is undeclared).
    expect(errors).toHaveLength(3);
    const semantic = errorsOf(
      "upstreams:\n  u: { command: x }\ntoolsets:\n  a: { tools: [v/t, w/t] }\n  only: { tools: [u/t] }\n",
    );
    expect(semantic).toHaveLength(3);
  });

  test("two upstream tools exposed under one name are an error naming both", () => {
    const errors = errorsOf(`upstreams:
  a: { command: a }
  b: { command: b }
toolsets:
  one: { tools: [a/search] }
  two:
    default: false
    tools: [b/search]
`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^packs\.yaml:8:13: exposed tool name "search" is used by b\/search \(toolset two\) and by a\/search \(toolset one, at packs\.yaml:5:18\)/,
    );
    expect(errors[0]).toMatch(/as:.*prefix:/);
  });

  test("a prefix or as: resolves a name collision", () => {
    expect(
      errorsOf(
        "upstreams:\n  a: { command: a }\n  b: { command: b, prefix: b_ }\ntoolsets:\n  one: { tools: [a/search, b/search] }\n",
      ),
    ).toEqual([]);
    expect(
      errorsOf(
        "upstreams:\n  a: { command: a }\n  b: { command: b }\ntoolsets:\n  one: { tools: [a/search, { tool: b/search, as: b_search }] }\n",
      ),
    ).toEqual([]);
  });
});

describe("environment variables", () => {
  test("a missing variable is an error naming it, not an empty string", () => {
    const errors = errorsOf(
      "upstreams:\n  g:\n    url: https://x/mcp\n    headers: { Authorization: 'Bearer ${GH_TOKEN}' }\n",
    );
    expect(errors).toEqual([
      "packs.yaml:4:31: environment variable GH_TOKEN is not set (used in upstreams.g.headers.Authorization) (set GH_TOKEN, or write ${GH_TOKEN:-default})",
    ]);
  });

  test("a default or a set variable is substituted, and $${VAR} stays literal", () => {
    const c = catalogOf(
      "upstreams:\n  g:\n    url: ${BASE:-https://x}/mcp\n    headers: { A: 'Bearer ${T}', B: '$${T}' }\n",
      { T: "s3cret" },
    );
    const g = c.upstreams.get("g")!;
    expect(g.url).toBe("https://x/mcp");
    expect(g.headers).toEqual({ A: "Bearer s3cret", B: "${T}" });
  });

  test("a secret from the environment stays out of the display form", () => {
    const c = catalogOf("upstreams:\n  g:\n    url: https://x/mcp\n    headers: { A: 'Bearer ${T}' }\n", {
      T: "s3cret",
    });
    expect(JSON.stringify(c.upstreams.get("g")!.display)).not.toContain("s3cret");
    expect(c.upstreams.get("g")!.display.headers).toEqual({ A: "Bearer ${T}" });
  });

  test("an error about a value names its ${VAR}, never the secret it contains", () => {
    const errors = errorsOf("upstreams:\n  g:\n    url: ${U}\n", { U: "ftp://user:s3cret@host" });
    expect(errors.join()).toContain("${U}");
    expect(errors.join()).not.toContain("s3cret");
  });
});

describe("several files", () => {
  const base = {
    file: "base.yaml",
    text: "upstreams:\n  u: { command: x }\ntoolsets:\n  sandboxes:\n    title: Sandboxes\n    tools: [u/start]\n",
  };
  test("a toolset declared in two files compiles without an error", () => {
    const team = {
      file: "team.yaml",
      text: "upstreams:\n  v: { command: y }\ntoolsets:\n  sandboxes:\n    title: Ignored\n    tools: [v/run]\n",
    };
    const r = errorsOf([base, team]);
    expect(r).toEqual([]);
  });

  test("every key a later declaration sets that the first one wins over is a warning at that key, naming where the winner is", () => {
    const first = {
      file: "base.yaml",
      text: [
        "name: base",
        "state_dir: ./state",
        "limits: { sessions: 100 }",
        "state: { max_session_bytes: 1000000 }",
        "audit: { stderr: true }",
        "upstreams:",
        "  u: { command: x }",
        "toolsets:",
        "  ops:",
        "    title: Ops",
        "    tools: [u/one]",
        "",
      ].join("\n"),
    };
    const later = {
      file: "team.yaml",
      text: [
        "name: team", // 1
        "state_dir: ./state", // 2: the same folder (both files are in this one): no warning
        "limits: { sessions: 50, batch: 10 }", // 3: batch is this file's own
        "state: { max_session_bytes: 2000000 }", // 4
        "audit: { stderr: true, subject: digest }", // 5
        "toolsets:",
        "  ops:",
        "    always: true", // 8: the first declaration leaves it at its default
        "    title: Operations", // 9
        "    default: true", // 10: what the first declaration has (the default): no warning
        "    deferred: true", // 11
        "    tools: [u/two]",
        "",
      ].join("\n"),
    };
    const r = compileTexts([first, later]);
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
    expect(r.catalog.toolset.get("ops")).toMatchObject({ always: false, title: "Ops", deferred: false });
    expect(r.catalog.warnings).toEqual([
      'team.yaml:1:1: warning: name: "team" is ignored: the first file that sets it wins with name: "base" (at base.yaml:1:1) (set it in one file)',
      "team.yaml:3:11: warning: limits.sessions: 50 is ignored: the first file that sets it wins with limits.sessions: 100 (at base.yaml:3:11) (set it in one file)",
      "team.yaml:4:10: warning: state.max_session_bytes: 2000000 is ignored: the first file that sets it wins with state.max_session_bytes: 1000000 (at base.yaml:4:10) (set it in one file)",
      'team.yaml:5:24: warning: audit.subject: "digest" is ignored: audit: of the first file that has it wins with audit.subject: "plain", the default (at base.yaml:5:1) (write audit: in one file)',
      "team.yaml:8:5: warning: toolset ops: always: true is ignored: its first declaration wins with always: false, the default (at base.yaml:9:3) (the first declaration describes a toolset: set always there, or remove it here)",
      'team.yaml:9:5: warning: toolset ops: title: "Operations" is ignored: its first declaration wins with title: "Ops" (at base.yaml:10:5) (the first declaration describes a toolset: set title there, or remove it here)',
      "team.yaml:11:5: warning: toolset ops: deferred: true is ignored: its first declaration wins with deferred: false, the default (at base.yaml:9:3) (the first declaration describes a toolset: set deferred there, or remove it here)",
    ]);
  });

  test("a later declaration that repeats what the first says, or adds only members, warns of nothing", () => {
    const team = {
      file: "team.yaml",
      text: "toolsets:\n  sandboxes:\n    title: Sandboxes\n    default: true\n    tools: [u/stop]\n",
    };
    const r = compileTexts([base, team]);
    expect(r.ok && r.catalog.warnings).toBeUndefined();
  });

  test("an upstream declared twice with different specs is an error; the same spec twice is not", () => {
    const team = { file: "team.yaml", text: "upstreams:\n  u: { command: other }\n" };
    expect(errorsOf([base, team])).toEqual([
      expect.stringMatching(
        /^team\.yaml:2:3: upstream "u" is declared again with a different spec \(first at base\.yaml:2:3\)/,
      ),
    ]);
    const same = { file: "team.yaml", text: "upstreams:\n  u: { command: x }\n" };
    expect(errorsOf([base, same])).toEqual([]);
  });
});

describe("compiling", () => {
  test("an upstream that no toolset mentions gets an implicit default toolset", () => {
    const c = catalogOf(
      "upstreams:\n  a: { command: a }\n  b: { command: b }\ntoolsets:\n  one: { tools: [a/x] }\n",
    );
    expect(c.toolset.get("b")).toMatchObject({ implicit: true, default: true, upstreams: ["b"] });
    expect(c.upstreams.get("a")?.covered).toBe(true);
    expect(c.upstreams.get("b")?.covered).toBe(false);
  });

  test("a config of upstreams alone compiles without an error", () => {
    const r = errorsOf("upstreams: { u: { command: x } }\n");
    expect(r).toEqual([]);
  });

  test("a compiled catalog is frozen once built", () => {
    const c = catalogOf("upstreams:\n  a: { command: a }\ntoolsets:\n  one: { tools: [a/x] }\n");
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.toolsets[0]!.members)).toBe(true);
    expect(() => (c.toolset as Map<string, unknown>).set("x", {})).toThrow();
  });

  test("a relative cwd is taken from the config file's folder", () => {
    const r = catalogOf("upstreams:\n  a: { command: a, cwd: sub }\n");
    expect(r.upstreams.get("a")?.cwd).toBe(`${process.cwd()}/sub`);
  });
});

describe("auth and forwarded credentials", () => {
  test("forwarding the proxy's own bearer token to an upstream is refused", () => {
    const errors = errorsOf(
      "auth: { tokens: ['${T}'] }\nupstreams:\n  gh: { url: 'https://x/mcp', forward_headers: [Authorization] }\n",
      { T: "a-long-token" },
    );
    expect(errors).toEqual([
      expect.stringMatching(/^packs\.yaml:3:3: upstream "gh" forwards the Authorization header/),
    ]);
  });
});
