/** `toolpacks init`: the pure conversion from a client's MCP configuration to packs.yaml text. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { compileTexts } from "../../src/catalog/load.js";
import type { Catalog } from "../../src/catalog/types.js";
import {
  collisionLines,
  compileWritten,
  InitInputError,
  type Listing,
  mask,
  OWN_SCHEMA,
  parseClientConfig,
  planInit,
  renderPacks,
  SCHEMA_LINE,
  schemaRef,
  upstreamName,
  variableLines,
} from "../../src/commands/init.js";
import { formatConfigError } from "../../src/config/errors.js";

/** The YAML text for a parsed client config, and the plan behind it. */
function convert(config: unknown, live?: ReadonlyMap<string, Listing>) {
  const plan = planInit(config, "client.json");
  return { plan, text: renderPacks(plan, live) };
}

/** Compiles like `toolpacks check` would with every referenced variable set; fails the test otherwise. */
function compiles(text: string): Catalog {
  const r = compileWritten("packs.yaml", text);
  if (!r.ok) throw new Error(`${r.errors.map(formatConfigError).join("\n")}\n---\n${text}`);
  return r.catalog;
}

/** The values a served upstream would really get, with this environment. */
function resolved(text: string, env: Record<string, string>): Catalog {
  const r = compileTexts([{ file: "packs.yaml", text }], env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.catalog;
}

const claudeDesktop = {
  mcpServers: {
    github: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github"],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_notreallysecret0000000000000000", LOG_LEVEL: "debug" },
    },
    memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
  },
};

describe("client shapes", () => {
  test("init reads the servers of a Claude Desktop / Cursor file (mcpServers)", () => {
    const { text } = convert(claudeDesktop);
    const catalog = compiles(text);
    expect([...catalog.upstreams.keys()]).toEqual(["github", "memory"]);
    expect(catalog.upstreams.get("memory")!.display).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-memory"],
    });
  });

  test("init reads the servers of VS Code's mcp.json (servers)", () => {
    const { plan, text } = convert({
      inputs: [],
      servers: { fetch: { type: "stdio", command: "uvx", args: ["mcp-server-fetch"] } },
    });
    expect(plan.key).toBe("servers");
    expect(compiles(text).upstreams.get("fetch")!.display).toEqual({
      command: "uvx",
      args: ["mcp-server-fetch"],
    });
  });

  test("init reads the servers inside VS Code's settings.json (mcp.servers)", () => {
    const { plan, text } = convert({
      "editor.fontSize": 14,
      mcp: { servers: { docs: { type: "http", url: "https://docs.example.com/mcp" } } },
    });
    expect(plan.key).toBe("mcp.servers");
    const up = compiles(text).upstreams.get("docs")!;
    expect(up.transport).toBe("http");
    expect(up.url).toBe("https://docs.example.com/mcp");
  });

  test("init reads VS Code settings with // comments and trailing commas", () => {
    const parsed = parseClientConfig(`{
      // my servers
      "mcp": {
        "servers": {
          /* remote */
          "docs": { "url": "https://docs.example.com/mcp", }, // a URL keeps its //
          "notes": { "command": "node", "args": ["a // b", "c /* d */",], },
        },
      },
    }`);
    expect(parsed).toEqual({
      mcp: {
        servers: {
          docs: { url: "https://docs.example.com/mcp" },
          notes: { command: "node", args: ["a // b", "c /* d */"] },
        },
      },
    });
  });

  test("a file that is not JSON is reported with the line where it breaks", () => {
    expect(() => parseClientConfig('{\n  "mcpServers": {\n    "a": { command: "x" }\n  }\n}')).toThrow(
      /not JSON: .*line 3/,
    );
  });

  test.each([
    ["a config without any server map", { editor: {} }, /no servers: expected an "mcpServers" map/],
    ["an empty mcpServers map", { mcpServers: {} }, /no servers: "mcpServers" is empty/],
    ["a JSON array", [1, 2], /no servers/],
    [
      "only entries that cannot be servers",
      { mcpServers: { a: 1, b: { env: {} } } },
      /no usable servers: "a": not an object; "b": it has neither command nor url/,
    ],
  ])("init refuses %s with a reason instead of writing an empty packs.yaml", (_, config, message) => {
    expect(() => planInit(config, "client.json")).toThrow(InitInputError);
    expect(() => planInit(config, "client.json")).toThrow(message);
  });

  test("HTTP entries keep their headers, and keys of the other transport are left out with a note", () => {
    const { text } = convert({
      mcpServers: {
        api: {
          type: "streamable-http",
          url: "https://api.example.com/mcp",
          headers: { "X-Tenant": "acme" },
          args: ["ignored"],
        },
        local: { command: "node", args: ["server.js"], cwd: "/srv/mcp", headers: { "X-Tenant": "acme" } },
      },
    });
    const catalog = compiles(text);
    expect(catalog.upstreams.get("api")!.display).toEqual({
      url: "https://api.example.com/mcp",
      headers: { "X-Tenant": "acme" },
    });
    expect(catalog.upstreams.get("local")!.display).toEqual({
      command: "node",
      args: ["server.js"],
      cwd: "/srv/mcp",
    });
    expect(text).toContain("# not carried over: args (they apply to stdio servers, not url)");
    expect(text).toContain("# not carried over: headers (they apply to url servers)");
  });

  test("an SSE-only server is written with a note that toolpacks speaks Streamable HTTP only", () => {
    const { text } = convert({
      mcpServers: {
        legacy: { type: "sse", url: "http://localhost:9000/sse" },
        guessed: { url: "http://localhost:9001/sse" },
        modern: { type: "http", url: "http://localhost:9002/mcp" },
      },
    });
    compiles(text);
    /** The comment lines right above an upstream's key. */
    const notesOf = (name: string) => {
      const lines = text.split("\n");
      const notes: string[] = [];
      for (let i = lines.indexOf(`  ${name}:`) - 1; lines[i]?.startsWith("  #"); i--)
        notes.unshift(lines[i]!);
      return notes.join("\n");
    };
    expect(notesOf("legacy")).toMatch(/SSE in the client file: toolpacks speaks Streamable HTTP only/);
    expect(notesOf("guessed")).toMatch(/toolpacks speaks Streamable HTTP only/);
    expect(notesOf("modern")).not.toMatch(/Streamable HTTP only/);
  });

  test("a disabled server, or a non-http url, is left out and named in the file", () => {
    const { plan, text } = convert({
      mcpServers: {
        on: { command: "a" },
        off: { command: "b", disabled: true },
        socket: { url: "ws://localhost:1/mcp" },
      },
    });
    expect([...compiles(text).upstreams.keys()]).toEqual(["on"]);
    expect(plan.skipped).toEqual([
      { original: "off", reason: "disabled in client.json" },
      { original: "socket", reason: "its url is not http(s) (ws:)" },
    ]);
    expect(text).toContain('# Not carried over: "off": disabled in client.json.');
  });
});

describe("names", () => {
  test("a server name toolpacks rejects is written sanitized, the original named in a comment", () => {
    const { text } = convert({
      mcpServers: {
        "Brave Search": { command: "a" },
        "@scope/pkg": { command: "b" },
        only: { command: "c" },
        "Brave/Search": { command: "d" },
        "...": { command: "e" },
        ["x".repeat(80)]: { command: "f" },
      },
    });
    const names = [...compiles(text).upstreams.keys()];
    expect(names).toEqual([
      "Brave-Search",
      "scope-pkg",
      "only-server",
      "Brave-Search-2",
      "server",
      "x".repeat(64),
    ]);
    expect(text).toContain('  # "Brave Search" in client.json\n  Brave-Search:');
    expect(text).toContain('  # "only" in client.json\n  only-server:');
  });

  test("two server names that become one upstream name are both kept, and the user is told", () => {
    const { plan, text } = convert({
      mcpServers: { "Brave Search": { command: "a" }, "Brave/Search": { command: "b" } },
    });
    expect([...compiles(text).upstreams.keys()]).toEqual(["Brave-Search", "Brave-Search-2"]);
    expect(plan.warnings).toEqual([
      '"Brave/Search" would be named Brave-Search like "Brave Search"; it is written as Brave-Search-2 (rename either upstream in the file if you like)',
    ]);
    expect(text).toContain('# named Brave-Search-2: "Brave Search" is already Brave-Search');
  });

  test("without --live, the file says tool-name collisions are only found by check --live", () => {
    expect(convert(claudeDesktop).text).toMatch(
      /# Two servers offering the same tool name conflict[^\n]*\n# [^\n]*`toolpacks check --live FILE` reports them/,
    );
    expect(convert({ mcpServers: { one: { command: "x" } } }).text).not.toMatch(/same tool name/);
  });

  test("init warns when it copies npx without -y, which gives up where toolpacks starts it, and says how to fix it", () => {
    const { plan } = convert({
      mcpServers: {
        asks: { command: "npx", args: ["@modelcontextprotocol/server-github"] },
        "asks-too": { command: "C:\\Program Files\\nodejs\\npx.cmd", args: ["server-x@1.0.0"] },
        exec: { command: "npm", args: ["exec", "server-y"] },
        yes: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
        "yes-long": { command: "npx", args: ["--yes", "server-z"] },
        "yes-env": { command: "npx", args: ["server-z"], env: { npm_config_yes: "true" } },
        "exec-yes": { command: "npm", args: ["exec", "--yes", "server-y"] },
        installed: { command: "mcp-server-memory" },
      },
    });
    const warned = plan.warnings.filter((w) => w.includes("no YES option"));
    expect(warned.map((w) => w.split(":")[0])).toEqual(["asks", "asks-too", "exec"]);
    expect(warned[0]).toContain("Write npx -y");
    expect(warned[2]).toContain("Write npm exec --yes");
  });

  test("sanitized names never collide with names already given", () => {
    const taken = new Set(["a-b", "a-b-2"]);
    expect(upstreamName("a b", taken)).toBe("a-b-3");
    expect(upstreamName("valid_name.1", new Set())).toBe("valid_name.1");
  });
});

describe("secrets", () => {
  test("init writes an env secret of a Claude Desktop file as a ${VAR}, never its value", () => {
    const { plan, text } = convert(claudeDesktop);
    expect(text).not.toContain("ghp_notreallysecret");
    expect(text).toContain("GITHUB_PERSONAL_ACCESS_TOKEN: ${GITHUB_PERSONAL_ACCESS_TOKEN}");
    expect(text).toContain("LOG_LEVEL: debug");
    expect(plan.variables.get("GITHUB_PERSONAL_ACCESS_TOKEN")).toMatchObject({
      kind: "secret",
      where: ["github env GITHUB_PERSONAL_ACCESS_TOKEN"],
    });
    // Served with the variable set, the upstream gets the value back.
    const up = resolved(text, { GITHUB_PERSONAL_ACCESS_TOKEN: "from-env" }).upstreams.get("github")!;
    expect(up.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: "from-env", LOG_LEVEL: "debug" });
  });

  test.each([
    ["API_KEY", "k-123456"],
    ["SLACK_BOT_TOKEN", "anything"],
    ["CLIENT_SECRET", "anything"],
    ["DB_PASSWORD", "hunter2hunter2"],
    ["AUTH_HEADER", "anything"],
    ["GITHUB_PAT", "anything"],
    ["AWS_CREDENTIALS", "anything"],
    ["NOT_SECRET_LOOKING", "ghp_abcdefghijklmnopqrstuvwxyz0123"],
    ["OPENAI", "sk-abcdefghijklmnopqrstuvwxyz0123"],
  ])("init never copies the value of env %s", (key, value) => {
    const { text } = convert({ mcpServers: { s: { command: "x", env: { [key]: value } } } });
    expect(text).not.toContain(value);
    expect(text).toMatch(new RegExp(`${key}: \\$\\{[A-Z_]+\\}`));
    compiles(text);
  });

  test("an innocent env value (GIT_AUTHOR_NAME, a port) is copied as it is, not hidden as a secret", () => {
    const { plan, text } = convert({
      mcpServers: { git: { command: "x", env: { GIT_AUTHOR_NAME: "Ada", PORT: 3000 } } },
    });
    expect(text).toContain("GIT_AUTHOR_NAME: Ada");
    expect(text).toContain('PORT: "3000"');
    expect(plan.variables.size).toBe(0);
  });

  test("init writes an Authorization header's token as a ${VAR} and keeps its scheme", () => {
    const { plan, text } = convert({
      mcpServers: {
        github: {
          url: "https://api.githubcopilot.com/mcp/",
          headers: { Authorization: "Bearer gho_secretvalue", "X-API-Key": "xk-secret", Accept: "a/b" },
        },
      },
    });
    expect(text).not.toContain("gho_secretvalue");
    expect(text).not.toContain("xk-secret");
    expect(text).toContain("Authorization: Bearer ${GITHUB_TOKEN}");
    expect(text).toContain("X-API-Key: ${X_API_KEY}");
    expect([...plan.variables.keys()]).toEqual(["GITHUB_TOKEN", "X_API_KEY"]);
    const up = resolved(text, { GITHUB_TOKEN: "t", X_API_KEY: "k" }).upstreams.get("github")!;
    expect(up.headers).toEqual({ Authorization: "Bearer t", "X-API-Key": "k", Accept: "a/b" });
  });

  test("init never copies a secret given on the command line or inside a URL", () => {
    const { text } = convert({
      mcpServers: {
        brave: { command: "npx", args: ["brave-mcp", "--api-key", "BSAone", "--token=BSAtwo", "-y"] },
        docker: { command: "docker", args: ["run", "-e", "GITHUB_TOKEN=BSAthree", "-e", "LOG=1", "img"] },
        pg: { command: "npx", args: ["server-postgres", "postgresql://admin:BSAfour@db:5432/app"] },
        remote: { url: "https://mcp.example.com/mcp?api_key=BSAfive&region=eu" },
      },
    });
    expect(text).not.toMatch(/BSA/);
    expect(text).toContain(
      'args: ["brave-mcp", "--api-key", "${BRAVE_API_KEY}", "--token=${BRAVE_TOKEN}", "-y"]',
    );
    expect(text).toContain('"GITHUB_TOKEN=${GITHUB_TOKEN}", "-e", "LOG=1"');
    expect(text).toContain('"postgresql://admin:${PG_PASSWORD}@db:5432/app"');
    expect(text).toContain("url: https://mcp.example.com/mcp?api_key=${REMOTE_API_KEY}&region=eu");
    compiles(text);
  });

  test("two servers' different secrets under one key get server-prefixed names, never a number", () => {
    const { plan, text } = convert({
      mcpServers: {
        a: { command: "x", env: { API_KEY: "first-secret" } },
        b: { command: "x", env: { API_KEY: "second-secret" } },
        c: { command: "x", env: { API_KEY: "first-secret" } },
      },
    });
    expect(text.match(/API_KEY: \$\{[A-Z_0-9]+\}/g)).toEqual([
      "API_KEY: ${A_API_KEY}",
      "API_KEY: ${B_API_KEY}",
      "API_KEY: ${C_API_KEY}",
    ]);
    expect([...plan.variables.keys()]).toEqual(["A_API_KEY", "B_API_KEY", "C_API_KEY"]);
  });

  test("references the client already used are kept as references", () => {
    const { plan, text } = convert({
      servers: {
        gh: {
          command: "x",
          env: {
            GITHUB_TOKEN: "${input:github-token}",
            OTHER_TOKEN: "${env:OTHER_TOKEN}",
            CLAUDE_STYLE: "${CLAUDE_VAR:-fallback}",
          },
          args: ["${workspaceFolder}/src", "${userHome}/.cache"],
        },
      },
    });
    expect(text).toContain("GITHUB_TOKEN: ${GITHUB_TOKEN}");
    expect(text).toContain("OTHER_TOKEN: ${OTHER_TOKEN}");
    expect(text).toContain("CLAUDE_STYLE: ${CLAUDE_VAR:-fallback}");
    expect(text).toContain('args: ["./src", "${HOME}/.cache"]');
    expect(plan.variables.get("GITHUB_TOKEN")!.kind).toBe("input");
    expect(plan.variables.get("OTHER_TOKEN")!.kind).toBe("env");
    expect(plan.variables.has("CLAUDE_VAR")).toBe(false);
    compiles(text);
  });

  test("a literal $ in a value stays literal", () => {
    const value = "cost $5, ${config:editor.x} $$ and ${unclosed";
    const { plan, text } = convert({ mcpServers: { s: { command: "x", env: { NOTE: value } } } });
    expect(resolved(text, {}).upstreams.get("s")!.env).toEqual({ NOTE: value });
    expect(plan.warnings).toEqual([
      "s env NOTE: ${config:editor.x} is not an environment variable; kept as text",
    ]);
  });

  test("a secret in an upstream's error message is masked as its variable", () => {
    const { plan } = convert(claudeDesktop);
    expect(mask("spawn failed: bad token ghp_notreallysecret0000000000000000 (401)", plan.variables)).toBe(
      "spawn failed: bad token ${GITHUB_PERSONAL_ACCESS_TOKEN} (401)",
    );
  });

  test("a secret that holds another secret is masked whole, not in pieces", () => {
    const { plan } = convert({
      mcpServers: { s: { command: "x", env: { SHORT_TOKEN: "abc123def", LONG_TOKEN: "abc123def456ghi" } } },
    });
    expect(mask("got abc123def456ghi and abc123def", plan.variables)).toBe(
      "got ${LONG_TOKEN} and ${SHORT_TOKEN}",
    );
  });

  test("the file names the variables to set", () => {
    const { text } = convert(claudeDesktop);
    expect(text).toMatch(
      /# Set these environment variables where `toolpacks serve` runs.*\n#\s+GITHUB_PERSONAL_ACCESS_TOKEN\s+github env GITHUB_PERSONAL_ACCESS_TOKEN \(value not copied\)/,
    );
  });
});

/** One shape of value in a client file: where it is, what must be written, and the variables asked for. */
interface Shape {
  readonly server?: string;
  readonly env?: readonly [string, string];
  readonly header?: readonly [string, string];
  readonly url?: string;
  readonly args?: readonly string[];
  /** What the file holds in its place (the arg list for `args`). */
  readonly out: string | readonly string[];
  /** The variables the user is asked to set, in order. */
  readonly vars: readonly string[];
}

const HEX64 = "0123456789abcdef".repeat(4);
const SHAPES: [string, Shape][] = [
  // Connection strings and URL userinfo: only the password becomes a reference.
  [
    "a postgres:// password in an env URL",
    {
      env: ["DATABASE_URL", "postgres://app:s3cr3tPass@db.internal:5432/app"],
      out: "postgres://app:${DATABASE_PASSWORD}@db.internal:5432/app",
      vars: ["DATABASE_PASSWORD"],
    },
  ],
  [
    "a postgresql:// password in an argument",
    {
      server: "pg",
      args: [
        "-y",
        "@modelcontextprotocol/server-postgres",
        "postgresql://admin:hunter2hunter2@localhost/app",
      ],
      out: ["-y", "@modelcontextprotocol/server-postgres", "postgresql://admin:${PG_PASSWORD}@localhost/app"],
      vars: ["PG_PASSWORD"],
    },
  ],
  [
    "a mysql:// password",
    {
      env: ["MYSQL_URL", "mysql://root:r00tpw@127.0.0.1:3306/shop"],
      out: "mysql://root:${MYSQL_PASSWORD}@127.0.0.1:3306/shop",
      vars: ["MYSQL_PASSWORD"],
    },
  ],
  [
    "a mongodb+srv:// password",
    {
      server: "mongo",
      args: ["mongodb+srv://ada:Pa55word@cluster0.abcde.mongodb.net/test?retryWrites=true"],
      out: ["mongodb+srv://ada:${MONGO_PASSWORD}@cluster0.abcde.mongodb.net/test?retryWrites=true"],
      vars: ["MONGO_PASSWORD"],
    },
  ],
  [
    "a redis:// password without a user",
    {
      env: ["REDIS_URL", "redis://:redispass@cache:6379/0"],
      out: "redis://:${REDIS_PASSWORD}@cache:6379/0",
      vars: ["REDIS_PASSWORD"],
    },
  ],
  [
    "an amqp:// password",
    {
      server: "queue",
      args: ["amqp://guest:guestpw@rabbit:5672/vhost"],
      out: ["amqp://guest:${QUEUE_PASSWORD}@rabbit:5672/vhost"],
      vars: ["QUEUE_PASSWORD"],
    },
  ],
  [
    "user:password@ in an https url",
    {
      server: "web",
      url: "https://ada:webpass@mcp.example.com/mcp",
      out: "https://ada:${WEB_PASSWORD}@mcp.example.com/mcp",
      vars: ["WEB_PASSWORD"],
    },
  ],
  [
    "a GitLab token as a URL password",
    {
      args: ["https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.com/g/r.git"],
      out: ["https://oauth2:${SRV_PASSWORD}@gitlab.com/g/r.git"],
      vars: ["SRV_PASSWORD"],
    },
  ],
  [
    "Password= in a key=value connection string",
    {
      env: ["SQL_CONN", "Server=db;User Id=sa;Password=S3cret!;"],
      out: "Server=db;User Id=sa;Password=${SQL_PASSWORD};",
      vars: ["SQL_PASSWORD"],
    },
  ],
  [
    "SharedAccessKey= after a Service Bus endpoint URL",
    {
      env: [
        "AZURE_SERVICEBUS_CONNECTION_STRING",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=k3y",
      ],
      out: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${AZURE_SERVICEBUS_SHARED_ACCESS_KEY}",
      vars: ["AZURE_SERVICEBUS_SHARED_ACCESS_KEY"],
    },
  ],
  [
    "a SAS token under SharedAccessSignature= is one secret",
    {
      env: [
        "AZURE_STORAGE_CONNECTION_STRING",
        "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sp=rl&sig=abc%2Bdef%3D",
      ],
      out: "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=${AZURE_STORAGE_SHARED_ACCESS_SIGNATURE}",
      vars: ["AZURE_STORAGE_SHARED_ACCESS_SIGNATURE"],
    },
  ],
  [
    "sig= of a bare SAS token",
    {
      env: ["AZURE_SAS", "sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=abc%2Bdef%3D"],
      out: "sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=${AZURE_SAS_SIG}",
      vars: ["AZURE_SAS_SIG"],
    },
  ],
  // Keys in query strings and paths.
  [
    "?api_key= in a url",
    {
      server: "remote",
      url: "https://mcp.example.com/mcp?api_key=abc123secret&region=eu",
      out: "https://mcp.example.com/mcp?api_key=${REMOTE_API_KEY}&region=eu",
      vars: ["REMOTE_API_KEY"],
    },
  ],
  [
    "?token= in an mcp-remote argument",
    {
      server: "remote",
      args: ["mcp-remote", "https://h.example.com/sse?token=tok_9f8e7d"],
      out: ["mcp-remote", "https://h.example.com/sse?token=${REMOTE_TOKEN}"],
      vars: ["REMOTE_TOKEN"],
    },
  ],
  [
    "?access_token= and sig= together",
    {
      url: "https://x.example.com/mcp?access_token=at-123456&sig=Zm9vYmFy",
      out: "https://x.example.com/mcp?access_token=${SRV_ACCESS_TOKEN}&sig=${SRV_SIG}",
      vars: ["SRV_ACCESS_TOKEN", "SRV_SIG"],
    },
  ],
  [
    "?key= in a url",
    {
      server: "maps",
      url: "https://maps.example.com/mcp?key=mapkey987",
      out: "https://maps.example.com/mcp?key=${MAPS_KEY}",
      vars: ["MAPS_KEY"],
    },
  ],
  [
    "a Google key under an innocent query name",
    {
      url: "https://maps.example.com/mcp?client=AIzaSyA1234567890abcdefghijklmnopqrstu",
      out: "https://maps.example.com/mcp?client=${SRV_CLIENT}",
      vars: ["SRV_CLIENT"],
    },
  ],
  [
    "an sk- key in a URL path",
    {
      server: "zapier",
      url: "https://mcp.example.com/sk-abcdefghijklmnopqrstuvwxyz012345/sse",
      out: "https://mcp.example.com/${ZAPIER_URL_KEY}/sse",
      vars: ["ZAPIER_URL_KEY"],
    },
  ],
  [
    "32 hex characters in a URL path",
    {
      url: "https://api.example.com/v1/0123456789abcdef0123456789abcdef/mcp",
      out: "https://api.example.com/v1/${SRV_URL_KEY}/mcp",
      vars: ["SRV_URL_KEY"],
    },
  ],
  [
    "a webhook secret in a URL path",
    {
      env: [
        "SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/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",
      ],
      out: "https://hooks.slack.com/services/T024BE7LD/B024BE7LH/${SLACK_WEBHOOK_URL_KEY}",
      vars: ["SLACK_WEBHOOK_URL_KEY"],
    },
  ],
  // Headers: the scheme stays.
  [
    "Authorization: Bearer",
    {
      server: "notion",
      header: ["Authorization", "Bearer ntn-abcdef123"],
      out: "Bearer ${NOTION_TOKEN}",
      vars: ["NOTION_TOKEN"],
    },
  ],
  [
    "Authorization: Basic",
    {
      header: ["Authorization", "Basic YWRhOnNlY3JldA=="],
      out: "Basic ${SRV_BASIC_AUTH}",
      vars: ["SRV_BASIC_AUTH"],
    },
  ],
  ["an X-Api-Key header", { header: ["X-Api-Key", "k-12345"], out: "${X_API_KEY}", vars: ["X_API_KEY"] }],
  [
    "a Token scheme in another secret header",
    { header: ["X-Auth-Token", "Token abcdef123"], out: "Token ${X_AUTH_TOKEN}", vars: ["X_AUTH_TOKEN"] },
  ],
  // Arguments.
  [
    "--api-key=VALUE",
    {
      server: "brave",
      args: ["--api-key=BSAxyz123"],
      out: ["--api-key=${BRAVE_API_KEY}"],
      vars: ["BRAVE_API_KEY"],
    },
  ],
  [
    "--token VALUE",
    { args: ["--token", "tok123456"], out: ["--token", "${SRV_TOKEN}"], vars: ["SRV_TOKEN"] },
  ],
  [
    "mcp-remote --header Authorization: Bearer",
    {
      args: ["mcp-remote", "https://h.example.com/mcp", "--header", "Authorization: Bearer tok-abcdef"],
      out: ["mcp-remote", "https://h.example.com/mcp", "--header", "Authorization: Bearer ${SRV_TOKEN}"],
      vars: ["SRV_TOKEN"],
    },
  ],
  [
    "docker -e KEY=VALUE",
    {
      args: ["run", "-e", "GITHUB_TOKEN=abcd1234", "img"],
      out: ["run", "-e", "GITHUB_TOKEN=${GITHUB_TOKEN}", "img"],
      vars: ["GITHUB_TOKEN"],
    },
  ],
  // Well-known token shapes, whatever the key.
  [
    "ghp_ under an innocent env key",
    { env: ["GH", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"], out: "${GH}", vars: ["GH"] },
  ],
  [
    "gho_ as an argument",
    { args: ["gho_abcdefghijklmnopqrstuvwxyz012345"], out: ["${SRV_TOKEN}"], vars: ["SRV_TOKEN"] },
  ],
  [
    "github_pat_ as an argument",
    {
      args: ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"],
      out: ["${SRV_TOKEN}"],
      vars: ["SRV_TOKEN"],
    },
  ],
  [
    "sk-proj- (OpenAI)",
    { env: ["OPENAI", "sk-proj-abcdefghijklmnopqrstuvwxyz0123"], out: "${OPENAI}", vars: ["OPENAI"] },
  ],
  [
    "sk-ant- (Anthropic)",
    {
      env: ["ANTHROPIC", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"],
      out: "${ANTHROPIC}",
      vars: ["ANTHROPIC"],
    },
  ],
  [
    "xoxb- (Slack bot)",
    { env: ["SLACK_BOT", "xoxb-1234567890-abcdefghij"], out: "${SLACK_BOT}", vars: ["SLACK_BOT"] },
  ],
  [
    "xoxp- after an innocent --flag=",
    { args: ["--slack=xoxp-1234567890-abcdef"], out: ["--slack=${SRV_SLACK}"], vars: ["SRV_SLACK"] },
  ],
  [
    "AKIA (AWS access key id)",
    {
      env: ["AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"],
      out: "${AWS_ACCESS_KEY_ID}",
      vars: ["AWS_ACCESS_KEY_ID"],
    },
  ],
  [
    "shpat_ (Shopify)",
    { env: ["SHOP", "shpat_0123456789abcdef0123456789abcdef"], out: "${SHOP}", vars: ["SHOP"] },
  ],
  ["npm_ (npm)", { env: ["NPM", "npm_abcdefghijklmnopqrstuvwxyz0123456789"], out: "${NPM}", vars: ["NPM"] }],
  [
    "a JWT",
    {
      env: ["SESSION_JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlLXZhbHVl"],
      out: "${SESSION_JWT}",
      vars: ["SESSION_JWT"],
    },
  ],
  // Long high-entropy tokens, alone or inside text.
  [
    "a high-entropy token after an innocent flag",
    {
      args: ["--workspace", "Zx8Kq2LmP9vR4tY7wB1nC6dF"],
      out: ["--workspace", "${SRV_TOKEN}"],
      vars: ["SRV_TOKEN"],
    },
  ],
  [
    "a high-entropy token inside text",
    { env: ["NOTE", "key is Zx8Kq2LmP9vR4tY7wB1nC6dF here"], out: "key is ${NOTE} here", vars: ["NOTE"] },
  ],
  [
    "an AWS secret key (base64 with /) after an innocent flag",
    {
      args: ["--aws", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
      out: ["--aws", "${SRV_TOKEN}"],
      vars: ["SRV_TOKEN"],
    },
  ],
  // Innocent values stay as they are.
  [
    "a git commit in an npx package spec",
    {
      args: ["-y", "github:ada/mcp-notes#a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"],
      out: ["-y", "github:ada/mcp-notes#a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"],
      vars: [],
    },
  ],
  [
    "a content hash and a long file name in file paths",
    {
      args: [
        "/usr/share/icons/Adwaita/cursors/6407b0e94181790501fd1e167b474872",
        "/etc/ssl/SSL.com_EV_Root_Certification_Authority_RSA_R2.crt",
      ],
      out: [
        "/usr/share/icons/Adwaita/cursors/6407b0e94181790501fd1e167b474872",
        "/etc/ssl/SSL.com_EV_Root_Certification_Authority_RSA_R2.crt",
      ],
      vars: [],
    },
  ],
  [
    "an sk- package name (no digit: not a key)",
    {
      args: ["-y", "sk-gaussian-binomial-distributions"],
      out: ["-y", "sk-gaussian-binomial-distributions"],
      vars: [],
    },
  ],
  [
    "a person's name (GIT_AUTHOR_NAME)",
    { env: ["GIT_AUTHOR_NAME", "Ada Lovelace"], out: "Ada Lovelace", vars: [] },
  ],
  ["--port 8080", { args: ["--port", "8080"], out: ["--port", "8080"], vars: [] }],
  [
    "a package name and a long folder path",
    {
      args: [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/ada/Projects/MyCompanyProjects2024/src",
      ],
      out: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ada/Projects/MyCompanyProjects2024/src"],
      vars: [],
    },
  ],
  ["a version string", { args: ["mcp-server-fetch@1.2.3"], out: ["mcp-server-fetch@1.2.3"], vars: [] }],
  [
    "a UUID workspace id",
    {
      args: ["--workspace-id", "123e4567-e89b-12d3-a456-426614174000"],
      out: ["--workspace-id", "123e4567-e89b-12d3-a456-426614174000"],
      vars: [],
    },
  ],
  [
    "a localhost url with a port and an innocent query",
    { url: "http://localhost:3000/mcp?region=eu", out: "http://localhost:3000/mcp?region=eu", vars: [] },
  ],
  ["MAX_TOKENS (a count, not a token)", { env: ["MAX_TOKENS", "4096"], out: "4096", vars: [] }],
  [
    "a credentials file path",
    {
      env: ["GOOGLE_APPLICATION_CREDENTIALS", "/home/ada/.config/gcloud/creds.json"],
      out: "/home/ada/.config/gcloud/creds.json",
      vars: [],
    },
  ],
  [
    "a connection string without a password",
    {
      env: ["DATABASE_URL", "postgres://ada@localhost:5432/app"],
      out: "postgres://ada@localhost:5432/app",
      vars: [],
    },
  ],
  [
    "TOKEN_URL (where tokens come from)",
    {
      env: ["TOKEN_URL", "https://auth.example.com/oauth/token"],
      out: "https://auth.example.com/oauth/token",
      vars: [],
    },
  ],
  [
    "a long CamelCase name",
    {
      env: ["SERVER_NAME", "MyVeryLongServerName2024Edition"],
      out: "MyVeryLongServerName2024Edition",
      vars: [],
    },
  ],
  ["a boolean under a secret-sounding key", { env: ["USE_AUTH", "true"], out: "true", vars: [] }],
  [
    "an image digest",
    { args: [`ghcr.io/org/img@sha256:${HEX64}`], out: [`ghcr.io/org/img@sha256:${HEX64}`], vars: [] },
  ],
  ["a public client id", { env: ["CLIENT_ID", "my-desktop-client"], out: "my-desktop-client", vars: [] }],
];

describe("detection", () => {
  test("the shape table covers at least 25 shapes, 6 of them innocent", () => {
    expect(SHAPES.length).toBeGreaterThanOrEqual(25);
    expect(SHAPES.filter(([, s]) => !s.vars.length).length).toBeGreaterThanOrEqual(6);
  });

  test.each(SHAPES)("%s: only the secret part becomes ${VAR}, and serving it rebuilds the value", (_, s) => {
    const server = s.server ?? "srv";
    const entry = s.args
      ? { command: "npx", args: s.args }
      : s.env
        ? { command: "npx", env: { [s.env[0]]: s.env[1] } }
        : {
            url: s.url ?? "https://mcp.example.com/mcp",
            ...(s.header ? { headers: { [s.header[0]]: s.header[1] } } : {}),
          };
    const { plan, text } = convert({ mcpServers: { [server]: entry } });
    const spec = plan.upstreams[0]!.spec;
    const written = s.args
      ? spec.args
      : s.env
        ? spec.env![s.env[0]]
        : s.header
          ? spec.headers![s.header[0]]
          : spec.url;
    expect(written).toEqual(s.out);
    expect([...plan.variables.keys()]).toEqual(s.vars);
    for (const v of plan.variables.values()) {
      expect(v.kind).toBe("secret");
      expect(text).not.toContain(v.value);
    }
    // With each variable set to the value found, the served upstream gets exactly what the client had.
    const env = Object.fromEntries([...plan.variables.values()].map((v) => [v.name, v.value!]));
    const up = resolved(text, env).upstreams.get(server)!;
    if (s.args) expect(up.args).toEqual(s.args);
    else if (s.env) expect(up.env[s.env[0]]).toBe(s.env[1]);
    else if (s.header) expect(up.headers[s.header[0]]).toBe(s.header[1]);
    else {
      expect(up.url).toBe(s.url);
      expect(() => new URL(written as string)).not.toThrow();
    }
  });
});

/** Connection strings of Azure and its kin, each with every key-like part it holds (a key, a signature, a password). */
const CONNECTION_STRINGS: [string, string, string[]][] = [
  [
    "Service Bus",
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=sbKeyValue0=",
    ["sbKeyValue0="],
  ],
  [
    "Event Hubs, with its entity",
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=ehKey1;EntityPath=hub",
    ["ehKey1"],
  ],
  [
    "Storage account",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c3RvcmFnZUtleQ==;EndpointSuffix=core.windows.net",
    ["c3RvcmFnZUtleQ=="],
  ],
  [
    "Storage with a SAS",
    "BlobEndpoint=https://acct.blob.core.windows.net/;QueueEndpoint=https://acct.queue.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=bq&sp=rl&sig=sasSig%2B1%3D",
    ["sv=2022-11-02&ss=bq&sp=rl&sig=sasSig%2B1%3D"],
  ],
  ["a bare SAS token", "?sv=2022-11-02&ss=b&sp=r&sig=bareSig%2F2%3D", ["bareSig%2F2%3D"]],
  [
    "Cosmos DB",
    "AccountEndpoint=https://acct.documents.azure.com:443/;AccountKey=Y29zbW9zS2V5==;",
    ["Y29zbW9zS2V5=="],
  ],
  [
    "IoT Hub",
    "HostName=hub.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey=aW90S2V5",
    ["aW90S2V5"],
  ],
  ["SignalR", "Endpoint=https://x.service.signalr.net;AccessKey=c2lnbmFs;Version=1.0;", ["c2lnbmFs"]],
  [
    "App Configuration",
    "Endpoint=https://x.azconfig.io;Id=abc-l0-s0:XyZ;Secret=YXBwY29uZg==",
    ["YXBwY29uZg=="],
  ],
  [
    "Azure Cache for Redis (StackExchange)",
    "x.redis.cache.windows.net:6380,password=cmVkaXM=,ssl=True,abortConnect=False",
    ["cmVkaXM="],
  ],
  [
    "SQL, with a password holding & and =",
    "Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=me;Password=p&ss=w0rd;Encrypt=True",
    ["p&ss=w0rd"],
  ],
];

describe("connection strings", () => {
  test.each(CONNECTION_STRINGS)(
    "every key-like part of a connection string becomes a ${VAR}, and the rest stays as written: %s",
    (_, value, secrets) => {
      const { plan, text } = convert({ mcpServers: { az: { command: "npx", env: { AZ_CONN: value } } } });
      const written = plan.upstreams[0]!.spec.env!.AZ_CONN!;
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect([...plan.variables.values()].map((v) => v.value)).toEqual(secrets);
      // What is not a secret is copied: only the secrets' places hold references.
      let expected = value;
      for (const v of plan.variables.values()) expected = expected.replace(v.value!, `\${${v.name}}`);
      expect(written).toBe(expected);
      const env = Object.fromEntries([...plan.variables.values()].map((v) => [v.name, v.value!]));
      expect(resolved(text, env).upstreams.get("az")!.env.AZ_CONN).toBe(value);
    },
  );
});

describe("variable names", () => {
  test("one secret under one key in two servers is one variable, named after the key", () => {
    const { plan, text } = convert({
      mcpServers: {
        a: { command: "x", env: { API_KEY: "same-secret" } },
        b: { command: "y", env: { API_KEY: "same-secret" } },
      },
    });
    expect(text.match(/API_KEY: \$\{\w+\}/g)).toEqual(["API_KEY: ${API_KEY}", "API_KEY: ${API_KEY}"]);
    expect(plan.variables.get("API_KEY")!.where).toEqual(["a env API_KEY", "b env API_KEY"]);
  });

  test("two servers' different header secrets get server-prefixed names, never a number", () => {
    const { plan } = convert({
      mcpServers: {
        notion: {
          url: "https://a.example.com/mcp",
          headers: { Authorization: "Bearer n1", "X-Api-Key": "k1" },
        },
        linear: {
          url: "https://b.example.com/mcp",
          headers: { Authorization: "Bearer n2", "X-Api-Key": "k2" },
        },
      },
    });
    const names = [...plan.variables.keys()];
    expect(names).toEqual(["NOTION_TOKEN", "NOTION_X_API_KEY", "LINEAR_TOKEN", "LINEAR_X_API_KEY"]);
    expect(names.some((n) => /_\d+$/.test(n))).toBe(false);
  });

  test("a key that already starts with its server's name keeps it; the other server's is prefixed", () => {
    const { plan } = convert({
      mcpServers: {
        github: { command: "x", env: { GITHUB_TOKEN: "first-secret" } },
        gh2: { command: "y", env: { GITHUB_TOKEN: "second-secret" } },
      },
    });
    expect([...plan.variables.keys()]).toEqual(["GITHUB_TOKEN", "GH2_GITHUB_TOKEN"]);
  });

  test("a secret never takes the name of a variable the client file already reads from the environment", () => {
    const { plan, text } = convert({
      mcpServers: {
        a: { command: "x", env: { GITHUB_TOKEN: "${env:GITHUB_TOKEN}" } },
        b: { command: "y", env: { GITHUB_TOKEN: "ghp_literalliteralliteralliteral0000" } },
      },
    });
    expect(text).toContain("GITHUB_TOKEN: ${GITHUB_TOKEN}\n");
    expect(text).toContain("GITHUB_TOKEN: ${B_GITHUB_TOKEN}");
    expect(plan.variables.get("GITHUB_TOKEN")!.kind).toBe("env");
    expect(plan.variables.get("B_GITHUB_TOKEN")!.kind).toBe("secret");
  });

  test("variables the user did not write (HOME, PATH) and ones already set are not asked for, but stay references", () => {
    const { plan, text } = convert({
      servers: {
        fs: {
          command: "x",
          args: ["${userHome}/notes", "${env:PATH}"],
          env: {
            PROJECT: "${env:MY_PROJECT}",
            SET: "${env:ALREADY_SET}",
            KEY: "${input:api-key}",
            TOKEN: "t0ken-value",
          },
        },
      },
    });
    expect(text).toContain('args: ["${HOME}/notes", "${PATH}"]');
    const listed = (env: Record<string, string>) =>
      variableLines(plan, env).map((l) => l.trim().split(/\s+/)[0]);
    expect(listed({ ALREADY_SET: "1" })).toEqual(["MY_PROJECT", "API_KEY", "TOKEN"]);
    expect(listed({})).toEqual(["MY_PROJECT", "ALREADY_SET", "API_KEY", "TOKEN"]);
    const header = renderPacks(plan, undefined, { env: { ALREADY_SET: "1" } });
    expect(header).toMatch(/#\s+MY_PROJECT\s/);
    expect(header).not.toMatch(/#\s+(HOME|PATH|ALREADY_SET)\s/);
    compiles(text);
  });
});

describe("the $schema line", () => {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });
  /** A temp folder; `withPackage` puts an installed toolpacks schema in it. */
  function folder(withPackage: boolean, name = "toolpacks-init-"): string {
    const dir = mkdtempSync(join(tmpdir(), name));
    made.push(dir);
    if (withPackage) {
      mkdirSync(join(dir, "node_modules/toolpacks/schema"), { recursive: true });
      writeFileSync(join(dir, "node_modules/toolpacks/schema/packs.schema.json"), "{}");
    }
    return dir;
  }
  /** What the YAML language server opens for `$schema=REF` in a file at `out`. */
  const opened = (out: string, ref: string) =>
    ref.startsWith("file:") ? fileURLToPath(ref) : resolve(dirname(out), ref);

  test("next to an installed toolpacks it points into node_modules, relative to the file", () => {
    const dir = folder(true);
    const out = join(dir, "packs.yaml");
    expect(schemaRef(out)).toBe("./node_modules/toolpacks/schema/packs.schema.json");
    const nested = join(dir, "config/mcp/packs.yaml");
    expect(schemaRef(nested)).toBe("../../node_modules/toolpacks/schema/packs.schema.json");
    expect(opened(nested, schemaRef(nested))).toBe(
      join(dir, "node_modules/toolpacks/schema/packs.schema.json"),
    );
  });

  test("without an installed toolpacks it points at the running installation's schema, and it resolves", () => {
    const out = join(folder(false), "packs.yaml");
    const ref = schemaRef(out);
    expect(ref).toMatch(/^\.\.?\//);
    expect(opened(out, ref)).toBe(OWN_SCHEMA);
    expect(existsSync(OWN_SCHEMA)).toBe(true);
  });

  test("a path with white space is written as a file: URL, which the language server reads whole", () => {
    const dir = folder(true, "toolpacks init ");
    const own = join(dir, "node_modules/toolpacks/schema/packs.schema.json");
    const out = join(folder(false), "packs.yaml");
    const ref = schemaRef(out, own);
    expect(ref).toMatch(/^file:\/\/\S+$/);
    expect(opened(out, ref)).toBe(own);
  });

  test("the written file's first line carries the reference it is given", () => {
    const { plan } = convert(claudeDesktop);
    expect(renderPacks(plan, undefined, { schema: "../x/packs.schema.json" }).split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../x/packs.schema.json",
    );
  });
});

describe("the written file", () => {
  test("init's output starts with the schema line and compiles", () => {
    const { text } = convert(claudeDesktop);
    expect(text.split("\n")[0]).toBe(SCHEMA_LINE);
    const catalog = compiles(text);
    // Without --live no toolset names an upstream: each is its own implicit toolset, on by default.
    expect(catalog.toolsets.map((t) => [t.name, t.implicit, t.default])).toEqual([
      ["github", true, true],
      ["memory", true, true],
    ]);
    expect(text).toMatch(/each is served whole as a toolset of its own name/);
    expect(text).toMatch(/toolsets:\n#\s+issues:/);
  });

  test("odd values (YAML keywords, numbers, colons, quotes, newlines) keep their meaning in YAML", () => {
    const env = { YES: "true", NUM: "0123", COLON: "a: b", HASH: "x #y", QUOTE: `"'`, NL: "a\nb", EMPTY: "" };
    const { text } = convert({
      mcpServers: { true: { command: "@scope/bin", args: ["null", "- x", "[a]"], env } },
    });
    const up = resolved(text, {}).upstreams.get("true")!;
    expect(up.command).toBe("@scope/bin");
    expect(up.args).toEqual(["null", "- x", "[a]"]);
    expect(up.env).toEqual(env);
  });
});

describe("--live", () => {
  const listing = (tools: string[], extra: Partial<Extract<Listing, { ok: true }>> = {}): Listing => ({
    ok: true,
    tools: tools.map((name) => ({ name, description: `Does ${name}.\nMore detail.` })),
    prompts: [],
    resources: 0,
    templates: 0,
    ...extra,
  });
  const two = { mcpServers: { a: { command: "x" }, b: { command: "y" }, c: { command: "z" } } };

  test("a server's toolset lists its tools as server/tool with their description", () => {
    const { text } = convert(
      two,
      new Map([
        ["a", listing(["search", "fetch_page"])],
        ["b", listing([])],
        ["c", { ok: false, reason: "spawn z ENOENT" }],
      ]),
    );
    expect(text).toContain(
      "  a:\n    tools:\n      - a/search       # Does search.\n      - a/fetch_page   # Does fetch_page.\n",
    );
    const catalog = compiles(text);
    expect(catalog.toolset.get("a")!.members.map((m) => m.ref)).toEqual(["a/search", "a/fetch_page"]);
    expect(catalog.toolset.get("a")!.implicit).toBe(false);
  });

  test("an unreachable server, or one with no tools, is noted and keeps its implicit toolset, and the file compiles", () => {
    const { text } = convert(
      two,
      new Map([
        ["a", listing(["search"])],
        ["b", listing([])],
        ["c", { ok: false, reason: "spawn z ENOENT" }],
      ]),
    );
    const catalog = compiles(text);
    expect(text).toContain("  # c: not reached while writing this file: spawn z ENOENT");
    expect(text).toContain("  # b: lists no tools or prompts");
    // They keep their implicit toolsets, so the file serves them once they work.
    expect(catalog.toolsets.map((t) => [t.name, t.implicit])).toEqual([
      ["a", false],
      ["b", true],
      ["c", true],
    ]);
  });

  test("with every server unreachable, the file has no empty toolsets key and compiles", () => {
    const { text } = convert(
      { mcpServers: { a: { command: "x" } } },
      new Map([["a", { ok: false, reason: "initialize timed out after 30000 ms" }]]),
    );
    expect(text).not.toMatch(/^toolsets:/m);
    expect(text).toContain("\n# a: not reached while writing this file: initialize timed out after 30000 ms");
    compiles(text);
  });

  test("two servers listing the same tool name make a file that compiles, the second's renamed with as:", () => {
    const { text } = convert(
      two,
      new Map([
        ["a", listing(["search", "a_search"])],
        ["b", listing(["search", "other"])],
        ["c", listing(["search"])],
      ]),
    );
    const catalog = compiles(text);
    expect(text).toMatch(
      /- \{ tool: b\/search, as: b_search \}\s+# Does search\. \(renamed: another server has search\)/,
    );
    const exposed = (t: string) => catalog.toolset.get(t)!.members.map((m) => m.as ?? m.pattern);
    expect(exposed("a")).toEqual(["search", "a_search"]);
    expect(exposed("b")).toEqual(["b_search", "other"]);
    expect(exposed("c")).toEqual(["c_search"]);
  });

  test("two servers offering the same prompt name: the second is written as {prompt, as} and the file compiles", () => {
    const prompt = (name: string) => ({ name, description: `Prompt ${name}` });
    const live = new Map<string, Listing>([
      ["a", listing(["search"], { prompts: [prompt("summarize")] })],
      ["b", listing(["fetch"], { prompts: [prompt("summarize"), prompt("other")] })],
    ]);
    const { text } = convert({ mcpServers: { a: { command: "x" }, b: { command: "y" } } }, live);
    expect(text).toMatch(/- \{ prompt: b\/summarize, as: b_summarize \}\s+# Prompt summarize \(renamed/);
    const catalog = compiles(text);
    expect(catalog.toolset.get("b")!.members.map((m) => m.ref)).toEqual([
      "b/fetch",
      "prompt:b/summarize",
      "prompt:b/other",
    ]);
  });

  test("with --live, the user is told which names two servers share and how they were renamed", () => {
    const live = new Map<string, Listing>([
      ["a", listing(["search", "fetch", "own"])],
      ["b", listing(["search", "fetch"], { prompts: [{ name: "p" }] })],
      ["c", { ok: false, reason: "spawn z ENOENT" }],
    ]);
    const plan = planInit(
      { mcpServers: { a: { command: "x" }, b: { command: "y" }, c: { command: "z" } } },
      "c.json",
    );
    expect(collisionLines(plan, live, "packs.yaml")).toEqual([
      'b and a both offer 2 tools: b\'s are renamed with "as:" (search as b_search, fetch as b_fetch); edit those, or give upstream b a "prefix:" instead',
      "the tool names of c were not compared with the others (not listed): `toolpacks check --live packs.yaml` reports names two servers share once they run",
    ]);
  });

  test("a tool name toolpacks cannot serve is commented out, prompts and resources are written, and the file compiles", () => {
    const { text } = convert(
      { mcpServers: { a: { command: "x" } } },
      new Map([
        [
          "a",
          listing(["ok", "has space"], {
            prompts: [{ name: "summarize", description: "Summarize a text" }],
            resources: 2,
            templates: 1,
          }),
        ],
      ]),
    );
    const catalog = compiles(text);
    expect(text).toMatch(/# - "a\/has space"\s+# not a valid MCP name/);
    expect(text).toMatch(/prompts:\n\s+- a\/summarize\s+# Summarize a text/);
    expect(text).toContain("# resources: [a/**]");
    expect(catalog.toolset.get("a")!.members.map((m) => m.ref)).toEqual(["a/ok", "prompt:a/summarize"]);
  });
});
