/** The upstream and top-level keys added for the serving core: how each compiles, and what is refused. */
import { homedir } from "node:os";
import { describe, expect, test } from "vitest";
import { compileTexts } from "../../src/catalog/load.js";
import { stdioEnv } from "../../src/catalog/stdio-env.js";
import type { Catalog } from "../../src/catalog/types.js";
import { formatConfigError } from "../../src/config/errors.js";
import { fillInstance, usesInstanceVars } from "../../src/config/instance-vars.js";

const FILE = "/cfg/packs.yaml";

function compiled(
  yaml: string | { file: string; text: string }[],
  env: Record<string, string> = {},
): Catalog {
  const texts = typeof yaml === "string" ? [{ file: FILE, text: yaml }] : yaml;
  const r = compileTexts(texts, env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.catalog;
}

function errors(yaml: string, env: Record<string, string> = {}): string[] {
  const r = compileTexts([{ file: FILE, text: yaml }], env);
  return r.ok ? [] : r.errors.map(formatConfigError);
}

describe("defaults of the new upstream keys", () => {
  test("an upstream that sets none of them gets no roots, tied attribution, auto protocol and the documented limits", () => {
    const u = compiled("upstreams: { u: { command: x } }\n").upstreams.get("u")!;
    expect(u.roots).toEqual([]);
    expect(u.attribution).toBe("tied");
    expect(u.protocol).toBe("auto");
    expect(u.inheritEnv).toEqual([]);
    expect(u.maxLineBytes).toBe(67108864);
    expect(u.inputTimeoutMs).toBe(300_000);
  });
});

describe("roots", () => {
  test("a relative root is taken from the config file's folder and named by its last segment", () => {
    const u = compiled(
      "upstreams:\n  u:\n    command: x\n    roots: [., repos/app, 'file:///srv/my%20code', /]\n",
    ).upstreams.get("u")!;
    expect(u.roots).toEqual([
      { uri: "file:///cfg", name: "cfg" },
      { uri: "file:///cfg/repos/app", name: "app" },
      { uri: "file:///srv/my%20code", name: "my code" },
      { uri: "file:///" },
    ]);
  });

  test("a root that is not a filesystem path or a local file:// URI is refused at its item", () => {
    expect(
      errors("upstreams:\n  u:\n    url: 'https://x/mcp'\n    roots: [ok, 'https://x/a', 'file://host/a']\n"),
    ).toEqual([
      expect.stringMatching(
        /^\/cfg\/packs\.yaml:4:17: root "https:\/\/x\/a" is not a filesystem path or a local file:\/\/ URI/,
      ),
      expect.stringMatching(/^\/cfg\/packs\.yaml:4:32: root "file:\/\/host\/a" is not/),
    ]);
  });
});

describe("attribution and protocol", () => {
  test("in-flight attribution and each protocol spelling compile to their values (an unquoted 2025 too)", () => {
    const c = compiled(
      "upstreams:\n  a: { command: x, attribution: in-flight, protocol: 2025 }\n  b: { command: x, protocol: '2025' }\n  c: { command: x, protocol: 2026-07-28 }\n  d: { command: x, protocol: auto }\n",
    );
    expect(c.upstreams.get("a")!.attribution).toBe("in-flight");
    expect(["a", "b", "c", "d"].map((n) => c.upstreams.get(n)!.protocol)).toEqual([
      "2025",
      "2025",
      "2026-07-28",
      "auto",
    ]);
  });

  test("an unknown protocol or attribution is refused with the values allowed", () => {
    expect(errors("upstreams:\n  u: { command: x, protocol: 2026, attribution: loose }\n")).toEqual([
      expect.stringMatching(/upstreams\.u\.protocol must be one of auto, 2025, 2026-07-28, not number 2026$/),
      expect.stringMatching(/upstreams\.u\.attribution must be one of tied, in-flight, not string "loose"$/),
    ]);
  });
});

describe("timeouts and line limit", () => {
  test("input_timeout is compiled to milliseconds and max_line_bytes kept", () => {
    const u = compiled(
      "upstreams: { u: { command: x, input_timeout: 1.5, max_line_bytes: 2048 } }\n",
    ).upstreams.get("u")!;
    expect(u.inputTimeoutMs).toBe(1500);
    expect(u.maxLineBytes).toBe(2048);
  });

  test.each([
    ["input_timeout: 0", /input_timeout must be > 0/],
    ["input_timeout: 3000000", /input_timeout must be <= 2000000/],
    ["max_line_bytes: 100", /max_line_bytes must be >= 1024/],
    ["max_line_bytes: 2048.5", /max_line_bytes must be a whole number/],
  ])("%s is refused", (setting, pattern) => {
    expect(errors(`upstreams: { u: { command: x, ${setting} } }\n`)).toEqual([
      expect.stringMatching(pattern),
    ]);
  });

  test("stdio-only keys on a url upstream are refused like args", () => {
    expect(
      errors("upstreams:\n  u: { url: 'https://x/mcp', inherit_env: [A], max_line_bytes: 2048 }\n"),
    ).toEqual([
      expect.stringMatching(/:2:30: inherit_env applies to stdio upstreams \(command\), not url$/),
      expect.stringMatching(/:2:48: max_line_bytes applies to stdio upstreams \(command\), not url$/),
    ]);
  });
});

describe("inherit_env", () => {
  test("a stdio upstream inherits only the minimal set, its inherit_env and its env, never TOOLPACKS_*", () => {
    const u = compiled(
      "upstreams: { u: { command: x, inherit_env: [NODE_OPTIONS, UNSET], env: { A: b, PATH: /p } } }\n",
    ).upstreams.get("u")!;
    expect(u.inheritEnv).toEqual(["NODE_OPTIONS", "UNSET"]);
    const proxy = {
      HOME: "/h",
      PATH: "/bin",
      USER: "me",
      LANG: "C.UTF-8",
      NODE_OPTIONS: "--x",
      GITHUB_TOKEN: "ghp_secret",
      TOOLPACKS_SESSION_SECRET: "s",
    };
    expect(stdioEnv(u, proxy)).toEqual({
      HOME: "/h",
      PATH: "/p",
      USER: "me",
      LANG: "C.UTF-8",
      NODE_OPTIONS: "--x",
      A: "b",
    });
    expect(stdioEnv({ inheritEnv: ["TOOLPACKS_TOKEN"], env: {} }, { TOOLPACKS_TOKEN: "t" })).toEqual({});
  });

  test("a TOOLPACKS_* name in inherit_env is refused at its item", () => {
    expect(errors("upstreams:\n  u: { command: x, inherit_env: [OK, TOOLPACKS_TOKEN] }\n")).toEqual([
      expect.stringMatching(
        /^\/cfg\/packs\.yaml:2:38: inherit_env lists TOOLPACKS_TOKEN: toolpacks' own TOOLPACKS_\* settings/,
      ),
    ]);
  });

  test("a variable another upstream takes with ${VAR} cannot be inherited, unless this upstream takes it too", () => {
    const yaml = [
      "upstreams:",
      "  gh: { url: 'https://x/mcp', headers: { Authorization: 'Bearer ${GH_TOKEN}' } }",
      "  a: { command: x, inherit_env: [GH_TOKEN] }",
      "  b: { command: x, inherit_env: [GH_TOKEN], env: { T: '${GH_TOKEN}' } }",
    ].join("\n");
    expect(errors(yaml, { GH_TOKEN: "ghp_1234567" })).toEqual([
      expect.stringMatching(
        /^\/cfg\/packs\.yaml:3:34: inherit_env lists GH_TOKEN, which upstream "gh" takes from the environment \(at \/cfg\/packs\.yaml:2:3\)/,
      ),
    ]);
  });

  test("the proxy's own bearer token variable cannot be inherited", () => {
    expect(
      errors(
        "auth: { tokens: ['${API_TOKEN}'] }\nupstreams:\n  u: { command: x, inherit_env: [API_TOKEN] }\n",
        { API_TOKEN: "long-enough-token" },
      ),
    ).toEqual([expect.stringMatching(/:3:34: inherit_env lists API_TOKEN, the proxy's own bearer token/)]);
  });
});

describe("state_dir", () => {
  test("a relative state_dir is taken from the folder of the first file that sets it", () => {
    const c = compiled([
      { file: "/a/base.yaml", text: "name: x\n" },
      { file: "/b/team.yaml", text: "state_dir: ./state\n" },
      { file: "/c/late.yaml", text: "state_dir: /elsewhere\n" },
    ]);
    expect(c.stateDir).toBe("/b/state");
  });

  test("without state_dir it is under XDG_DATA_HOME when that is absolute, else under HOME's .local/share", () => {
    expect(compiled("{}\n", { XDG_DATA_HOME: "/xdg", HOME: "/h" }).stateDir).toBe("/xdg/toolpacks");
    expect(compiled("{}\n", { XDG_DATA_HOME: "rel/xdg", HOME: "/h" }).stateDir).toBe(
      "/h/.local/share/toolpacks",
    );
    expect(compiled("{}\n", {}).stateDir).toBe(`${homedir()}/.local/share/toolpacks`);
  });
});

describe("public_env", () => {
  test.each([
    ["instructions", "instructions: 'Team ${TEAM}'\n", "instructions"],
    ["a toolset title", "toolsets: { t: { title: '${TEAM}', tools: [u/a] } }\n", "toolsets.t.title"],
    [
      "a toolset description",
      "toolsets: { t: { description: 'for ${TEAM}', tools: [u/a] } }\n",
      "toolsets.t.description",
    ],
    [
      "a toolset's instructions",
      "toolsets: { t: { instructions: '${TEAM}', tools: [u/a] } }\n",
      "toolsets.t.instructions",
    ],
    [
      "a member's description",
      "toolsets: { t: { tools: [{ tool: u/a, description: '${TEAM}' }] } }\n",
      "toolsets.t.tools.0.description",
    ],
    [
      "a prompt member's title",
      "toolsets: { t: { prompts: [{ prompt: u/p, title: '${TEAM}' }] } }\n",
      "toolsets.t.prompts.0.title",
    ],
  ])(
    "a variable not in public_env is refused in %s, naming the field and the variable",
    (_what, yaml, field) => {
      const text = `upstreams: { u: { command: x } }\n${yaml}`;
      // Set or not, the same one error: the value is never read.
      for (const env of [{ TEAM: "blue" }, {}] as Record<string, string>[]) {
        expect(errors(text, env)).toEqual([
          expect.stringMatching(
            new RegExp(
              `: ${field.replace(/\./g, "\\.")} uses \\$\\{TEAM\\}, .* TEAM is not in public_env \\(list it in public_env if it is not a secret\\)$`,
            ),
          ),
        ]);
      }
    },
  );

  test("a public_env variable in any file may be used in text, and its value is not treated as a secret", () => {
    const c = compiled(
      [
        {
          file: "/a.yaml",
          text: "instructions: 'Team ${TEAM}'\nupstreams: { u: { command: x, env: { K: '${KEY}' } } }\ntoolsets: { t: { description: '${TEAM} tools', tools: [u/a] } }\n",
        },
        { file: "/b.yaml", text: "public_env: [TEAM]\n" },
      ],
      { TEAM: "bluebirds", KEY: "sekrit-key" },
    );
    expect(c.instructions).toBe("Team bluebirds");
    expect(c.toolset.get("t")!.description).toBe("bluebirds tools");
    expect([...c.secrets.values()]).toEqual(["${KEY}"]);
  });

  test("an escaped $${VAR} in text is literal, and ${VAR} outside text fields needs no public_env", () => {
    const c = compiled(
      "upstreams: { u: { url: 'https://x/mcp', headers: { A: '${KEY}' } } }\ntoolsets: { t: { description: 'costs $${PRICE}', tools: [u/a] } }\n",
      { KEY: "sekrit-key" },
    );
    expect(c.toolset.get("t")!.description).toBe("costs ${PRICE}");
  });
});

describe("instance variables", () => {
  const perSession = "upstreams:\n  u:\n    command: x\n    isolation: per-session\n";
  const perCredential = "upstreams:\n  u:\n    command: x\n    header_env: { x-key: KEY }\n";

  test.each([
    ["per-session", perSession],
    ["per-credential", perCredential],
  ])(
    "${instance.dir} and ${instance.id} survive compilation in env, args and cwd of a %s stdio upstream",
    (_kind, head) => {
      const u = compiled(
        `${head}    args: ['--data', '\${instance.dir}/db', 'id-\${instance.id}']\n    env: { HOME: '\${instance.dir}' }\n    cwd: '\${instance.dir}/work'\n`,
      ).upstreams.get("u")!;
      expect(u.args).toEqual(["--data", "${instance.dir}/db", "id-${instance.id}"]);
      expect(u.env).toEqual({ HOME: "${instance.dir}" });
      expect(u.cwd).toBe("${instance.dir}/work");
      expect(usesInstanceVars(u)).toBe(true);
      const values = { dir: "/state/i/3f2a", id: "3f2a" };
      expect(u.args.map((a) => fillInstance(a, values))).toEqual(["--data", "/state/i/3f2a/db", "id-3f2a"]);
      expect(fillInstance(u.cwd, values)).toBe("/state/i/3f2a/work");
    },
  );

  test("a relative cwd with ${instance.id} is taken from the config file's folder, the variable kept", () => {
    const u = compiled(`${perSession}    cwd: 'runs/\${instance.id}'\n`).upstreams.get("u")!;
    expect(u.cwd).toBe("/cfg/runs/${instance.id}");
  });

  test("an upstream without instance variables does not use them", () => {
    expect(
      usesInstanceVars(
        compiled("upstreams: { u: { command: x, args: [a], env: { A: b } } }\n").upstreams.get("u")!,
      ),
    ).toBe(false);
  });

  test("instance variables have no escape: $${instance.dir} in a per-instance field is filled too", () => {
    const u = compiled(`${perSession}    args: ['$\${instance.dir}']\n`).upstreams.get("u")!;
    expect(usesInstanceVars(u)).toBe(true);
    expect(fillInstance(u.args[0]!, { dir: "/d", id: "i" })).toBe("/d");
  });

  test.each([
    [
      "a shared stdio upstream",
      "upstreams: { u: { command: x, args: ['${instance.dir}'] } }\n",
      /upstreams\.u\.args\.0: upstream "u" runs one shared instance/,
    ],
    [
      "a url upstream's header",
      "upstreams: { u: { url: 'https://x', isolation: per-session, headers: { A: '${instance.id}' } } }\n",
      /\$\{instance\.id\} cannot be used in upstreams\.u\.headers\.A/,
    ],
    [
      "a toolset title",
      "upstreams: { u: { command: x } }\ntoolsets: { t: { title: '${instance.id}', tools: [u/a] } }\n",
      /cannot be used in toolsets\.t\.title/,
    ],
    ["state_dir", "state_dir: '${instance.dir}'\n", /cannot be used in state_dir/],
  ])("${instance.…} in %s is refused, saying where it is allowed", (_where, yaml, pattern) => {
    const found = errors(yaml);
    expect(found).toEqual([expect.stringMatching(pattern)]);
    expect(found[0]).toMatch(
      /\(instance variables are allowed only in env values, args and cwd of a stdio upstream with isolation: per-session or header_env\)$/,
    );
  });

  test("an unknown ${instance.x} is refused naming the ones that exist", () => {
    expect(errors(`${perSession}    args: ['\${instance.home}']\n`)).toEqual([
      expect.stringMatching(
        /:5:12: unknown instance variable \$\{instance\.home\} in upstreams\.u\.args\.0 \(use \$\{instance\.dir\} or \$\{instance\.id\}\)$/,
      ),
    ]);
  });
});
