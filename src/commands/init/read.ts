/** @module Reading a client's MCP configuration: JSON with comments, and where its servers map is. */

/** Bad input: unreadable, not JSON, no servers. Exit 1. */
export class InitInputError extends Error {}

/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas, as VS Code settings allow. Comments and dropped
 * commas become spaces so that positions in parse errors still point at the original text.
 */
function stripJsonComments(text: string): string {
  const src = text.replace(/^\uFEFF/, "");
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  /** Index of the next character that is neither white space nor inside a comment. */
  const significant = (from: number): number => {
    let i = from;
    while (i < src.length) {
      if (/\s/.test(src[i]!)) i++;
      else if (src.startsWith("//", i)) {
        const end = src.indexOf("\n", i);
        i = end < 0 ? src.length : end;
      } else if (src.startsWith("/*", i)) {
        const end = src.indexOf("*/", i + 2);
        i = end < 0 ? src.length : end + 2;
      } else return i;
    }
    return i;
  };
  let out = "";
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"' && src[j] !== "\n") j += src[j] === "\\" ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else if (src.startsWith("//", i)) {
      const end = src.indexOf("\n", i);
      const stop = end < 0 ? src.length : end;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === ",") {
      const next = src[significant(i + 1)];
      out += next === "}" || next === "]" ? " " : ",";
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Parses a client file's text; a syntax error says where (line and column). */
export function parseClientConfig(text: string): unknown {
  const stripped = stripJsonComments(text);
  try {
    return JSON.parse(stripped);
  } catch (err) {
    let msg = (err as Error).message;
    const at = /at position (\d+)/.exec(msg);
    if (at && !/line \d+/.test(msg)) {
      const before = stripped.slice(0, Number(at[1]));
      const line = before.split("\n").length;
      const col = before.length - before.lastIndexOf("\n");
      msg = `${msg} (line ${line} column ${col})`;
    }
    throw new InitInputError(`not JSON: ${msg}`);
  }
}

/** A JSON object (not null, not an array): the only shape a client file's maps and entries can have. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Where the server map was found: Claude Desktop / Cursor / Claude Code, VS Code mcp.json, VS Code settings. */
export type ServersKey = "mcpServers" | "servers" | "mcp.servers";

export function findServers(config: unknown): { key: ServersKey; servers: [string, unknown][] } | undefined {
  if (!isObject(config)) return undefined;
  if (isObject(config.mcpServers)) return { key: "mcpServers", servers: Object.entries(config.mcpServers) };
  if (isObject(config.servers)) return { key: "servers", servers: Object.entries(config.servers) };
  if (isObject(config.mcp) && isObject(config.mcp.servers))
    return { key: "mcp.servers", servers: Object.entries(config.mcp.servers) };
  return undefined;
}
