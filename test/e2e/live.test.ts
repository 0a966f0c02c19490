/** `toolsets --live` and `check --live`: the real CLI against real fixture upstreams. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { afterAll, describe, expect, test } from "vitest";
import { alive, CLI, FIXTURE, ROOT, type Run, runCli, serve, tempDir, until } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const cli = (args: string[]) => runCli(args);

/** `file:line:col` of the first occurrence of `needle` in a config file (1-based, as the CLI reports it). */
function position(file: string, needle: string): string {
  const lines = readFileSync(file, "utf8").split("\n");
  const line = lines.findIndex((l) => l.includes(needle));
  if (line < 0) throw new Error(`${needle} not in ${file}`);
  return `${file}:${line + 1}:${lines[line]!.indexOf(needle) + 1}`;
}

const pidFile = `${tmp.dir}/main.pid`;
const config = tmp.file(
  "packs.yaml",
  `
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--pid-file", "${pidFile}"]
  calc:
    command: node
    args: ["${FIXTURE}", "--name", "calc", "--tools", "add"]
toolsets:
  core:
    tools:
      - main/echo
      - main/fail
  meta:
    default: false
    tools:
      - tool: main/with_meta
        description: Described here, so the figure is the overridden definition's.
  math:
    default: false
    tools:
      - calc/add
`,
);

interface Entry {
  name: string;
  active: boolean;
  schema_bytes?: number;
  approx_tokens?: number;
}
interface LiveJson {
  toolsets: Entry[];
  active: string[];
  tools: string[];
  unknown: string[];
  unavailable: unknown[];
  schema_bytes: number;
  approx_tokens: number;
  everything: { tools: number; schema_bytes: number; approx_tokens: number };
}

describe("toolsets --live", () => {
  test("a disabled pack shows its cost, and the selection is compared with everything on", async () => {
    const r = await cli(["toolsets", "--live", config]);
    expect(r.code).toBe(0);
    const rows: Record<string, string[]> = Object.fromEntries(
      r.stdout
        .split("\n")
        .filter((l) => /^(core|meta|math) /.test(l))
        .map((l) => [l.split(/\s+/)[0], l.split(/\s{2,}/)]),
    );
    expect(rows.core?.slice(1, 3)).toEqual(["active", "2"]);
    expect(rows.meta?.slice(1, 3)).toEqual(["not selected", "1"]);
    expect(rows.math?.slice(1, 3)).toEqual(["not selected", "1"]);
    for (const row of Object.values(rows)) {
      const [bytes, tokens] = [Number(row[3]), Number(row[4])];
      expect(bytes).toBeGreaterThan(0);
      expect(tokens).toBe(Math.ceil(bytes / 4));
    }
    const total = (label: string) => {
      const m = new RegExp(`^${label}:\\s+(\\d+) tools, (\\d+) bytes, ≈(\\d+) tokens$`, "m").exec(r.stdout);
      expect(m, `${label} line in:\n${r.stdout}`).not.toBeNull();
      return { tools: Number(m![1]), bytes: Number(m![2]), tokens: Number(m![3]) };
    };
    const selection = total("selection");
    const everything = total("everything on");
    expect(selection.tools).toBe(3); // echo, fail, list_server_toolsets
    expect(everything.tools).toBe(5); // + with_meta, add
    expect(selection.bytes).toBeLessThan(everything.bytes);
    expect(selection.tokens).toBe(Math.ceil(selection.bytes / 4));
    const pct = ((100 * (everything.bytes - selection.bytes)) / everything.bytes).toFixed(1);
    expect(r.stdout).toContain(`saving: ${pct}%`);
    // Not a terminal: a plain line per upstream (no status line), and every upstream is closed.
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).toMatch(
      /^connecting to 2 upstreams…\n( {2}\[[12]\/2\] (main|calc): \d+ tool\(s\)\n){2}$/,
    );
    expect(alive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  test("--json keeps the figures of /toolsets and prints only the payload", async () => {
    const r = await cli(["toolsets", "--live", config, "--select", "math&typo", "--json"]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as LiveJson;
    expect(body.active).toEqual(["core", "math"]);
    expect(body.tools).toEqual(["echo", "fail", "add", "list_server_toolsets"]);
    expect(body.unknown).toEqual(["typo"]);
    expect(body.unavailable).toEqual([]);
    for (const t of body.toolsets) {
      expect(t.schema_bytes).toBeGreaterThan(0);
      expect(t.approx_tokens).toBe(Math.ceil(t.schema_bytes! / 4));
    }
    expect(body.toolsets.find((t) => t.name === "meta")).toMatchObject({ active: false });
    expect(body.approx_tokens).toBe(Math.ceil(body.schema_bytes / 4));
    expect(body.everything.tools).toBe(5);
    expect(body.everything.approx_tokens).toBe(Math.ceil(body.everything.schema_bytes / 4));
    expect(body.schema_bytes).toBeLessThan(body.everything.schema_bytes);
    // Everything on is the selection plus the one pack it leaves out.
    const meta = body.toolsets.find((t) => t.name === "meta")!.schema_bytes!;
    expect(body.everything.schema_bytes).toBe(body.schema_bytes + meta + 1); // + the comma between list items
  });

  test("the offline --json has no fields it cannot know without --live", async () => {
    const r = await cli(["toolsets", config, "--json"]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["toolsets", "active", "unknown"]);
    expect((body.toolsets as Entry[])[0]).not.toHaveProperty("schema_bytes");
  });

  test("the figure is what a session's tools/list really costs", async () => {
    const live = JSON.parse(
      (await cli(["toolsets", "--live", config, "--select", "meta", "--json"])).stdout,
    ) as LiveJson;
    const served = await serve([config]);
    try {
      const post = (body: unknown, session?: string) =>
        fetch(served.url("meta"), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(session ? { "mcp-session-id": session } : {}),
          },
          body: JSON.stringify(body),
        });
      const init = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "e2e", version: "1" },
        },
      });
      const session = init.headers.get("mcp-session-id")!;
      await init.text();
      await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).text();
      const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
      const text = await list.text();
      const result = (
        list.headers.get("content-type")?.includes("text/event-stream")
          ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!)
          : JSON.parse(text)
      ).result as { tools: { name: string }[] };
      expect(result.tools.map((t) => t.name)).toEqual(live.tools);
      expect(Buffer.byteLength(JSON.stringify(result))).toBe(live.schema_bytes);
    } finally {
      await served.stop();
    }
  });
});

describe("check --live", () => {
  test("a member naming a tool the upstream no longer lists fails the check", async () => {
    const file = tmp.file(
      "drift.yaml",
      `
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo,fail,throw"]
toolsets:
  core:
    tools:
      - main/echo
      - main/ech0
  globs:
    default: false
    tools:
      - main/zz_*
`,
    );
    const r = await cli(["check", "--live", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("live: 1 of 1 upstream(s) reached");
    const core = position(file, "core:");
    expect(r.stdout).toContain(`${position(file, "main/ech0")}: main/ech0 in toolset core (at ${core})`);
    expect(r.stdout).toContain(`${position(file, "main/zz_*")}: main/zz_* in toolset globs`);
    expect(r.stdout).not.toMatch(/main\/echo in toolset/);
    // fail and throw are on a covered upstream and no member names them.
    expect(r.stdout).toMatch(/^ {2}main: fail, throw$/m);
    expect(r.stdout).toMatch(
      /^FAIL: 2 missing member\(s\), 0 unreachable upstream\(s\), 2 unclaimed tool\(s\)$/m,
    );

    const allowed = await cli(["check", "--live", "--allow-missing", file]);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain(`${position(file, "main/ech0")}: main/ech0 in toolset core`);
    expect(allowed.stdout).toMatch(/^ok \(--allow-missing\): 2 missing member\(s\)/m);
  });

  test("an upstream that cannot be reached fails the check", async () => {
    const file = tmp.file(
      "down.yaml",
      `
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo"]
  broken:
    command: node
    args: ["-e", "process.exit(3)"]
toolsets:
  core:
    tools: [main/echo]
  gone:
    tools: [broken/anything]
`,
    );
    const r = await cli(["check", "--live", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("live: 1 of 2 upstream(s) reached");
    expect(r.stdout).toContain(`${position(file, "broken:")}: upstream broken cannot be reached: `);
    // Its members cannot be judged, so they are not reported missing.
    expect(r.stdout).not.toContain("broken/anything in toolset");
    expect(r.stdout).toMatch(/^FAIL: 0 missing member\(s\), 1 unreachable upstream\(s\)/m);
  });

  test("a failed start shows the stderr line that says why (npx gave up without -y), not where npm put its log", async () => {
    // A registry of one package on loopback: the real npx finds it there, has no terminal to ask on, and gives up.
    const registry = createServer((req, res) => {
      const port = (registry.address() as { port: number }).port;
      if (req.url !== "/npx-probe-pkg") {
        res.writeHead(404, { "content-type": "application/json" }).end("{}");
        return;
      }
      const version = {
        name: "npx-probe-pkg",
        version: "1.0.0",
        bin: { "npx-probe-pkg": "bin.js" },
        dist: { tarball: `http://127.0.0.1:${port}/npx-probe-pkg-1.0.0.tgz` },
      };
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          name: "npx-probe-pkg",
          "dist-tags": { latest: "1.0.0" },
          versions: { "1.0.0": version },
        }),
      );
    });
    await new Promise<void>((ok) => registry.listen(0, "127.0.0.1", ok));
    try {
      const port = (registry.address() as { port: number }).port;
      const file = tmp.file(
        "npx.yaml",
        `
upstreams:
  probe:
    command: npx
    args: [npx-probe-pkg]
    env: { npm_config_registry: "http://127.0.0.1:${port}/", npm_config_cache: "${tmp.dir}/npm-cache" }
`,
      );
      const r = await cli(["check", "--live", file]);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /upstream probe cannot be reached: .*\(stderr: npm error npx canceled due to missing packages and no YES option: \["npx-probe-pkg@1\.0\.0"\]\)/,
      );
      expect(r.stdout).not.toContain("A complete log of this run");
    } finally {
      registry.close();
    }
  });

  test("tools no toolset claims are listed even when nothing else is wrong", async () => {
    const r = await cli(["check", "--live", config]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: .*packs\.yaml: 2 upstream\(s\), 3 toolset\(s\)$/m);
    expect(r.stdout).toMatch(/^ {2}main: throw, slow, add$/m);
    expect(r.stdout).toMatch(
      /^ok: 0 missing member\(s\), 0 unreachable upstream\(s\), 3 unclaimed tool\(s\)$/m,
    );
    // Nothing on stderr but a line per upstream: no warning.
    expect(
      r.stderr.split("\n").filter((l) => l && !/^connecting to|^ {2}\[\d\/2\] \w+: \d+ tool\(s\)$/.test(l)),
    ).toEqual([]);
  });

  test("a config that does not compile is never taken live", async () => {
    const file = tmp.file(
      "bad.yaml",
      `
upstreams:
  main: { command: node, args: ["${FIXTURE}"] }
toolsets:
  core: { tools: [nowhere/echo] }
`,
    );
    const r = await cli(["check", "--live", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("nowhere");
    expect(r.stdout).not.toContain("live:");
  });
});

/**
 * An upstream that starts only once `gate` exists (then it is the fixture): it answers when the test says so,
 * so what the CLI printed before can be looked at while it is still waiting.
 */
function gated(gate: string): string {
  return tmp.file(
    `${gate.split("/").at(-1)}.mjs`,
    `import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
const wait = setInterval(() => {
  if (!existsSync(${JSON.stringify(gate)})) return;
  clearInterval(wait);
  const child = spawn(process.execPath, [${JSON.stringify(FIXTURE)}, "--name", "slow", "--tools", "add"], { stdio: "inherit" });
  child.on("exit", (code) => process.exit(code ?? 0));
}, 20);
`,
  );
}

describe("--live while upstreams answer", () => {
  test("check --live prints the static summary at once and a line per upstream as it answers, on stderr; stdout is the same in the end", async () => {
    const gate = `${tmp.dir}/open-check`;
    const file = tmp.file(
      "progress.yaml",
      `
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }
  slow: { command: node, args: ["${gated(gate)}"] }
toolsets:
  core: { tools: [main/echo] }
  math: { tools: [slow/add] }
`,
    );
    const proc = spawn(process.execPath, [CLI, "check", "--live", file], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    proc.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((done) => proc.once("exit", done));
    try {
      await until(
        () => /\[1\/2\] main: 1 tool\(s\)/.test(stderr),
        "a line for main while slow is still starting",
      );
      // slow has not answered (its gate is shut), and the static part is already out.
      expect(stderr).toMatch(/^connecting to 2 upstreams…\n {2}\[1\/2\] main: 1 tool\(s\)\n$/);
      expect(stdout).toMatch(/^ok: .*progress\.yaml: 2 upstream\(s\), 2 toolset\(s\)\n/);
      expect(stdout).not.toContain("live:");
      writeFileSync(gate, "");
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/\n {2}\[2\/2\] slow: 1 tool\(s\)\n$/);
      // What a script reads: the summary, then the live report, as in one piece.
      const whole = stdout.split("\n\nlive: ");
      expect(whole).toHaveLength(2);
      expect(whole[1]).toMatch(/^2 of 2 upstream\(s\) reached\n[\s\S]*\nok: 0 missing member\(s\)/);
      expect(stdout).not.toMatch(/connecting|\[1\/2\]/);
    } finally {
      writeFileSync(gate, "");
      proc.kill("SIGKILL");
    }
  });

  test("init --live says what the client file alone tells at once, then a line per server as it answers", async () => {
    const gate = `${tmp.dir}/open-init`;
    const from = tmp.file(
      "client.json",
      JSON.stringify({
        mcpServers: { slow: { command: "node", args: [gated(gate)] }, off: { command: "x", disabled: true } },
      }),
    );
    const out = `${tmp.dir}/from-client.yaml`;
    const proc = spawn(process.execPath, [CLI, "init", "--from", from, "-o", out, "--live"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((done) => proc.once("exit", done));
    try {
      await until(() => stderr.includes("connecting to 1 upstream…\n"), "init's first progress line");
      expect(stderr).toContain(`init: skipped "off": disabled in ${from}\n`);
      expect(existsSync(out)).toBe(false);
      writeFileSync(gate, "");
      expect(await exited).toBe(0);
      expect(stderr).toContain("  [1/1] slow: 1 tool(s)\n");
      expect(readFileSync(out, "utf8")).toContain("- slow/add");
    } finally {
      writeFileSync(gate, "");
      proc.kill("SIGKILL");
    }
  });

  test("toolsets --live --json prints only the payload on stdout, and a line per upstream on stderr", async () => {
    const r = await cli(["toolsets", "--live", config, "--json"]);
    expect(r.code).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout) as object)).toContain("everything");
    const [first, ...answers] = r.stderr.trimEnd().split("\n");
    expect(first).toBe("connecting to 2 upstreams…");
    expect(answers.map((l) => l.replace(/\[\d\/2\]/, "[n/2]")).sort()).toEqual([
      "  [n/2] calc: 1 tool(s)",
      "  [n/2] main: 6 tool(s)",
    ]);
  });

  const noScript = existsSync("/usr/bin/script")
    ? undefined
    : "/usr/bin/script (runs a command on a pseudo-terminal) is missing: apt-get install -y bsdutils, then run this file again";
  test.skipIf(noScript !== undefined)(
    unless(
      noScript,
      "on a terminal, a status line names the upstreams still being waited for, and is cleared at the end",
    ),
    async () => {
      const gate = `${tmp.dir}/open-tty`;
      const file = tmp.file(
        "tty.yaml",
        `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n  slow: { command: node, args: ["${gated(gate)}"] }\n`,
      );
      const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
      const command = [process.execPath, CLI, "check", "--live", file].map(quote).join(" ");
      const proc = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let seen = "";
      proc.stdout.on("data", (c: Buffer) => {
        seen += c.toString();
      });
      const r = await new Promise<Run>((resolve) => {
        proc.once("close", (code) => resolve({ code, stdout: seen, stderr: "" }));
        void until(() => seen.includes("[1/2] main"), "main's line on the terminal").then(() =>
          writeFileSync(gate, ""),
        );
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("listing tools of main, slow…");
      expect(r.stdout).toContain(
        "\r\u001b[K  [1/2] main: 1 tool(s)\r\n  listing tools of slow…\r\u001b[K  [2/2] slow: 1 tool(s)",
      );
    },
  );
});

describe("--live and client capabilities", () => {
  test("a per-session upstream is listed as its sessions see it: a tool it offers only to clients with roots is not missing", async () => {
    const file = tmp.file(
      "roots-session.yaml",
      `
upstreams:
  everything: { command: mcp-server-everything, isolation: per-session, connect_timeout: 60 }
toolsets:
  roots: { tools: [everything/get-roots-list, everything/echo] }
`,
    );
    const r = await cli(["check", "--live", file]);
    expect(r.stdout).not.toContain("matches nothing");
    expect(r.code).toBe(0);
  });

  test("a member a shared upstream lists only to clients with roots is reported missing, naming the capability it needs", async () => {
    const file = tmp.file(
      "roots-shared.yaml",
      `
upstreams:
  everything: { command: mcp-server-everything, connect_timeout: 60 }
toolsets:
  roots: { tools: [everything/get-roots-list, everything/echo, everything/no-such-tool] }
`,
    );
    const r = await cli(["check", "--live", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${position(file, "everything/get-roots-list")}: everything/get-roots-list in toolset roots (at ${position(file, "roots:")}) matches nothing on everything: everything lists it only to clients that declare roots, which toolpacks declares to this upstream only with roots: in its config or isolation: per-session`,
    );
    // A name it lists to nobody says nothing of capabilities.
    expect(r.stdout).toMatch(
      /everything\/no-such-tool in toolset roots \(at [^)]+\) matches nothing on everything$/m,
    );
  });
});
