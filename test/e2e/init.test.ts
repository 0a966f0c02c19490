/** `toolpacks init --from`: the real CLI on client configuration files, and --live against real servers. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { CLI, FIXTURE, ROOT, type Run, runCli, stdioClient, tempDir, toolNames } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const tmp = tempDir();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  tmp.cleanup();
});

const toolpacks = runCli;

/** The first line of a written file points at a schema file that exists, relative to the file's folder. */
function expectSchemaResolves(file: string): void {
  const first = readFileSync(file, "utf8").split("\n")[0]!;
  const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
  expect(m, first).not.toBeNull();
  const target = resolve(dirname(file), m![1]!);
  expect(existsSync(target)).toBe(true);
  expect(target).toBe(join(ROOT, "schema/packs.schema.json"));
}
const GITHUB_SECRET = "ghp_e2eSecretValue0123456789abcdefghij";
const BRAVE_SECRET = "BSAe2e-brave-secret-value";

const claudeDesktop = JSON.stringify(
  {
    mcpServers: {
      github: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: GITHUB_SECRET },
      },
      "Brave Search": {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-brave-search"],
        env: { BRAVE_API_KEY: BRAVE_SECRET },
      },
      memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
    },
  },
  null,
  2,
);

describe("init from a Claude Desktop file", () => {
  test("init never copies the client's secrets into packs.yaml nor prints them", async () => {
    const from = tmp.file("claude_desktop_config.json", claudeDesktop);
    const out = join(tmp.dir, "desktop.yaml");
    const r = await toolpacks(["init", "--from", from, "-o", out]);
    expect(r.code).toBe(0);
    const written = readFileSync(out, "utf8");
    for (const secret of [GITHUB_SECRET, BRAVE_SECRET]) {
      expect(written).not.toContain(secret);
      expect(r.stdout).not.toContain(secret);
      expect(r.stderr).not.toContain(secret);
    }
    expectSchemaResolves(out);
    expect(written).toContain("GITHUB_PERSONAL_ACCESS_TOKEN: ${GITHUB_PERSONAL_ACCESS_TOKEN}");
    expect(written).toContain("BRAVE_API_KEY: ${BRAVE_API_KEY}");
    // The user is told which variables to set, and where each is used.
    expect(r.stderr).toMatch(/set these environment variables/);
    expect(r.stderr).toMatch(/GITHUB_PERSONAL_ACCESS_TOKEN\s+github env GITHUB_PERSONAL_ACCESS_TOKEN/);
    expect(r.stderr).toMatch(/BRAVE_API_KEY\s+Brave-Search env BRAVE_API_KEY/);
    expect(r.stdout).toMatch(/^wrote .*desktop\.yaml: 3 upstream\(s\) \(github, Brave-Search, memory\)/);

    // The file compiles; the references need the variables, as promised.
    const env = { GITHUB_PERSONAL_ACCESS_TOKEN: "x", BRAVE_API_KEY: "y" };
    const check = await toolpacks(["check", out], { env });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/3 upstream\(s\), 3 toolset\(s\)/);
    expect(check.stdout).toMatch(/Brave-Search\s+default, implicit/);
    const unset = await toolpacks(["check", out], {
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: undefined, BRAVE_API_KEY: "y" },
    });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/environment variable GITHUB_PERSONAL_ACCESS_TOKEN is not set/);
  });

  test("init never overwrites an existing packs.yaml without --force", async () => {
    const dir = join(tmp.dir, "overwrite");
    execFileSync("mkdir", ["-p", dir]);
    const from = tmp.file("overwrite.json", claudeDesktop);
    // Default output: ./packs.yaml in the working directory.
    const first = await toolpacks(["init", "--from", from], { cwd: dir });
    expect(first.code).toBe(0);
    const packs = join(dir, "packs.yaml");
    expectSchemaResolves(packs);

    writeFileSync(packs, "# my hand-made config\n");
    const again = await toolpacks(["init", "--from", from], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/packs\.yaml exists; pass --force to overwrite it/);
    expect(again.stdout).toBe("");
    expect(readFileSync(packs, "utf8")).toBe("# my hand-made config\n");

    const forced = await toolpacks(["init", "--from", from, "--force"], { cwd: dir });
    expect(forced.code).toBe(0);
    expectSchemaResolves(packs);
  });

  test("a project's installed toolpacks is where the schema line points", async () => {
    const dir = join(tmp.dir, "project");
    execFileSync("mkdir", ["-p", join(dir, "node_modules/toolpacks/schema"), join(dir, "config")]);
    writeFileSync(join(dir, "node_modules/toolpacks/schema/packs.schema.json"), "{}");
    const from = tmp.file("project.json", claudeDesktop);
    const r = await toolpacks(["init", "--from", from, "-o", join(dir, "config/packs.yaml")]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "config/packs.yaml"), "utf8").split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/toolpacks/schema/packs.schema.json",
    );
  });

  test("no secret of any shape reaches the file, stdout or stderr", async () => {
    const secrets = {
      pg: "pgPassw0rd-e2e",
      path: "sk-e2eabcdefghijklmnopqrstuvwx0123",
      query: "qk-e2e-secret-987",
      bearer: "tok-e2e-bearer-123",
      jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlMmUifQ.ZTJlLXNpZ25hdHVyZQ",
      entropy: "Qw7Er9Ty2Ui4Op6As8Df1Gh3",
      aws: "AKIAE2EEXAMPLEKEY123",
    };
    const from = tmp.file(
      "shapes.json",
      JSON.stringify({
        mcpServers: {
          pg: { command: "npx", args: ["server-postgres", `postgresql://app:${secrets.pg}@db:5432/app`] },
          zapier: { url: `https://mcp.example.com/${secrets.path}/mcp?api_key=${secrets.query}` },
          remote: {
            command: "npx",
            args: [
              "mcp-remote",
              "https://h.example.com/mcp",
              "--header",
              `Authorization: Bearer ${secrets.bearer}`,
            ],
            env: { SESSION_JWT: secrets.jwt, NOTE: `id ${secrets.entropy}`, AWS_ACCESS_KEY_ID: secrets.aws },
          },
        },
      }),
    );
    const out = join(tmp.dir, "shapes.yaml");
    const r = await toolpacks(["init", "--from", from, "-o", out]);
    expect(r.stderr).toMatch(/set these environment variables/);
    expect(r.code).toBe(0);
    const written = readFileSync(out, "utf8");
    for (const secret of Object.values(secrets)) {
      expect(written).not.toContain(secret);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    expect(written).toContain("url: https://mcp.example.com/${ZAPIER_URL_KEY}/mcp?api_key=${ZAPIER_API_KEY}");
    // Without --live the user learns where tool-name collisions are found.
    expect(r.stderr).toMatch(/only known with --live: `toolpacks check --live .*shapes\.yaml` reports them/);
    const env = {
      PG_PASSWORD: "a",
      ZAPIER_URL_KEY: "b",
      ZAPIER_API_KEY: "c",
      REMOTE_TOKEN: "d",
      SESSION_JWT: "e",
      NOTE: "f",
      AWS_ACCESS_KEY_ID: "g",
    };
    const check = await toolpacks(["check", out], { env });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
  });

  test.each([
    ["a missing file", null, /init: .*nope\.json: no such file|cannot read .*nope\.json: no such file/],
    ["a file that is not JSON", "mcpServers:\n  a: {}\n", /init: .*: not JSON: /],
    [
      "a file without servers",
      '{ "editor.fontSize": 14 }',
      /init: .*: no servers: expected an "mcpServers" map/,
    ],
    ["an empty server map", '{ "mcpServers": {} }', /no servers: "mcpServers" is empty/],
  ])("init writes no file, and exits 1 saying why, for %s", async (label, text, message) => {
    const name = `bad-${label.replace(/\W+/g, "-")}`;
    const from = text === null ? join(tmp.dir, "nope.json") : tmp.file(`${name}.json`, text);
    const out = join(tmp.dir, `${name}.yaml`);
    const r = await toolpacks(["init", "--from", from, "-o", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });

  test("VS Code settings with comments and trailing commas are read", async () => {
    const from = tmp.file(
      "settings.json",
      `{
  // VS Code user settings
  "editor.fontSize": 14,
  "mcp": {
    "servers": {
      "docs": { "type": "http", "url": "https://docs.example.com/mcp", }, // remote
      "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], },
    },
  },
}`,
    );
    const out = join(tmp.dir, "vscode.yaml");
    const r = await toolpacks(["init", "--from", from, "-o", out]);
    expect(r.stderr).toMatch(/^init: tool names two servers share are only known with --live: [^\n]*\n$/);
    expect(r.code).toBe(0);
    expect((await toolpacks(["check", out])).stdout).toMatch(
      /docs\s+http\s+https:\/\/docs\.example\.com\/mcp[\s\S]*fetch\s+stdio\s+uvx mcp-server-fetch/,
    );
  });
});

describe("init --live against real servers", () => {
  /** An HTTP MCP server (Streamable HTTP) on a free port. */
  async function httpServer(): Promise<string> {
    const proc = spawn(process.execPath, [join(ROOT, "test/fixtures/http-echo-server.mjs"), "0"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.push(proc);
    return new Promise((resolve, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 15_000);
      proc.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
  }

  const STDIO_SECRET = "stdio-secret-value-123";
  const HTTP_SECRET = "http-secret-value-456";
  let liveConfig: string;

  test("the generated file compiles and lists the servers' tools", async () => {
    const url = await httpServer();
    liveConfig = tmp.file(
      "live.json",
      JSON.stringify({
        mcpServers: {
          memory: { command: "mcp-server-memory" },
          fixture: { command: "node", args: [FIXTURE] },
          "fixture copy": {
            command: "node",
            args: [FIXTURE, "--tools", "echo,add"],
            env: { FIXTURE_TOKEN: STDIO_SECRET },
          },
          who: { type: "http", url, headers: { Authorization: `Bearer ${HTTP_SECRET}` } },
          broken: { command: "toolpacks-no-such-command" },
        },
      }),
    );
    const out = join(tmp.dir, "live.yaml");
    const r = await toolpacks(["init", "--from", liveConfig, "-o", out, "--live"]);
    expect(r.code).toBe(0);
    const written = readFileSync(out, "utf8");
    for (const secret of [STDIO_SECRET, HTTP_SECRET]) {
      expect(written).not.toContain(secret);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    // One toolset per reachable server, each tool a member with the first line of its description.
    expect(written).toMatch(/\n {2}memory:\n {4}tools:\n {6}- memory\/create_entities\s+# Create/);
    expect(written).toMatch(/- memory\/read_graph\s+# Read the entire knowledge graph/);
    expect(written).toMatch(/\n {2}fixture:\n {4}tools:\n {6}- fixture\/echo\s+# Echoes its text argument/);
    expect(written).toMatch(/- \{ tool: fixture-copy\/echo, as: fixture-copy_echo \}/);
    expect(written).toMatch(/- who\/whoami\s+# The credential headers this server received\./);
    expect(written).toContain("Authorization: Bearer ${WHO_TOKEN}");
    expect(written).toMatch(/# broken: not reached while writing this file: .*ENOENT/);
    expect(r.stderr).toMatch(/broken was not reached/);
    expect(r.stderr).toMatch(
      /init: fixture-copy and fixture both offer 2 tools: fixture-copy's are renamed with "as:" \(echo as fixture-copy_echo, add as fixture-copy_add\)/,
    );
    expect(r.stderr).toMatch(/the tool names of broken were not compared/);
    // Not on a terminal: a line per server as it answers, and no status line rewritten in place.
    expect(r.stderr).toContain("connecting to 5 upstreams…\n");
    expect(r.stderr).toMatch(/^ {2}\[\d\/5\] fixture: \d+ tool\(s\)$/m);
    expect(r.stderr).toMatch(/^ {2}\[\d\/5\] broken: not reached: /m);
    expect(r.stderr).not.toMatch(/listing tools of|\r/);

    const env = { FIXTURE_TOKEN: "x", WHO_TOKEN: "y" };
    const check = await toolpacks(["check", out], { env });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/memory\s+default\s+memory\/create_entities, memory\/create_relations/);
    expect(check.stdout).toMatch(/fixture-copy\s+default\s+fixture-copy\/echo as fixture-copy_echo/);
    expect(check.stdout).toMatch(/broken\s+default, implicit/);

    // Served as written, a client gets every listed tool.
    const { client } = await stdioClient(["--toolsets", "only=memory,fixture,fixture-copy,who", out], env);
    try {
      const names = await toolNames(client);
      expect(names).toEqual(
        expect.arrayContaining([
          "create_entities",
          "echo",
          "with_meta",
          "fixture-copy_echo",
          "fixture-copy_add",
          "whoami",
        ]),
      );
    } finally {
      await client.close();
    }
  }, 120_000); // five servers started, listed and served again: slow on a loaded machine

  test("two servers with the same prompts: the second's are renamed with {prompt, as} and the file serves both", async () => {
    const from = tmp.file(
      "prompts.json",
      JSON.stringify({
        mcpServers: { one: { command: "mcp-server-everything" }, two: { command: "mcp-server-everything" } },
      }),
    );
    const out = join(tmp.dir, "prompts.yaml");
    const r = await toolpacks(["init", "--from", from, "-o", out, "--live"]);
    expect(r.stderr).toMatch(/two and one both offer \d+ prompts: two's are renamed/);
    expect(r.code).toBe(0);
    const written = readFileSync(out, "utf8");
    expect(written).toMatch(/- \{ prompt: two\/simple-prompt, as: two_simple-prompt \}/);
    expect(written).not.toMatch(/tool: two\/simple-prompt/);
    const check = await toolpacks(["check", out]);
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
  });

  const noScript = existsSync("/usr/bin/script")
    ? undefined
    : "/usr/bin/script (runs a command on a pseudo-terminal) is missing: apt-get install -y bsdutils, then run this file again";
  test.skipIf(noScript !== undefined)(unless(noScript, "progress is shown on a terminal"), async () => {
    const from = tmp.file(
      "tty.json",
      JSON.stringify({ mcpServers: { fixture: { command: "node", args: [FIXTURE] } } }),
    );
    const out = join(tmp.dir, "tty.yaml");
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, CLI, "init", "--from", from, "-o", out, "--live"].map(quote).join(" ");
    // `script` gives the CLI a pseudo-terminal; what it prints comes back on script's stdout.
    const r = await new Promise<Run>((resolve) => {
      const proc = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      proc.stdout.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      proc.once("close", (code) => resolve({ code, stdout, stderr: "" }));
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("connecting to 1 upstream…");
    expect(r.stdout).toContain("listing tools of fixture…");
    expect(readFileSync(out, "utf8")).toContain("- fixture/echo");
  });
});
