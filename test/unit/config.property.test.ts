/** The config loader on random input: it answers with located errors or a frozen catalog, and never throws. */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseDocument, stringify } from "yaml";
import { compileTexts } from "../../src/catalog/load.js";
import { type ConfigError, formatConfigError } from "../../src/config/errors.js";
import { loadTexts, type TextFile } from "../../src/config/load.js";

// ---------------------------------------------------------------------------------------------------------
// Checks

/** Every error reads `FILE:LINE:COL: message`, names one of the files, and points inside it. */
function expectLocated(errors: readonly ConfigError[], texts: readonly TextFile[]): void {
  expect(errors.length).toBeGreaterThan(0);
  for (const e of errors) {
    const text = texts.find((t) => t.file === e.file)?.text;
    expect(text, `error names a file that was not loaded: ${e.file}`).toBeDefined();
    const line = formatConfigError(e);
    const m = /^([^:]+):(\d+):(\d+): (\S.*)$/s.exec(line);
    expect(m, `not FILE:LINE:COL: message: ${JSON.stringify(line)}`).not.toBeNull();
    expect(m![1]).toBe(e.file);
    expect(Number(m![2])).toBe(e.line);
    expect(Number(m![3])).toBe(e.col);
    expect(Number.isInteger(e.line) && e.line >= 1, line).toBe(true);
    expect(Number.isInteger(e.col) && e.col >= 1, line).toBe(true);
    // A position past the end of the file points at nothing the user can find.
    const lines = text!.split(/\r\n|\r|\n/).length;
    expect(e.line, line).toBeLessThanOrEqual(lines + 1);
    expect(typeof e.message).toBe("string");
    expect(e.message.trim()).not.toBe("");
  }
}

/** Deeply frozen: objects and arrays frozen, maps and sets refuse changes. */
function expectDeepFrozen(value: unknown, path = "catalog", seen = new Set<unknown>()): void {
  if (value === null || typeof value !== "object" || seen.has(value) || value instanceof RegExp) return;
  seen.add(value);
  expect(Object.isFrozen(value), `${path} is not frozen`).toBe(true);
  if (value instanceof Map) {
    expect(() => value.set("__probe__", 1), `${path}.set works`).toThrow();
    expect(() => value.clear(), `${path}.clear works`).toThrow();
    for (const [k, v] of value) expectDeepFrozen(v, `${path}.get(${String(k)})`, seen);
  }
  if (value instanceof Set) {
    expect(() => value.add("__probe__"), `${path}.add works`).toThrow();
    for (const v of value) expectDeepFrozen(v, `${path}[item]`, seen);
  }
  for (const [k, v] of Object.entries(value)) expectDeepFrozen(v, `${path}.${k}`, seen);
}

/** Runs both loaders; either errors (located) or a frozen catalog. Returns whether the texts compiled. */
function checkTexts(texts: TextFile[], env: Record<string, string>): boolean {
  const loaded = loadTexts(texts, env);
  if (!loaded.ok) expectLocated(loaded.errors, texts);
  const compiled = compileTexts(texts, env);
  if (!compiled.ok) {
    expectLocated(compiled.errors, texts);
    return false;
  }
  expect(loaded.ok).toBe(true);
  expectDeepFrozen(compiled.catalog);
  expect(() => {
    (compiled.catalog as { name: string }).name = "changed";
  }).toThrow(TypeError);
  return true;
}

/**
 * An alias that cannot resolve (undefined anchor, or more than 100 expansions) is a located error from
 * src/config/source.ts; the tests below pin that. The random properties skip exactly those texts, so they
 * keep checking everything else.
 */
function hitsAliasCrash(text: string): boolean {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) return false;
  try {
    doc.toJS({ maxAliasCount: 100 });
    return false;
  } catch {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries

const ENV: Record<string, string> = {
  HOST: "127.0.0.1:9",
  TOKEN: "a-token-long-enough",
  EMPTY: "",
  BRACES: "a}b${c}",
  DOLLAR: "$$x",
};
const VARS = ["HOST", "TOKEN", "EMPTY", "BRACES", "DOLLAR", "UNSET", "lower_case", "9BAD"];

const envRef = fc
  .tuple(fc.constantFrom(...VARS), fc.constantFrom("plain", "default", "escaped", "embedded", "open"))
  .map(([v, form]) => {
    switch (form) {
      case "plain":
        return `\${${v}}`;
      case "default":
        return `\${${v}:-fallback}`;
      case "escaped":
        return `$\${${v}}`;
      case "embedded":
        return `pre-\${${v}}-post`;
      default:
        return `\${${v}`;
    }
  });

const instanceRef = fc.constantFrom(
  "${instance.dir}",
  "${instance.id}/x",
  "$${instance.dir}",
  "${instance.nope}",
);

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 2, arbitrary: envRef },
  { weight: 1, arbitrary: instanceRef },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
);

/** Names of upstreams and toolsets: mostly usable, some reserved, unsafe, inherited or odd. */
const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("u", "v", "gh", "docs", "a.b", "x_1") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "only",
      "without",
      "toolsets",
      "my tools",
      "-x",
      ".x",
      "a/b",
      "__proto__",
      "constructor",
      "toString",
      "hasOwnProperty",
      "",
      "x".repeat(65),
      "ünï",
      "1",
      "true",
      "null",
      "${HOST}",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);
const toolName = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom("echo", "add", "search", "list_issues", "a.b-c") },
  { weight: 2, arbitrary: fc.constantFrom("*", "*_issue", "ech?", "**", "has space", "", "x".repeat(130)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -1, Number.POSITIVE_INFINITY, Number.NaN),
);
/** Anything YAML can say, for wrong types and unknown keys. */
const anything = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(name, tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** Mostly the right type, sometimes anything at all. */
const typed = <T>(right: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 9, arbitrary: right }, { weight: 1, arbitrary: anything });
const stringMap = fc.dictionary(fc.oneof(name, fc.constantFrom("Authorization", "X-Api-Key")), text, {
  maxKeys: 3,
});
/** An unknown key now and then (misspellings of real ones included). */
const withUnknown = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc
    .tuple(
      arb,
      fc.option(
        fc.dictionary(
          fc.oneof(fc.constantFrom("descripton", "comand", "tool", "urls", "defaults"), name),
          anything,
          { minKeys: 1, maxKeys: 2 },
        ),
        { freq: 6 },
      ),
    )
    .map(([obj, extra]) => ({ ...(extra ?? {}), ...obj }));

const upstream = withUnknown(
  fc.record(
    {
      url: typed(
        fc.oneof(
          fc.constantFrom("http://127.0.0.1:9/mcp", "https://example.test/mcp", "ftp://x", "not a url", ""),
          fc.constant("http://${HOST}/mcp?key=${TOKEN}"),
          text,
        ),
      ),
      command: typed(fc.oneof(fc.constantFrom("node", "srv", "", "  "), text)),
      args: typed(fc.array(text, { maxLength: 3 })),
      env: typed(stringMap),
      headers: typed(stringMap),
      cwd: typed(fc.oneof(fc.constantFrom(".", "..", "/tmp", "sub/dir"), text)),
      prefix: typed(fc.oneof(fc.constantFrom("", "gh_", "a.b-", "bad prefix", "x".repeat(65)), text)),
      call_timeout: typed(fc.oneof(fc.integer({ min: -5, max: 600 }), fc.double({ min: 0, max: 1000 }))),
      connect_timeout: typed(fc.integer({ min: -5, max: 600 })),
      validate_arguments: typed(fc.boolean()),
      forward_headers: typed(
        fc.array(fc.oneof(fc.constantFrom("authorization", "x-key", "bad header"), text)),
      ),
      header_env: typed(fc.dictionary(fc.constantFrom("x-api-key", "authorization", "bad header"), text)),
      isolation: typed(fc.constantFrom("shared", "per-session", "global")),
      max_instances: typed(fc.integer({ min: -1, max: 64 })),
      roots: typed(
        fc.array(fc.oneof(fc.constantFrom(".", "/srv", "file:///x", "file://host/x", "https://x"), text), {
          maxLength: 2,
        }),
      ),
      attribution: typed(fc.constantFrom("tied", "in-flight", "loose")),
      protocol: typed(fc.constantFrom("auto", "2025", 2025, "2026-07-28", 2026)),
      inherit_env: typed(
        fc.array(fc.oneof(fc.constantFrom(...VARS, "TOOLPACKS_TOKEN"), text), { maxLength: 2 }),
      ),
      max_line_bytes: typed(fc.integer({ min: 0, max: 1 << 20 })),
      input_timeout: typed(fc.oneof(fc.integer({ min: -1, max: 600 }), fc.double({ min: 0, max: 10 }))),
    },
    { requiredKeys: [] },
  ),
);

const member = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(name, toolName).map(([u, t]) => `${u}/${t}`) },
  { weight: 1, arbitrary: text },
  {
    weight: 2,
    arbitrary: withUnknown(
      fc.record(
        {
          tool: typed(fc.tuple(name, toolName).map(([u, t]) => `${u}/${t}`)),
          as: typed(fc.oneof(toolName, text)),
          title: typed(text),
          description: typed(text),
        },
        { requiredKeys: [] },
      ),
    ),
  },
);
const prompt = fc.oneof(
  fc.tuple(name, toolName).map(([u, t]) => `${u}/${t}`),
  withUnknown(fc.record({ prompt: typed(text), as: typed(toolName) }, { requiredKeys: [] })),
);

const toolset = withUnknown(
  fc.record(
    {
      title: typed(text),
      description: typed(text),
      instructions: typed(text),
      default: typed(fc.boolean()),
      always: typed(fc.boolean()),
      tools: typed(fc.array(member, { maxLength: 4 })),
      prompts: typed(fc.array(prompt, { maxLength: 2 })),
      resources: typed(
        fc.array(
          fc.oneof(
            fc.tuple(name, fc.constantFrom("file:///x", "mem://**", "a")).map((p) => p.join("/")),
            text,
          ),
          {
            maxLength: 2,
          },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);

const packsFile = withUnknown(
  fc.record(
    {
      name: typed(text),
      instructions: typed(text),
      auth: typed(
        fc.record({
          tokens: typed(fc.array(fc.oneof(text, fc.constantFrom("${TOKEN}", "short")), { maxLength: 2 })),
        }),
      ),
      upstreams: typed(fc.dictionary(name, typed(upstream), { maxKeys: 3 })),
      toolsets: typed(fc.dictionary(name, typed(toolset), { maxKeys: 3 })),
      public_env: typed(fc.array(fc.constantFrom(...VARS), { maxLength: 3 })),
      state_dir: typed(fc.oneof(fc.constantFrom("./state", "/var/lib/tp", ""), text)),
    },
    { requiredKeys: [] },
  ),
);

/** Mostly well-formed configs (so the frozen check runs often): declared upstreams, members that refer to them. */
const safeText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("${HOST}", "${TOKEN:-x}", "${UNSET:-fallback}", "$${HOST}", "${EMPTY}"),
);
const cleanFile = fc
  .uniqueArray(fc.constantFrom("u", "v", "gh", "docs", "a.b", "x_1"), { minLength: 1, maxLength: 3 })
  .chain((ups) =>
    fc.record(
      {
        name: safeText,
        instructions: safeText,
        public_env: fc.constant(["HOST", "TOKEN", "UNSET", "EMPTY"]),
        state_dir: fc.constantFrom("./state", "/var/lib/toolpacks", "${HOST:-x}"),
        auth: fc.record({
          tokens: fc.array(fc.constantFrom("${TOKEN}", "long-enough-token"), { minLength: 1, maxLength: 2 }),
        }),
        upstreams: fc
          .tuple(
            ...ups.map((u) =>
              fc
                .oneof(
                  fc.record(
                    {
                      command: fc.constantFrom("node", "srv", "${TOKEN}"),
                      args: fc.array(safeText, { maxLength: 2 }),
                      env: fc.dictionary(fc.constantFrom("A", "B_C"), safeText, { maxKeys: 2 }),
                      header_env: fc.dictionary(
                        fc.constantFrom("x-api-key", "authorization"),
                        fc.constantFrom("API_KEY", "TOK"),
                      ),
                      isolation: fc.constantFrom("shared", "per-session"),
                      max_instances: fc.integer({ min: 1, max: 8 }),
                      call_timeout: fc.integer({ min: 1, max: 600 }),
                      inherit_env: fc.array(fc.constantFrom("NODE_OPTIONS", "LANG"), { maxLength: 2 }),
                      max_line_bytes: fc.integer({ min: 1024, max: 1 << 26 }),
                      roots: fc.array(fc.constantFrom(".", "/srv", "file:///x"), { maxLength: 2 }),
                      protocol: fc.constantFrom("auto", "2025", 2025, "2026-07-28"),
                      attribution: fc.constantFrom("tied", "in-flight"),
                      input_timeout: fc.integer({ min: 1, max: 600 }),
                    },
                    { requiredKeys: ["command"] },
                  ),
                  fc.record(
                    {
                      url: fc.constantFrom(
                        "http://127.0.0.1:9/mcp",
                        "https://example.test/mcp?key=${TOKEN}",
                        "http://${HOST}/",
                      ),
                      headers: fc.dictionary(fc.constantFrom("Authorization", "X-Key"), safeText, {
                        maxKeys: 2,
                      }),
                      forward_headers: fc.array(fc.constantFrom("authorization", "x-key"), { maxLength: 2 }),
                      validate_arguments: fc.boolean(),
                    },
                    { requiredKeys: ["url"] },
                  ),
                )
                .map((spec) => [u, { ...spec, prefix: `${u}_` }] as const),
            ),
          )
          .map((entries) => Object.fromEntries(entries)),
        toolsets: fc.dictionary(
          fc.constantFrom("core", "extra", "docs_set", "t-1"),
          fc.record(
            {
              title: safeText,
              description: safeText,
              default: fc.boolean(),
              always: fc.boolean(),
              tools: fc.array(
                fc.oneof(
                  fc
                    .tuple(fc.constantFrom(...ups), fc.constantFrom("echo", "add", "*", "list_*"))
                    .map(([u, t]) => `${u}/${t}`),
                  fc
                    .tuple(
                      fc.constantFrom(...ups),
                      fc.constantFrom("echo", "add"),
                      fc.constantFrom("renamed", "other"),
                    )
                    .map(([u, t, as]) => ({ tool: `${u}/${t}`, as: `${u}_${as}` })),
                ),
                { maxLength: 3 },
              ),
              prompts: fc.array(
                fc.constantFrom(...ups).map((u) => `${u}/greet`),
                { maxLength: 1 },
              ),
              resources: fc.array(
                fc.constantFrom(...ups).map((u) => `${u}/file:///**`),
                { maxLength: 1 },
              ),
            },
            { requiredKeys: [] },
          ),
          { maxKeys: 3 },
        ),
      },
      { requiredKeys: ["upstreams"] },
    ),
  );
const anyFile = fc.oneof(cleanFile, packsFile);

/** Fragments that exercise the YAML parser itself: flow and block collections, anchors, tags, quoting. */
const yamlSoup = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "upstreams:",
        "toolsets:",
        "auth:",
        "tokens:",
        "  u:",
        "    command: node",
        "    url: http://x",
        "  a:",
        "    tools:",
        "      - u/echo",
        "- ",
        "? ",
        ": ",
        "{",
        "}",
        "[",
        "]",
        ",",
        "&a ",
        "*a",
        "!!str ",
        "!!int ",
        "!!map ",
        "!!seq ",
        "!custom ",
        "'",
        '"',
        "#",
        "|",
        ">-",
        "---",
        "...",
        "%YAML 1.2",
        "\t",
        "\r\n",
        "\n",
        "  ",
        "${HOST}",
        "\uFEFF",
        "\u0000",
      ),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(""));

// ---------------------------------------------------------------------------------------------------------

/** More with CONFIG_PROPERTY_RUNS=20000 when hunting. */
const RUNS = Number(process.env.CONFIG_PROPERTY_RUNS ?? 400);

describe("the config loader on random input", () => {
  test("an arbitrary text never throws, and every error it yields has a position", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (t) => {
        fc.pre(!hitsAliasCrash(t));
        checkTexts([{ file: "packs.yaml", text: t }], ENV);
      }),
      { numRuns: RUNS },
    );
  });

  test("YAML syntax soup (anchors, tags, flow, directives) never throws nor loses its position", () => {
    fc.assert(
      fc.property(yamlSoup, (t) => {
        fc.pre(!hitsAliasCrash(t));
        checkTexts([{ file: "packs.yaml", text: t }], ENV);
      }),
      { numRuns: RUNS },
    );
  });

  test("a structured config with wrong types, unknown keys, odd names and ${VAR}s never throws, and compiles frozen", () => {
    let valid = 0;
    fc.assert(
      fc.property(
        anyFile,
        fc.dictionary(fc.constantFrom(...VARS), fc.string({ maxLength: 12 })),
        (obj, env) => {
          const t = stringify(obj);
          if (checkTexts([{ file: "packs.yaml", text: t }], { ...ENV, ...env })) valid++;
        },
      ),
      { numRuns: RUNS },
    );
    // The frozen check must have run on real catalogs, not only on refusals.
    if (process.env.CONFIG_PROPERTY_RUNS) console.log(`${valid} of ${RUNS} random configs compiled`);
    expect(valid).toBeGreaterThan(0);
  });

  test("several files: an error points into its own file, and the merged catalog is frozen", () => {
    fc.assert(
      fc.property(fc.array(anyFile, { minLength: 2, maxLength: 3 }), (objs) => {
        const texts = objs.map((o, i) => ({ file: `part${i}.yaml`, text: stringify(o) }));
        checkTexts(texts, ENV);
      }),
      { numRuns: RUNS / 2 },
    );
  });

  test("a valid config compiles to a catalog that cannot be changed afterwards", () => {
    const valid = [
      "upstreams: { u: { command: node, env: { K: '${TOKEN}' } } }\ntoolsets:\n  a: { tools: [u/echo, { tool: u/add, as: plus }] }\n",
      "name: x\nauth: { tokens: ['${TOKEN}'] }\nupstreams: { gh: { url: 'http://${HOST}/mcp', headers: { A: b } } }\n",
      "upstreams:\n  u: { command: node }\n  v: { command: node, prefix: v_ }\ntoolsets:\n  a: { tools: ['u/*'], prompts: [u/p], resources: ['u/file:///**'] }\n",
      "",
      "# only a comment\n",
    ];
    for (const t of valid) expect(checkTexts([{ file: "packs.yaml", text: t }], ENV), t).toBe(true);
  });
});

/** A value that came from the environment, chosen so it breaks whatever rule it lands in. */
const SECRET = "s3cr3t value!";

describe("loader bugs found by the properties", () => {
  test("an alias to an anchor that is not defined gives a located error, not a ReferenceError", () => {
    checkTexts([{ file: "packs.yaml", text: "upstreams: *nowhere\n" }], ENV);
  });

  test("an alias bomb gives a located error, not a ReferenceError", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
    ].join("\n");
    checkTexts([{ file: "packs.yaml", text: bomb }], ENV);
  });

  test("a !!set where a mapping belongs is refused", () => {
    const t = "upstreams:\n  u: { command: node, env: !!set { A, B } }\n";
    expect(compileTexts([{ file: "packs.yaml", text: t }], ENV).ok).toBe(false);
  });

  test("a !!binary where a mapping belongs gives one clear error, not one per Buffer method", () => {
    const r = compileTexts([{ file: "packs.yaml", text: "upstreams: !!binary aGk=\n" }], ENV);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors.map(formatConfigError)).toEqual([
        expect.stringMatching(
          /upstreams is a Buffer value; only strings, numbers, booleans, lists and mappings are allowed/,
        ),
      ]);
  });

  test("a call_timeout beyond what setTimeout takes (~24.8 days) never compiles to a timeout that fires at once", () => {
    const r = compileTexts(
      [{ file: "packs.yaml", text: "upstreams: { u: { command: node, call_timeout: 3000000 } }\n" }],
      ENV,
    );
    if (r.ok) expect(r.catalog.upstreams.get("u")!.callTimeoutMs).toBeLessThanOrEqual(2 ** 31 - 1);
  });

  test.each([
    ["prefix", "upstreams: { u: { command: node, prefix: '${S}' } }\n"],
    ["a tool reference", "upstreams: { u: { command: node } }\ntoolsets: { a: { tools: ['${S}'] } }\n"],
    ["a tool name", "upstreams: { u: { command: node } }\ntoolsets: { a: { tools: ['u/${S}'] } }\n"],
    [
      "an undeclared upstream",
      "upstreams: { u: { command: node } }\ntoolsets: { a: { tools: ['x${S}/t'] } }\n",
    ],
    [
      "an exposed name",
      "upstreams: { u: { command: node } }\ntoolsets: { a: { tools: [{ tool: u/t, as: '${S}' }] } }\n",
    ],
    ["a prompt reference", "upstreams: { u: { command: node } }\ntoolsets: { a: { prompts: ['${S}'] } }\n"],
    [
      "a resource reference",
      "upstreams: { u: { command: node } }\ntoolsets: { a: { resources: ['${S}'] } }\n",
    ],
    [
      "a duplicate exposed name",
      "upstreams: { u: { command: node } }\ntoolsets: { a: { tools: [{ tool: u/p, as: 'x${N}' }, { tool: u/q, as: 'x${N}' }] } }\n",
    ],
  ])("a config error about %s never prints the value of the environment variable", (_what, t) => {
    const r = compileTexts([{ file: "packs.yaml", text: t }], { S: SECRET, N: "4711secret" });
    expect(r.ok).toBe(false);
    const printed = r.ok ? "" : r.errors.map(formatConfigError).join("\n");
    expect(printed).not.toContain(SECRET);
    expect(printed).not.toContain("4711secret");
  });
});

describe("the environment stays out of config errors", () => {
  test("a config error never prints a resolved ${VAR} value of a url, header, env, arg or token", () => {
    const secret = fc.constantFrom("Zq9-secret-one", "Zq9 secret two!", "Zq9:/?#[]@", "Zq9");
    const field = fc.constantFrom(
      "url: '${V}'",
      "url: 'http://x/${V}'\n    args: [a]",
      "command: node\n    headers: { A: '${V}' }",
      "command: '${V}'\n    url: 'http://x'",
      "command: node\n    env: { K: '${V}' }\n    bogus: '${V}'",
      "command: node\n    args: ['${V}', 3]",
    );
    fc.assert(
      fc.property(secret, field, fc.boolean(), (value, f, auth) => {
        const t = `${auth ? "auth: { tokens: ['${V}'] }\n" : ""}upstreams:\n  u:\n    ${f}\n`;
        const r = compileTexts([{ file: "packs.yaml", text: t }], { V: value });
        if (r.ok) return;
        expectLocated(r.errors, [{ file: "packs.yaml", text: t }]);
        for (const e of r.errors) expect(formatConfigError(e)).not.toContain(value);
      }),
      { numRuns: 200 },
    );
  });
});
