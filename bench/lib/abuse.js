/**
 * @module Under abuse: toolpacks-http in front of the echo upstream while one client (another loopback address,
 * 127.0.0.2) floods sessions, sends max-length batches, stalls SSE readers under a progress flood, or makes up
 * credentials; honest clients (127.0.0.1) keep calling. RSS before, at peak and after each abuse, and the honest
 * calls/s during it beside a quiet slice.
 */
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Agent, request } from "undici";
import { closePool, HttpSession } from "./http-client.js";
import { phase } from "./load.js";
import { rssBytes, sleep, start, stop, waitForStderr } from "./proc.js";
import { cliPath, LISTENING } from "./targets.js";

const PROTOCOL = "2025-11-25";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "abuser", version: "1" } },
});

function config(tmp, root, up) {
  const fixture = join(root, "test/fixtures/fixture-server.mjs");
  const args = up.args.map((a) => JSON.stringify(a)).join(", ");
  const file = join(tmp, "abuse.yaml");
  writeFileSync(
    file,
    `limits: { sessions_per_client: 500 }
upstreams:
  echo: { command: ${up.command}, args: [${args}] }
  flood: { command: node, args: [${JSON.stringify(fixture)}, "--tools", "", "--progress-flood"] }
  cred: { command: node, args: [${JSON.stringify(fixture)}, "--tools", "echo"], prefix: c_, header_env: { x-api-key: API_KEY } }
toolsets:
  echo: { tools: [echo/${up.tool}] }
  flood: { default: false, tools: [flood/progress_flood] }
  cred: { default: false, tools: [cred/echo] }
`,
  );
  return file;
}

/** The abusive client: requests from 127.0.0.2, tallying the statuses it gets. */
class Abuser {
  constructor(url) {
    this.url = new URL(url);
    this.agent = new Agent({ localAddress: "127.0.0.2", connections: 64 });
    this.statuses = {};
  }
  async post(body, headers = {}, query = "") {
    const res = await request(this.url.href + query, {
      method: "POST",
      headers: { ...HEADERS, ...headers },
      body,
      dispatcher: this.agent,
    });
    await res.body.dump();
    this.statuses[res.statusCode] = (this.statuses[res.statusCode] ?? 0) + 1;
    return res;
  }
  async session(query = "") {
    const res = await this.post(INIT, {}, query);
    const id = res.headers["mcp-session-id"];
    await this.post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {
      "mcp-session-id": id,
      "mcp-protocol-version": PROTOCOL,
    });
    return id;
  }
  /** Runs `op(k)` in `width` loops (k: the loop's number) until `until()` says stop. */
  async loop(width, until, op) {
    await Promise.all(
      Array.from({ length: width }, async (_, k) => {
        while (!until()) await op(k).catch(() => {});
      }),
    );
  }
  close() {
    return this.agent.close();
  }
}

const ABUSES = {
  "sessions flood": (a, until) => a.loop(8, until, () => a.post(INIT)),
  "max-length batches": async (a, until) => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await a.session());
    const batch = JSON.stringify(
      Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "b" } },
      })),
    );
    // One loop per session: each keeps one full batch in flight (within limits.requests_per_session).
    await a.loop(4, until, (k) =>
      a.post(batch, { "mcp-session-id": ids[k], "mcp-protocol-version": PROTOCOL }),
    );
  },
  "stalled SSE readers": async (a, until) => {
    const sockets = [];
    for (let i = 0; i < 4; i++) {
      const id = await a.session("?flood");
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "progress_flood",
          arguments: { count: 1_000_000, bytes: 4096 },
          _meta: { progressToken: 1 },
        },
      });
      const socket = connect({ host: a.url.hostname, port: Number(a.url.port), localAddress: "127.0.0.2" });
      socket.on("error", () => {});
      socket.pause();
      socket.write(
        `POST ${a.url.pathname}?flood HTTP/1.1\r\nHost: ${a.url.host}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${id}\r\nMcp-Protocol-Version: ${PROTOCOL}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      sockets.push({ socket, id });
    }
    while (!until()) await sleep(100);
    for (const { socket, id } of sockets) {
      socket.destroy();
      const cancel = JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 1 },
      });
      await a
        .post(cancel, { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL }, "?flood")
        .catch(() => {});
    }
  },
  "made-up credentials": (a, until) => {
    let n = 0;
    return a.loop(4, until, async () => {
      const headers = { "x-api-key": `made-up-${n++}` };
      if (n % 2) {
        const res = await request(`${a.url.origin}/toolsets?only=cred`, { headers, dispatcher: a.agent });
        await res.body.dump();
        a.statuses[res.statusCode] = (a.statuses[res.statusCode] ?? 0) + 1;
      } else await a.post(INIT, headers, "?only=cred");
    });
  },
};

/** Honest calls/s at 16 concurrent sessions for `ms`, with the proxy's RSS sampled meanwhile. */
async function honest(sessions, ms, up, pid) {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 50);
  try {
    const r = await phase(sessions, 16, ms, (s) => s.call(up.tool, up.arguments), pid);
    return { rps: r.rps, p99: r.p99, peak: Math.max(peak, rssBytes(pid)) };
  } finally {
    clearInterval(timer);
  }
}

export async function abuseFigures(root, tmp, up, { sliceMs, settleMs }, log) {
  const child = start(
    "node",
    [cliPath(root), "serve", "--port", "0", "--host", "127.0.0.1", config(tmp, root, up)],
    {
      cwd: root,
    },
  );
  const url = (await waitForStderr(child, LISTENING))[1];
  const rows = [];
  try {
    const sessions = [];
    for (let i = 0; i < 16; i++) sessions.push(await new HttpSession(url).initialize());
    await phase(sessions, 16, sliceMs, (s) => s.call(up.tool, up.arguments), child.pid);
    await sleep(settleMs);
    const quiet = await honest(sessions, sliceMs, up, child.pid);
    rows.push({
      abuse: "none",
      before: rssBytes(child.pid),
      ...quiet,
      after: rssBytes(child.pid),
      answers: {},
    });
    for (const [name, run] of Object.entries(ABUSES)) {
      log(`abuse: ${name}`);
      const before = rssBytes(child.pid);
      const abuser = new Abuser(url);
      let done = false;
      const abusing = run(abuser, () => done);
      const during = await honest(sessions, sliceMs, up, child.pid);
      done = true;
      await abusing;
      await abuser.close();
      await sleep(settleMs);
      rows.push({ abuse: name, before, ...during, after: rssBytes(child.pid), answers: abuser.statuses });
    }
    for (const s of sessions) s.close();
  } finally {
    await closePool(url);
    await stop(child);
  }
  return { rows, baseline: rows[0].rps };
}

const mb = (b) => (Number.isFinite(b) ? (b / 1048576).toFixed(1) : "–");
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");

/** The markdown section. */
export function abuseMarkdown(abuse) {
  if (!abuse?.rows) return [];
  const head = [
    "abuse (from 127.0.0.2)",
    "RSS before MB",
    "peak MB",
    "after MB",
    "honest calls/s (c16)",
    "of quiet",
    "honest p99 ms",
    "abuser got",
  ];
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [
    "## Under abuse",
    "",
    "toolpacks-http, echo upstream, default limits but `sessions_per_client: 500`; 16 honest sessions (127.0.0.1) call " +
      "at 16 concurrent while one client (127.0.0.2) abuses for the same slice.",
    "",
    line(head),
    line(head.map(() => "---")),
    ...abuse.rows.map((r) =>
      line([
        r.abuse,
        mb(r.before),
        mb(r.peak),
        mb(r.after),
        int(r.rps),
        `${((r.rps / abuse.baseline) * 100).toFixed(0)} %`,
        Number.isFinite(r.p99) ? r.p99.toFixed(1) : "–",
        Object.entries(r.answers)
          .map(([s, n]) => `${n}×${s}`)
          .join(", ") || "–",
      ]),
    ),
    "",
  ];
}
