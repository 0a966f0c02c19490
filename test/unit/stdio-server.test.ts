/** The stdio server transport toolpacks serves its clients with (no zod): framing, bad lines, the line bound. */
import { PassThrough } from "node:stream";
import { describe, expect, test, vi } from "vitest";
import { StdioServerTransport } from "../../src/stdio-server.js";

describe("the stdio server transport", () => {
  test("reads messages split across chunks and skips what is not JSON-RPC, saying so", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const t = new StdioServerTransport(input, output);
    const got: unknown[] = [];
    const errors: string[] = [];
    t.onmessage = (m) => got.push(m);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    input.write('{"jsonrpc":"2.0","id":0,"met');
    input.write('hod":"ping"}\nnot json\n[1]\n\n{"jsonrpc":"2.0","method":"x"}\n');
    await vi.waitFor(() => expect(got).toHaveLength(2));
    expect(got[0]).toEqual({ jsonrpc: "2.0", id: 0, method: "ping" });
    expect(errors).toEqual([
      "stdin: a line that is not JSON was dropped",
      "stdin: a line that is not JSON-RPC 2.0 was dropped",
    ]);
    await t.send({ jsonrpc: "2.0", id: 0, result: {} });
    expect(output.read()?.toString()).toBe('{"jsonrpc":"2.0","id":0,"result":{}}\n');
    let closed = false;
    t.onclose = () => {
      closed = true;
    };
    await t.close();
    expect(closed).toBe(true);
    expect(input.isPaused()).toBe(true);
  });

  test("a line longer than the bound closes the transport instead of growing without end", async () => {
    const input = new PassThrough();
    const t = new StdioServerTransport(input, new PassThrough(), 1024);
    const errors: string[] = [];
    let closed = false;
    t.onerror = (e) => errors.push(e.message);
    t.onclose = () => {
      closed = true;
    };
    await t.start();
    input.write("x".repeat(2048));
    await vi.waitFor(() => expect(closed).toBe(true));
    expect(errors).toEqual(["a message on stdin is longer than 1024 bytes; closing"]);
  });
});
