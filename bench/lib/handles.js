/** @module Bytes the model sees for "read a large file, write it elsewhere" with capture on and off. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { halt, serve } from "./example.js";
import { HttpSession } from "./http-client.js";

const bytes = (x) => Buffer.byteLength(JSON.stringify(x));

/**
 * Real server-filesystem behind toolpacks: `files` captures results over 16 KiB, `plain` does not. The model
 * reads what a call returns and writes what it sends: the read result, the write's arguments and its result.
 */
export async function handleFlow(root, tmp) {
  const work = join(tmp, "handles");
  mkdirSync(work, { recursive: true });
  const text = Array.from({ length: 1600 }, (_, i) => `line ${i}: ${"ünïcødé ✓ ".repeat(4)}`).join("\n");
  const file = join(work, "big.txt");
  writeFileSync(file, text);
  const config = join(tmp, "handles.yaml");
  writeFileSync(
    config,
    JSON.stringify({
      upstreams: { fs: { command: "mcp-server-filesystem", args: [work] } },
      toolsets: {
        files: { capture: { over_bytes: 16384 }, tools: ["fs/read_text_file", "fs/write_file"] },
        plain: { default: false, tools: ["fs/read_text_file", "fs/write_file"] },
      },
    }),
  );
  const served = await serve(root, config);
  try {
    const flow = async (query, copy) => {
      const s = await new HttpSession(`${served.url}?${query}`).initialize();
      const read = await s.send("tools/call", { name: "read_text_file", arguments: { path: file } });
      const handle = read.result._meta?.["toolpacks/handle"]?.handle;
      const args = { path: join(work, copy), content: handle ?? read.result.content[0].text };
      const write = await s.send("tools/call", { name: "write_file", arguments: args });
      s.close();
      const same = readFileSync(join(work, copy)).equals(readFileSync(file));
      return {
        read: read.bytes,
        write: bytes(args),
        result: write.bytes,
        total: read.bytes + bytes(args) + write.bytes,
        same,
      };
    };
    const on = await flow("only=files", "copy-on.txt");
    const off = await flow("only=plain", "copy-off.txt");
    return { fileBytes: Buffer.byteLength(text), on, off, ratio: off.total / on.total };
  } finally {
    await halt(served);
  }
}
