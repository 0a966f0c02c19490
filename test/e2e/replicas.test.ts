/** Two replicas behind a real nginx, round-robin: one session's calls land on both, and survive one dying. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { FIXTURE, httpClient, type Served, serve, tempDir } from "../helpers/proc.js";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
const tmp = tempDir();
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(stops.map((s) => s().catch(() => {})));
  tmp.cleanup();
});

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

async function startNginx(backends: string[]): Promise<{ base: string; log: string; proc: ChildProcess }> {
  const port = await freePort();
  const log = join(tmp.dir, "access.log");
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"])
    execFileSync("mkdir", ["-p", join(tmp.dir, d)]);
  const conf = tmp.file(
    "nginx.conf",
    `
worker_processes 1;
pid ${tmp.dir}/nginx.pid;
error_log ${tmp.dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format up '$request_method $upstream_addr $status';
  access_log ${log} up;
  client_body_temp_path ${tmp.dir}/body;
  proxy_temp_path ${tmp.dir}/proxy;
  fastcgi_temp_path ${tmp.dir}/fastcgi;
  uwsgi_temp_path ${tmp.dir}/uwsgi;
  scgi_temp_path ${tmp.dir}/scgi;
  upstream toolpacks {
${backends.map((b) => `    server ${b} max_fails=1 fail_timeout=30s;`).join("\n")}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://toolpacks;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 1h;
      proxy_next_upstream error timeout http_502;
    }
  }
}
`,
  );
  const proc = spawn(NGINX!, ["-c", conf, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  stops.push(async () => {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
  });
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { base: `http://127.0.0.1:${port}`, log, proc };
}

// nginx comes from Debian's package, which .ci/run installs; on a machine without it this file cannot run.
describe.skipIf(!NGINX && !process.env.CI)("replicas behind nginx", () => {
  test("a session survives its calls landing on a replica that did not open it, and that replica dying", async () => {
    const config = tmp.file(
      "packs.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const env = { TOOLPACKS_SESSION_SECRET: "replica-shared-secret-for-tests" };
    const replicas: Served[] = [await serve([config], env), await serve([config], env)];
    for (const r of replicas) stops.push(() => r.stop());
    const backends = replicas.map((r) => new URL(r.base).host);
    const lb = await startNginx(backends);

    const client = await httpClient(`${lb.base}/mcp`);
    stops.push(() => client.close());
    for (let i = 0; i < 50; i++) {
      const r = await client.callTool({ name: "echo", arguments: { text: `call ${i}` } });
      expect(r.content).toEqual([{ type: "text", text: `call ${i}` }]);
    }
    const posts = readFileSync(lb.log, "utf8")
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("POST"));
    const served = new Set(posts.map((l) => l.split(" ")[1]));
    expect(served).toEqual(new Set(backends));
    const rebuilt = replicas.filter((r) => r.stderr().includes("session rebuilt"));
    expect(rebuilt).toHaveLength(1);
    console.log(
      `replicas: 50 calls, ${posts.length} POSTs through nginx, per replica:`,
      [...served].map((b) => `${b}=${posts.filter((l) => l.includes(b!)).length}`).join(" "),
    );

    expect(await replicas[0]!.stop()).toBe(0);
    for (let i = 50; i < 70; i++) {
      const r = await client.callTool({ name: "echo", arguments: { text: `after ${i}` } });
      expect(r.content).toEqual([{ type: "text", text: `after ${i}` }]);
    }
  });

  test("a forged or altered session id is refused by a replica", async () => {
    const config = tmp.file(
      "packs2.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const a = await serve([config], { TOOLPACKS_SESSION_SECRET: "one-secret-1234" });
    const b = await serve([config], { TOOLPACKS_SESSION_SECRET: "another-secret-5678" });
    stops.push(
      () => a.stop(),
      () => b.stop(),
    );
    const c = await httpClient(a.url());
    stops.push(() => c.close());
    const id = (c.transport as unknown as { sessionId: string }).sessionId;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const other = await fetch(b.url(), {
      method: "POST",
      headers: { ...headers, "mcp-session-id": id },
      body,
    });
    expect(other.status).toBe(404);
    const altered = `${id.slice(0, 10)}${id[10] === "A" ? "B" : "A"}${id.slice(11)}`;
    const forged = await fetch(a.url(), {
      method: "POST",
      headers: { ...headers, "mcp-session-id": altered },
      body,
    });
    expect(forged.status).toBe(404);
  });
});
