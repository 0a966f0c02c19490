/** A real nginx in front of toolpacks replicas, round-robin, on a free loopback port; its access log names the backend. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis.js";
import { missingService } from "./skip.js";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
/** Why the tests behind a real nginx cannot run on this machine; undefined when they can. */
export const NO_NGINX = missingService(NGINX, "apt-get install -y nginx-light", "nginx");

export interface Nginx {
  readonly base: string;
  /** The access log: one line per request, `METHOD BACKEND STATUS`. */
  readonly log: string;
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts nginx (debian's) balancing over `backends` (host:port) and waits until it answers /healthz. */
export async function startNginx(backends: string[]): Promise<Nginx> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-nginx-"));
  const log = join(dir, "access.log");
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) execFileSync("mkdir", ["-p", join(dir, d)]);
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format up '$request_method $upstream_addr $status';
  access_log ${log} up;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
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
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { base: `http://127.0.0.1:${port}`, log, proc, stop };
}
