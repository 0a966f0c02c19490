/**
 * What one client may make the proxy hold, in process (SPEC §7.6): 2026-07-28 listen streams and parked calls
 * count per client across all its contexts and in total; a context that holds a parked call or a listen stream
 * is never evicted by other clients' traffic; near the open-file limit nothing new that holds descriptors is
 * taken; an isolated instance's slot is reserved for the instance a session really uses. The real core behind
 * its HTTP edge (Web Requests, no socket), real SDK servers in process as upstreams.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { FdGauge, Toolpacks } from "../../src/index.js";
import {
  call2025,
  type InProcess,
  initialize,
  inProcess,
  modern,
  post,
  V2025,
  V2026,
} from "../helpers/in-process.js";

const TOOLSETS = ["t1", "t2", "t3", "t4", "t5", "t6"];
const MANY = `
upstreams:
  main: { command: in-process }
toolsets:
${TOOLSETS.map((t) => `  ${t}: { tools: [main/echo, main/ask] }`).join("\n")}
`;

const open: InProcess[] = [];
const streams: Listening[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const tp of open.splice(0)) await tp.close();
});
function served(yaml: string, options = {}, env: Record<string, string> = {}): InProcess {
  const tp = inProcess(yaml, options, env);
  open.push(tp);
  return tp;
}

interface Listening {
  readonly status: number;
  readonly headers: Headers;
  /** The first message: the acknowledgement, or the refusal. */
  readonly first: { method?: string; error?: { code: number; message: string; data?: unknown } };
  /** The stream ended (its result came) without the client closing it. */
  ended(): boolean;
  close(): void;
}

/** Opens a `subscriptions/listen` stream and reads it up to its acknowledgement (or takes the refusal). */
async function listen(
  tp: Toolpacks,
  query: string,
  address: string,
  headers: Record<string, string> = {},
): Promise<Listening> {
  const abort = new AbortController();
  const res = await tp.request(
    new Request(`http://127.0.0.1/mcp?${query}`, {
      method: "POST",
      signal: abort.signal,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V2026,
        "mcp-method": "subscriptions/listen",
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "subscriptions/listen",
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "listener", version: "1" },
          },
        },
      }),
    }),
    { address },
  );
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const first = (await res.json()) as Listening["first"];
    return { status: res.status, headers: res.headers, first, ended: () => true, close: () => {} };
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let ended = false;
  const messages: Record<string, unknown>[] = [];
  const pump = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("data:")) {
          const m = JSON.parse(line.slice(5)) as Record<string, unknown>;
          messages.push(m);
          if ("result" in m || "error" in m) ended = true;
        }
        nl = buffered.indexOf("\n");
      }
    }
  };
  const pumping = pump().catch(() => {});
  await until(() => messages.length > 0, "the listen stream's first message");
  const stream: Listening = {
    status: res.status,
    headers: res.headers,
    first: messages[0] as Listening["first"],
    ended: () => ended,
    close: () => {
      abort.abort();
      void pumping;
    },
  };
  streams.push(stream);
  return stream;
}

const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!ok()) throw new Error(`never: ${what}`);
};

const acknowledged = (l: Listening) => l.first.method === "notifications/subscriptions/acknowledged";

describe("listen streams: per client across its contexts, and in total", () => {
  test("one client's listen streams on different selections are bounded together; another client still listens until the total", async () => {
    // Before, only 64 per context bounded them: one client opened any number across selections (4,073 of 4,096 fds).
    const tp = served(MANY, { limits: { listenStreamsPerClient: 3, listenStreams: 5 } });
    const a = [];
    for (const t of ["t1", "t2", "t3"]) a.push(await listen(tp.toolpacks, `only=${t}`, "10.0.0.1"));
    expect(a.every(acknowledged)).toBe(true);
    const refused = await listen(tp.toolpacks, "only=t4", "10.0.0.1");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.first.error?.code).toBe(-32603);
    expect(refused.first.error?.message).toMatch(
      /^Subscription limit reached: .*limits\.listen_streams_per_client: 3/,
    );
    const b = [
      await listen(tp.toolpacks, "only=t1", "10.0.0.2"),
      await listen(tp.toolpacks, "only=t5", "10.0.0.2"),
    ];
    expect(b.every(acknowledged)).toBe(true);
    const full = await listen(tp.toolpacks, "only=t6", "10.0.0.3");
    expect(full.status).toBe(503);
    expect(full.first.error?.message).toMatch(/^Subscription limit reached: .*limits\.listen_streams: 5/);
    // A stream the client closes gives its place back.
    a[0]!.close();
    let again: Listening | undefined;
    await until(() => true, "");
    for (let i = 0; i < 200; i++) {
      again = await listen(tp.toolpacks, "only=t4", "10.0.0.1");
      if (acknowledged(again)) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(acknowledged(again!)).toBe(true);
  });
});

describe("parked calls: per client and in total", () => {
  // Each context its own instance (per-session, with a credential value: a context, not a request's own session),
  // so the sampling request the upstream sends during `ask` is tied to the call that caused it.
  const OWN = `
upstreams:
  main: { command: in-process, isolation: per-session, header_env: { x-api-key: API_KEY }, max_instances: 4 }
toolsets:
${TOOLSETS.map((t) => `  ${t}: { tools: [main/echo, main/ask] }`).join("\n")}
`;
  const SAMPLING = { sampling: {} };
  const key = { "x-api-key": "k" };
  const ask = (tp: Toolpacks, address: string, query = "only=t1") =>
    modern(
      tp,
      "tools/call",
      { name: "ask", arguments: {} },
      { address, query, capabilities: SAMPLING, headers: key },
    );
  const retry = (
    tp: Toolpacks,
    address: string,
    query: string,
    state: { requestState: string; inputRequests: Record<string, unknown> },
    text: string,
  ) =>
    modern(
      tp,
      "tools/call",
      {
        name: "ask",
        arguments: {},
        requestState: state.requestState,
        inputResponses: Object.fromEntries(
          Object.keys(state.inputRequests).map((k) => [
            k,
            { role: "assistant", model: "m", content: { type: "text", text } },
          ]),
        ),
      },
      { address, query, capabilities: SAMPLING, headers: key },
    );

  test("a client's calls waiting for its retry are bounded; past it the round ends in the error table's refusal, another client still parks", async () => {
    // Before, 1,024 per replica bounded them: one anonymous client's parked calls held every user's connections.
    const tp = served(OWN, { limits: { parkedCallsPerClient: 2 } });
    const parked = [await ask(tp.toolpacks, "10.0.0.1"), await ask(tp.toolpacks, "10.0.0.1", "only=t2")];
    for (const p of parked) expect(p.answer?.result).toMatchObject({ resultType: "input_required" });
    const third = await ask(tp.toolpacks, "10.0.0.1", "only=t3");
    expect(third.answer?.error).toMatchObject({
      code: -32603,
      data: { limit: "parked_calls_per_client", max: 2 },
    });
    expect(third.answer?.error?.message).toMatch(/limits\.parked_calls_per_client/);
    expect((await ask(tp.toolpacks, "10.0.0.2")).answer?.result).toMatchObject({
      resultType: "input_required",
    });
    // A retry ends a parked call: its client may park another.
    const first = parked[0]!.answer!.result! as {
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    const retried = await retry(tp.toolpacks, "10.0.0.1", "only=t1", first, "hello");
    expect(retried.answer?.result).toMatchObject({ resultType: "complete" });
    expect((await ask(tp.toolpacks, "10.0.0.1", "only=t3")).answer?.result).toMatchObject({
      resultType: "input_required",
    });
  });

  test("a context holding a parked call or a listen stream is never evicted by another client's requests on many selections", async () => {
    // Before (#25), ~1,100 cheap anonymous requests on distinct selections evicted the context of another user's
    // parked call: its retry got "Invalid or expired requestState". Here the bound is 4 contexts, and the holder
    // has 3 (more than its fair share of 2): only what they hold keeps them.
    const tp = served(OWN, { limits: { contexts: 4, contextsPerClient: 4 } });
    const first = await ask(tp.toolpacks, "10.0.0.1", "only=t1");
    const second = await ask(tp.toolpacks, "10.0.0.1", "only=t3");
    for (const p of [first, second]) expect(p.answer?.result).toMatchObject({ resultType: "input_required" });
    const stream = await listen(tp.toolpacks, "only=t2", "10.0.0.1", key);
    expect(acknowledged(stream)).toBe(true);
    const selections: string[] = [];
    for (let i = 0; i < TOOLSETS.length; i++)
      for (let j = i + 1; j < TOOLSETS.length; j++) selections.push(`only=${TOOLSETS[i]},${TOOLSETS[j]}`);
    const statuses = new Set<number>();
    for (const query of [...selections, ...TOOLSETS.map((t) => `only=${t}`), ...selections]) {
      const r = await modern(tp.toolpacks, "tools/list", {}, { address: "10.0.1.1", query, headers: key });
      statuses.add(r.answer?.result?.tools ? 200 : r.status);
    }
    // Every request of the other client was served (its own idle contexts made the room) …
    expect([...statuses]).toEqual([200]);
    // … and the parked calls and the listen stream are where they were.
    expect(stream.ended()).toBe(false);
    for (const [query, parked, text] of [
      ["only=t1", first, "still here"],
      ["only=t3", second, "me too"],
    ] as const) {
      const state = parked.answer?.result as { requestState: string; inputRequests: Record<string, unknown> };
      const retried = await retry(tp.toolpacks, "10.0.0.1", query, state, text);
      expect(retried.answer?.error).toBeUndefined();
      expect(retried.answer?.result).toMatchObject({ resultType: "complete" });
      expect(JSON.stringify(retried.answer?.result)).toContain(text);
    }
  });
});

describe("2026-07-28 contexts: per client and in total", () => {
  // Each context its own instance (per-session, with a credential value), so a context made anew shows as a new
  // upstream instance: how many there were is how many contexts were made.
  const OWN = `
upstreams:
  main: { command: in-process, isolation: per-session, header_env: { x-api-key: API_KEY }, max_instances: 16 }
toolsets:
${TOOLSETS.map((t) => `  ${t}: { tools: [main/echo, main/slow] }`).join("\n")}
limits: { instances_per_minute: 100 }
`;
  const as = (address: string) => ({ address, headers: { "x-api-key": `key-${address}` } });
  const list = (tp: Toolpacks, address: string, query: string) =>
    modern(tp, "tools/list", {}, { ...as(address), query });
  const slow = (tp: Toolpacks, address: string, query: string) =>
    modern(tp, "tools/call", { name: "slow", arguments: {} }, { ...as(address), query });
  const made = (tp: InProcess) => tp.servers.get("main")?.length ?? 0;

  test("a client past limits.contexts_per_client gives up its own least recently used idle context", async () => {
    const tp = served(OWN, { limits: { contextsPerClient: 2 } });
    for (const q of ["only=t1", "only=t2", "only=t1"])
      expect((await list(tp.toolpacks, "10.0.0.1", q)).status).toBe(200);
    expect(made(tp)).toBe(2);
    // A third selection: t2 is the least recently used of the client's two, and goes.
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t3")).status).toBe(200);
    expect(made(tp)).toBe(3);
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t1")).status).toBe(200);
    expect(made(tp)).toBe(3);
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t2")).status).toBe(200);
    expect(made(tp)).toBe(4);
  });

  test("a client past limits.contexts_per_client with none idle gets 503 naming it; another client does not", async () => {
    const tp = served(OWN, { limits: { contextsPerClient: 2 } });
    const calls = [slow(tp.toolpacks, "10.0.0.1", "only=t1"), slow(tp.toolpacks, "10.0.0.1", "only=t2")];
    await until(() => tp.held() === 2, "two slow calls in flight");
    const refused = await list(tp.toolpacks, "10.0.0.1", "only=t3");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.answer?.error?.message).toMatch(/limits\.contexts_per_client: 2/);
    expect((await list(tp.toolpacks, "10.0.0.2", "only=t3")).status).toBe(200);
    tp.release();
    for (const c of await Promise.all(calls))
      expect(c.answer?.result).toMatchObject({ content: [{ text: "slow done" }] });
    // Their requests answered, the client's contexts are idle again: one makes room.
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t3")).status).toBe(200);
  });

  test("past limits.contexts with no context that may go, a newcomer gets 503 naming limits.contexts", async () => {
    const tp = served(OWN, { limits: { contexts: 2, contextsPerClient: 10 } });
    const calls = [slow(tp.toolpacks, "10.0.0.1", "only=t1"), slow(tp.toolpacks, "10.0.0.1", "only=t2")];
    await until(() => tp.held() === 2, "two slow calls in flight");
    const refused = await list(tp.toolpacks, "10.0.0.2", "only=t3");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.answer?.error?.message).toMatch(/limits\.contexts: 2\)/);
    tp.release();
    await Promise.all(calls);
    // Client 1 holds both (over its fair share of 1) and they are idle now: one gives way.
    expect((await list(tp.toolpacks, "10.0.0.2", "only=t3")).status).toBe(200);
  });

  test("a context with a request in flight is never evicted by another client's requests on many selections", async () => {
    // The holder has 3 of 4 contexts (over its fair share of 2) and the busy one is its least recently used:
    // only the request in flight keeps it.
    const tp = served(OWN, { limits: { contexts: 4, contextsPerClient: 4 } });
    const inFlight = slow(tp.toolpacks, "10.0.0.1", "only=t1");
    await until(() => tp.held() === 1, "the slow call in flight");
    for (const q of ["only=t2", "only=t3"])
      expect((await list(tp.toolpacks, "10.0.0.1", q)).status).toBe(200);
    const selections: string[] = [];
    for (let i = 0; i < TOOLSETS.length; i++)
      for (let j = i + 1; j < TOOLSETS.length; j++) selections.push(`only=${TOOLSETS[i]},${TOOLSETS[j]}`);
    const statuses = new Set<number>();
    for (const query of [...selections, ...TOOLSETS.map((t) => `only=${t}`)]) {
      const r = await list(tp.toolpacks, "10.0.1.1", query);
      statuses.add(r.answer?.result?.tools ? 200 : r.status);
    }
    expect([...statuses]).toEqual([200]);
    expect(made(tp)).toBe(3 + selections.length + TOOLSETS.length);
    // The call in flight still answers on its context …
    expect(tp.held()).toBe(1);
    tp.release();
    const answer = await inFlight;
    expect(answer.answer?.error).toBeUndefined();
    expect(answer.answer?.result).toMatchObject({ content: [{ text: "slow done" }] });
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t1")).status).toBe(200);
    expect(made(tp)).toBe(3 + selections.length + TOOLSETS.length);
    // … while contexts were pushed out, the holder's idle ones among them (t2's is made anew).
    expect((await list(tp.toolpacks, "10.0.0.1", "only=t2")).status).toBe(200);
    expect(made(tp)).toBe(4 + selections.length + TOOLSETS.length);
  });
});

describe("file-descriptor headroom", () => {
  const BASIC = `
upstreams:
  main: { command: in-process }
toolsets:
  main: { tools: [main/echo, main/ask] }
  extra: { tools: [main/echo] }
`;

  test("near the open-file limit new sessions, contexts and listen streams get 503 with Retry-After; what is open keeps being served", async () => {
    // Before, nothing looked: the process took new streams until accept() and every upstream spawn failed (EMFILE).
    let openNow = 100;
    const fds: FdGauge = { limit: 1000, open: () => openNow, everyMs: 0 };
    const tp = served(BASIC, { fds });
    const session = await initialize(tp.toolpacks);
    expect((await modern(tp.toolpacks, "tools/list", {}, { query: "only=main" })).status).toBe(200);
    openNow = 960; // 40 free, under the headroom of max(64, 5 %)
    const init = await post(tp.toolpacks, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: V2025, capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    expect(init.status).toBe(503);
    expect(init.headers.get("retry-after")).toBe("5");
    expect(init.answer?.error?.message).toMatch(/near its limit of open files \(960 of 1000 open\)/);
    const context = await modern(tp.toolpacks, "tools/list", {}, { query: "only=extra" });
    expect(context.status).toBe(503);
    expect(context.answer?.error?.message).toMatch(/near its limit of open files/);
    const stream = await listen(tp.toolpacks, "only=main", "127.0.0.1");
    expect(stream.status).toBe(503);
    expect(stream.first.error?.message).toMatch(/near its limit of open files/);
    // What is open is served: the session, and the context that exists.
    expect((await call2025(tp.toolpacks, session, "echo", { text: "still" })).status).toBe(200);
    expect((await modern(tp.toolpacks, "tools/list", {}, { query: "only=main" })).status).toBe(200);
    openNow = 100;
    await initialize(tp.toolpacks);
    expect((await modern(tp.toolpacks, "tools/list", {}, { query: "only=extra" })).status).toBe(200);
  });
});

describe("isolated instance slots", () => {
  const KEYED = `
upstreams:
  main: { command: in-process, header_env: { x-api-key: API_KEY }, max_instances: 2 }
toolsets:
  a: { tools: [main/echo] }
  b: { tools: [main/echo, main/add] }
  c: { tools: [main/add] }
limits: { instances_per_minute: 3, sessions_per_client: 100 }
`;

  test("past max_instances a newcomer takes an idle instance of the client holding the most; a client with one keeps it", async () => {
    // Before (#25), the least recently used idle instance went whoever held it: the light client's, here.
    const tp = served(`
upstreams:
  main: { command: in-process, header_env: { x-api-key: API_KEY }, max_instances: 4 }
toolsets:
  a: { tools: [main/echo] }
limits: { instances_per_minute: 100 }
`);
    const light = { address: "10.0.0.2", headers: { "x-api-key": "light" } };
    const lightSession = await initialize(tp.toolpacks, light);
    const heavy = [];
    for (const key of ["h1", "h2", "h3"]) {
      const ask = { address: "10.0.0.1", headers: { "x-api-key": key } };
      heavy.push({ ask, id: await initialize(tp.toolpacks, ask) });
    }
    expect(tp.servers.get("main")?.length).toBe(4);
    const newcomer = { address: "10.0.0.3", headers: { "x-api-key": "new" } };
    const fresh = await initialize(tp.toolpacks, newcomer);
    expect((await call2025(tp.toolpacks, fresh, "echo", { text: "n" }, newcomer)).status).toBe(200);
    // 4 slots over 3 clients: a fair share of 1. The heavy client (3) gives up its least recently used one …
    const statuses = [];
    for (const h of heavy)
      statuses.push((await call2025(tp.toolpacks, h.id, "echo", { text: "h" }, h.ask)).status);
    expect(statuses).toEqual([404, 200, 200]);
    // … and the client with one, used least recently of all, keeps it.
    const kept = await call2025(tp.toolpacks, lightSession, "echo", { text: "still" }, light);
    expect(kept.answer?.result).toMatchObject({ content: [{ text: "still" }] });
  });

  test("a slot is reserved for the instance the session really uses: many sessions on one running instance start nothing, spend no start rate and end nobody's instance", async () => {
    // Before (#25), each new session "needed an instance": it ended another user's idle instance and spent the
    // start-rate bucket (70 sessions on one running instance got 10 × 429).
    const tp = served(KEYED);
    const bob = await initialize(tp.toolpacks, { address: "10.0.0.2", headers: { "x-api-key": "beta" } });
    const alice = { address: "10.0.0.1", headers: { "x-api-key": "alpha" } };
    const sessions = [];
    for (let i = 0; i < 20; i++) sessions.push(await initialize(tp.toolpacks, alice));
    for (const s of sessions.slice(-3))
      expect((await call2025(tp.toolpacks, s, "echo", { text: "a" }, alice)).answer?.result).toMatchObject({
        content: [{ text: "a" }],
      });
    for (const query of ["", "only=a", "only=b", "only=c"]) {
      const r = await modern(tp.toolpacks, "tools/list", {}, { ...alice, query });
      expect(r.answer?.result?.tools).toBeDefined();
    }
    // One instance per credential value, however many sessions and contexts use it.
    expect(tp.servers.get("main")?.length).toBe(2);
    const mine = await call2025(
      tp.toolpacks,
      bob,
      "echo",
      { text: "b" },
      {
        address: "10.0.0.2",
        headers: { "x-api-key": "beta" },
      },
    );
    expect(mine.status).toBe(200);
  });
  test("a per-user upstream's slot is reserved for the principal's own instance: many sessions of one principal start nothing, spend no start rate and end nobody's instance", async () => {
    // Before (#24/#25), the slot was reserved without the principal (the instance key of a per-user upstream is
    // its identity): each new session of alice "needed an instance", ended bob's or carol's idle one and spent
    // alice's start rate. The header_env test above cannot show it: credential values were always passed.
    const ENV = {
      ALICE: "alice-token-for-tests",
      BOB: "bob-token-for-tests",
      CAROL: "carol-token-for-tests",
    };
    const tp = served(
      `
auth:
  tokens:
    - { token: "\${ALICE}", subject: alice }
    - { token: "\${BOB}", subject: bob }
    - { token: "\${CAROL}", subject: carol }
upstreams:
  main: { url: "http://in-process.invalid/mcp", oauth: { mode: per-user }, max_instances: 3 }
toolsets:
  a: { tools: [main/echo] }
  b: { tools: [main/echo, main/add] }
  c: { tools: [main/add] }
limits: { instances_per_minute: 3, sessions_per_client: 100 }
`,
      {},
      ENV,
    );
    const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const bob = await initialize(tp.toolpacks, as(ENV.BOB));
    const carol = await initialize(tp.toolpacks, as(ENV.CAROL));
    const alice = as(ENV.ALICE);
    const sessions = [];
    for (let i = 0; i < 12; i++) sessions.push(await initialize(tp.toolpacks, alice));
    for (const s of sessions.slice(-3))
      expect((await call2025(tp.toolpacks, s, "echo", { text: "a" }, alice)).answer?.result).toMatchObject({
        content: [{ text: "a" }],
      });
    for (const query of ["", "only=a", "only=b", "only=c"]) {
      const r = await modern(tp.toolpacks, "tools/list", {}, { ...alice, query });
      expect(r.answer?.error).toBeUndefined();
      expect(r.answer?.result?.tools).toBeDefined();
    }
    // One instance per principal, however many sessions and contexts use it.
    expect(tp.servers.get("main")?.length).toBe(3);
    for (const [session, token] of [
      [bob, ENV.BOB],
      [carol, ENV.CAROL],
    ] as const) {
      const r = await call2025(tp.toolpacks, session, "echo", { text: "mine" }, as(token));
      expect(r.answer?.result).toMatchObject({ content: [{ text: "mine" }] });
    }
  });
});
