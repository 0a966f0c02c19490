/** @module The targets: how each one is started in front of an upstream, and how a session to it is opened. */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { closePool, HttpSession, ModernHttpSession } from "./http-client.js";
import { freePort, start, stop, waitForPort, waitForStderr } from "./proc.js";
import { SdkSession, StdioSession } from "./stdio-client.js";

export const LISTENING = /listening on (http:\/\/[^\s"']+)/;

/** The toolpacks CLI: dist/cli.js, or BENCH_TOOLPACKS_CLI (to try the harness against a stand-in). */
export function cliPath(root) {
  return process.env.BENCH_TOOLPACKS_CLI
    ? resolvePath(process.env.BENCH_TOOLPACKS_CLI)
    : join(root, "dist/cli.js");
}

/** A stdio upstream: the command the proxies run, and the call the load makes. */
export function upstreams(root) {
  return {
    echo: {
      name: "echo",
      command: "node",
      args: [join(root, "test/fixtures/echo-server.mjs")],
      tool: "echo",
      arguments: { text: "hello" },
    },
    everything: {
      name: "everything",
      command: "node",
      args: [join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
      tool: "echo",
      arguments: { message: "hello" },
    },
  };
}

/** The toolpacks config for one upstream: no toolset mentions it, so its tools are exposed as they are. */
function toolpacksConfig(tmp, up) {
  const file = join(tmp, `${up.name}.yaml`);
  const args = up.args.map((a) => JSON.stringify(a)).join(", ");
  writeFileSync(file, `upstreams:\n  ${up.name}:\n    command: ${up.command}\n    args: [${args}]\n`);
  return file;
}

const shellQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The peer proxies live in bench/peers (`npm run bench:install`), apart from the project's own install. */
export const PEERS = "bench/peers/node_modules";
const peer = (root, path) => {
  const file = join(root, PEERS, path);
  return () => (existsSync(file) ? undefined : `not installed (run npm run bench:install)`);
};

function httpHandle(child, url, extra = {}) {
  return {
    child,
    pid: child.pid,
    url,
    sessions: true,
    ...extra,
    newSession: (query = "") => new HttpSession(url + query).initialize(),
    stop: async () => {
      await closePool(url);
      await stop(child);
    },
  };
}

export function targets(root) {
  const cli = cliPath(root);
  const notBuilt = () => (existsSync(cli) ? undefined : `not built (${cli} missing)`);
  return [
    {
      name: "direct",
      label: "direct (SDK client → stdio)",
      kind: "floor",
      note: "SDK Client over stdio; concurrent calls share one client; CPU column is the upstream's",
      async start(_ctx, up) {
        const s = await new SdkSession().connect(up.command, up.args);
        return {
          pid: s.pid,
          cpuOf: "upstream",
          sessions: false,
          newSession: async () => s,
          stop: () => s.close(),
        };
      },
    },
    {
      name: "toolpacks-http",
      label: "toolpacks, Streamable HTTP",
      kind: "toolpacks",
      skip: notBuilt,
      async start(ctx, up) {
        const config = toolpacksConfig(ctx.tmp, up);
        const child = start("node", [cli, "serve", "--port", "0", "--host", "127.0.0.1", config], {
          cwd: root,
        });
        const m = await waitForStderr(child, LISTENING);
        return httpHandle(child, m[1]);
      },
    },
    {
      name: "toolpacks-http-2026",
      label: "toolpacks, Streamable HTTP, MCP 2026-07-28 client",
      kind: "toolpacks",
      skip: notBuilt,
      note: "no session: every request carries its envelope and headers; one context serves them all",
      async start(ctx, up) {
        const config = toolpacksConfig(ctx.tmp, up);
        const child = start("node", [cli, "serve", "--port", "0", "--host", "127.0.0.1", config], {
          cwd: root,
        });
        const m = await waitForStderr(child, LISTENING);
        return {
          ...httpHandle(child, m[1]),
          sessions: false,
          newSession: (query = "") => new ModernHttpSession(m[1] + query).initialize(),
        };
      },
    },
    {
      name: "toolpacks-stdio",
      label: "toolpacks, stdio",
      kind: "toolpacks",
      skip: notBuilt,
      note: "one stdio connection; concurrent calls are in flight on it",
      async start(ctx, up) {
        const config = toolpacksConfig(ctx.tmp, up);
        const child = start("node", [cli, "serve", "--transport", "stdio", config], {
          cwd: root,
          stdout: true,
        });
        const session = await new StdioSession(child).initialize();
        return {
          child,
          pid: child.pid,
          sessions: false,
          newSession: async () => session,
          stop: () => stop(child),
        };
      },
    },
    {
      name: "supergateway",
      label: "supergateway 4.0.0 (--stateful)",
      kind: "peer",
      note: "stateful mode spawns one upstream per session (via sh -c)",
      skip: peer(root, "supergateway/dist/index.js"),
      async start(_ctx, up) {
        const port = await freePort();
        const cmd = [up.command, ...up.args].map(shellQuote).join(" ");
        const bin = join(root, PEERS, "supergateway/dist/index.js");
        const args = [bin, "--stdio", cmd, "--outputTransport", "streamableHttp", "--stateful"];
        args.push("--port", String(port), "--logLevel", "none");
        const child = start("node", args, { cwd: root });
        await waitForPort(child, port);
        return httpHandle(child, `http://127.0.0.1:${port}/mcp`, { perSessionUpstream: true });
      },
    },
    {
      name: "mcp-proxy",
      label: "mcp-proxy 6.7.19 (--no-eventStore --no-modern)",
      kind: "peer",
      note: "one shared upstream; --server stream --no-eventStore --no-modern (lower CPU than its default here)",
      skip: peer(root, "mcp-proxy/dist/bin/mcp-proxy.mjs"),
      async start(_ctx, up) {
        const port = await freePort();
        const bin = join(root, PEERS, "mcp-proxy/dist/bin/mcp-proxy.mjs");
        const args = [
          bin,
          "--port",
          String(port),
          "--host",
          "127.0.0.1",
          "--server",
          "stream",
          "--no-eventStore",
          // The 2026-07-28 request classifier costs CPU on every call; this work speaks 2025 revisions only.
          "--no-modern",
        ];
        const child = start("node", [...args, "--", up.command, ...up.args], { cwd: root });
        await waitForPort(child, port);
        return httpHandle(child, `http://127.0.0.1:${port}/mcp`);
      },
    },
    {
      name: "relay",
      label: "bare relay: node:http to the same stdio upstream (ids rewritten, nothing else)",
      kind: "ceiling",
      echoOnly: true,
      note: "the floor of a proxy of this shape: its two hops (the HTTP socket, the upstream's pipe) and no feature",
      async start(_ctx, up) {
        const child = start("node", [join(root, "bench/lib/bare-relay.js"), up.command, ...up.args], {
          cwd: root,
        });
        const m = await waitForStderr(child, LISTENING);
        return httpHandle(child, m[1]);
      },
    },
    {
      name: "bare",
      label: "bare node:http hop (fixed result)",
      kind: "ceiling",
      echoOnly: true,
      async start() {
        const child = start("node", [join(root, "bench/lib/bare-server.js")], { cwd: root });
        const m = await waitForStderr(child, LISTENING);
        return httpHandle(child, m[1]);
      },
    },
  ];
}
