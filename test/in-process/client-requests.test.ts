/**
 * Requests an upstream sends to a client (sampling, elicitation, roots) wait for that client's answer in the
 * proxy; a client that never answers must not make the proxy hold an unbounded number of them (MAX_WAITING per
 * session, SPEC §7.6). The real core through its HTTP edge, an SDK server in process as the upstream.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { createToolpacks, type Toolpacks } from "../../src/index.js";
import { MAX_WAITING } from "../../src/proxy/session.js";
import { catalogOf, post, V2025 } from "../helpers/in-process.js";

/**
 * An upstream whose `flood {n}` asks its client to sample n times at once, during the call, and answers with
 * the first refusal it gets (or "all answered").
 */
function floodingServer(): Server {
  const server = new Server({ name: "flood", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "flood", inputSchema: { type: "object", properties: { n: { type: "number" } } } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const n = Number((request.params.arguments as { n?: number } | undefined)?.n ?? 1);
    const asks = Array.from({ length: n }, () =>
      extra.sendRequest(
        { method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
        CreateMessageResultSchema,
        // Long enough for the whole test; without the bound every ask times out and the test fails on that.
        { timeout: 10_000 },
      ),
    );
    const first = await Promise.race([
      Promise.all(asks).then(() => "all answered"),
      ...asks.map((a) =>
        a.then(
          () => new Promise<string>(() => {}),
          (err: Error) => `refused: ${err.message}`,
        ),
      ),
    ]);
    for (const a of asks) a.catch(() => {});
    return { content: [{ type: "text", text: first }] };
  });
  return server;
}

const open: Toolpacks[] = [];
afterEach(async () => {
  for (const tp of open.splice(0)) await tp.close();
});

function served(): Toolpacks {
  const tp = createToolpacks(
    catalogOf("upstreams:\n  main: { command: in-process, isolation: per-session }\n"),
    {
      logger: false,
      upstreamTransport: () => {
        const [ours, theirs] = InMemoryTransport.createLinkedPair();
        void floodingServer().connect(theirs);
        return ours;
      },
    },
  );
  open.push(tp);
  return tp;
}

/** A 2025 session whose client can sample (and never answers unless told to). */
async function samplingSession(tp: Toolpacks): Promise<string> {
  const r = await post(tp, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: V2025,
      capabilities: { sampling: {} },
      clientInfo: { name: "never-answers", version: "1" },
    },
  });
  const id = r.headers.get("mcp-session-id");
  if (!id) throw new Error(`initialize refused: ${r.status} ${JSON.stringify(r.answer)}`);
  await post(tp, { jsonrpc: "2.0", method: "notifications/initialized" }, { session: id });
  return id;
}

const flood = (tp: Toolpacks, session: string, n: number, id: number) =>
  post(
    tp,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name: "flood", arguments: { n } } },
    { session },
  );

/** The answer to our request `id` (the client's own requests number from 1 too). */
const answerTo = (messages: Record<string, unknown>[], id: number) =>
  messages.find((m) => m.id === id && m.method === undefined);

const asked = (messages: Record<string, unknown>[]) =>
  messages.filter((m) => m.method === "sampling/createMessage");

describe("requests waiting for one client's answers", () => {
  test("requests waiting for one client's answers are bounded: past the bound the upstream is refused at once, and an answer makes room", async () => {
    expect(MAX_WAITING).toBe(100);
    const tp = served();
    const session = await samplingSession(tp);

    const r = await flood(tp, session, MAX_WAITING + 5, 1);
    expect(r.status).toBe(200);
    // The client got exactly the bound of them; the rest never left the proxy, and the upstream was told so.
    const waiting = asked(r.messages);
    expect(waiting).toHaveLength(MAX_WAITING);
    expect(answerTo(r.messages, 1)).toMatchObject({
      result: {
        content: [
          {
            text: expect.stringMatching(
              new RegExp(`refused: .*already has ${MAX_WAITING} requests of this session waiting`),
            ),
          },
        ],
      },
    });

    // Still full: one more is refused without reaching the client.
    const again = await flood(tp, session, 1, 2);
    expect(asked(again.messages)).toHaveLength(0);
    expect(JSON.stringify(answerTo(again.messages, 2))).toMatch(
      /refused: .*already has 100 requests of this session waiting/,
    );

    // The client answers one: room for exactly one more.
    const answer = await post(
      tp,
      {
        jsonrpc: "2.0",
        id: waiting[0]!.id,
        result: { role: "assistant", content: { type: "text", text: "hi" }, model: "m" },
      },
      { session },
    );
    expect(answer.status).toBe(202);
    const after = await flood(tp, session, 2, 3);
    expect(asked(after.messages)).toHaveLength(1);
    expect(JSON.stringify(answerTo(after.messages, 3))).toMatch(
      /refused: .*already has 100 requests of this session waiting/,
    );
  });
});
