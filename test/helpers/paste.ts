/**
 * What a person does with a snippet the console offers: paste it into the client it is for. Each kind is read the
 * way its client reads it (JSON configs by their keys, shell commands by a shell's words) and connected with a
 * real client: SDK v1 over HTTP, the SDK's stdio client for the stdio forms, the CLI itself for `toolpacks toolsets`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { httpClient, runToEnd } from "./proc.js";

/** A POSIX shell's words: single quotes, double quotes ($VAR expanded from `env`), backslashes, blanks. */
export function shellWords(text: string, env: Record<string, string> = {}): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      word =
        (word ?? "") + text.slice(i + 1, end).replace(/\$([A-Za-z_]\w*)/g, (_, v: string) => env[v] ?? "");
      i = end;
    } else if (c === "\\") {
      word = (word ?? "") + text[++i];
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

export interface Pasted {
  /** The tool names the client lists. */
  readonly tools: string[];
  /** What it connected to: the URL, or the command line. */
  readonly target: string;
}

async function listed(client: Client): Promise<string[]> {
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

/** Connects as the snippet says and lists its tools. `env` is the client's environment (TOOLPACKS_TOKEN …). */
export async function pasteInto(
  id: string,
  text: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<Pasted> {
  const headers = (h?: Record<string, string>) =>
    h
      ? Object.fromEntries(
          Object.entries(h).map(([k, v]) => [
            k,
            v.replace(/\$\{(?:env|input):([^}]+)\}/g, (_, n) => options.env[n] ?? ""),
          ]),
        )
      : undefined;
  if (id === "claude-desktop" || id === "vscode-stdio") {
    const config = JSON.parse(text) as Record<string, Record<string, { command: string; args: string[] }>>;
    const server = Object.values(config.mcpServers ?? config.servers ?? {})[0]!;
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      cwd: options.cwd,
      env: { ...(process.env as Record<string, string>), TOOLPACKS_LOG_LEVEL: "warn", ...options.env },
      stderr: "pipe",
    });
    const client = new Client({ name: `pasted-${id}`, version: "1.0.0" });
    await client.connect(transport);
    return { tools: await listed(client), target: [server.command, ...server.args].join(" ") };
  }
  if (id === "cursor" || id === "vscode-http") {
    const config = JSON.parse(text) as Record<
      string,
      Record<string, { url: string; headers?: Record<string, string> }>
    >;
    const server = Object.values(config.mcpServers ?? config.servers ?? {})[0]!;
    const client = await httpClient(server.url, {}, headers(server.headers));
    return { tools: await listed(client), target: server.url };
  }
  const words = shellWords(text, options.env);
  if (id === "claude-code" || id === "inspector") {
    const url = words.find((w) => /^https?:\/\//.test(w))!;
    const header = words[words.indexOf("--header") + 1];
    const auth = header && words.includes("--header") ? header.split(/:\s*/) : undefined;
    const client = await httpClient(url, {}, auth ? { [auth[0]!]: auth.slice(1).join(": ") } : undefined);
    return { tools: await listed(client), target: url };
  }
  if (id === "toolsets-cli") {
    const run = await runToEnd(words[0]!, [...words.slice(1), "--json"], {
      cwd: options.cwd,
      env: options.env,
    });
    if (run.code !== 0) throw new Error(`toolsets exited with ${run.code}: ${run.stderr}`);
    return { tools: (JSON.parse(run.stdout) as { tools: string[] }).tools, target: words.join(" ") };
  }
  throw new Error(`no client for snippet ${id}`);
}
