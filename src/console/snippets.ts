/**
 * @module What to paste into each client for a selection: its URL over HTTP, or toolpacks over stdio with the
 * same selection in `--toolsets`. Pure text: the browser console shows it, the tests paste it into real clients.
 * No token is ever written into a snippet: where one is needed, it is read from the client's environment or
 * asked for by the client.
 */

/** How this server's CLI runs on its own machine, for the stdio forms: absolute paths, so any cwd works. */
export interface StdioLaunch {
  /** The Node binary (absolute). */
  readonly command: string;
  /** Arguments before `serve` (the CLI's absolute path). */
  readonly args: readonly string[];
  /** The config files it serves (absolute). */
  readonly configs: readonly string[];
  /** Environment variables the config reads (`${VAR}`): a stdio process started by a client needs them too. */
  readonly env: readonly string[];
  /** `serve --no-toolsets-tool` is on: the stdio form says so too, or it would list one tool more. */
  readonly noToolsetsTool: boolean;
}

export interface SnippetInput {
  /** The server's key in the clients' configs. */
  readonly name: string;
  /** The selection's absolute HTTP URL (`http://127.0.0.1:4040/mcp?notes`). */
  readonly url: string;
  /** The same selection in URL spelling for stdio and the CLI, read without the HTTP default selection. */
  readonly plainQuery: string;
  /** `auth:` asks for a bearer token. */
  readonly token: boolean;
  /** Absent when the server cannot say how to start it (embedded in another program). */
  readonly stdio?: StdioLaunch | undefined;
  /** Some selected toolset has `requires:`: a stdio process has no token, so it would not get it. */
  readonly gated?: boolean;
}

type SnippetId =
  | "claude-desktop"
  | "claude-code"
  | "cursor"
  | "vscode-http"
  | "vscode-stdio"
  | "inspector"
  | "toolsets-cli";

export interface Snippet {
  readonly id: SnippetId;
  readonly title: string;
  /** Where it goes. */
  readonly where: string;
  readonly kind: "json" | "shell";
  readonly transport: "http" | "stdio" | "terminal";
  readonly text: string;
  readonly note?: string;
}

/** The variable a client reads the bearer token from: never the token itself. */
const TOKEN_VARIABLE = "TOOLPACKS_TOKEN";
const BEARER_SHELL = `Authorization: Bearer $${TOKEN_VARIABLE}`;

/** A word for a POSIX shell: as it is when it is plainly safe, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.,:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const shell = (words: readonly string[]) => words.map(shellWord).join(" ");
const json = (value: unknown) => JSON.stringify(value, null, 2);

/** `serve --transport stdio [--toolsets Q] FILES`: what a client starts for the stdio forms. */
export function stdioArgs(stdio: StdioLaunch, plainQuery: string): string[] {
  return [
    ...stdio.args,
    "serve",
    "--transport",
    "stdio",
    ...(plainQuery ? ["--toolsets", plainQuery] : []),
    ...(stdio.noToolsetsTool ? ["--no-toolsets-tool"] : []),
    ...stdio.configs,
  ];
}

export function clientSnippets(input: SnippetInput): Snippet[] {
  const { name, url, token, stdio } = input;
  const out: Snippet[] = [];
  const stdioNote = [
    input.gated
      ? "A stdio process has no token: toolsets with requires: stay off unless serve --as gives claims."
      : "",
    stdio?.env.length ? `It reads ${stdio.env.join(", ")} from its environment: fill them in.` : "",
  ]
    .filter(Boolean)
    .join(" ");
  if (stdio) {
    const env = Object.fromEntries(stdio.env.map((v) => [v, `<${v}>`]));
    out.push({
      id: "claude-desktop",
      title: "Claude Desktop",
      where: "claude_desktop_config.json (Settings → Developer → Edit Config)",
      kind: "json",
      transport: "stdio",
      text: json({
        mcpServers: {
          [name]: {
            command: stdio.command,
            args: stdioArgs(stdio, input.plainQuery),
            ...(stdio.env.length ? { env } : {}),
          },
        },
      }),
      ...(stdioNote ? { note: stdioNote } : {}),
    });
  }
  out.push({
    id: "claude-code",
    title: "Claude Code",
    where: "a terminal",
    kind: "shell",
    transport: "http",
    text: [
      shell(["claude", "mcp", "add", "--transport", "http", name, url]),
      ...(token ? [`--header "${BEARER_SHELL}"`] : []),
    ].join(" "),
    ...(token ? { note: `Set ${TOKEN_VARIABLE} to your token first.` } : {}),
  });
  const headers = (value: string) => (token ? { headers: { Authorization: `Bearer ${value}` } } : {});
  out.push({
    id: "cursor",
    title: "Cursor",
    where: "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    kind: "json",
    transport: "http",
    text: json({ mcpServers: { [name]: { url, ...headers(`\${env:${TOKEN_VARIABLE}}`) } } }),
    ...(token ? { note: `Cursor reads ${TOKEN_VARIABLE} from its environment.` } : {}),
  });
  out.push({
    id: "vscode-http",
    title: "VS Code (HTTP)",
    where: ".vscode/mcp.json",
    kind: "json",
    transport: "http",
    text: json({
      ...(token
        ? {
            inputs: [
              { type: "promptString", id: "toolpacks-token", description: "toolpacks token", password: true },
            ],
          }
        : {}),
      servers: { [name]: { type: "http", url, ...headers("${input:toolpacks-token}") } },
    }),
  });
  if (stdio) {
    const env = Object.fromEntries(stdio.env.map((v) => [v, `\${env:${v}}`]));
    out.push({
      id: "vscode-stdio",
      title: "VS Code (stdio)",
      where: ".vscode/mcp.json",
      kind: "json",
      transport: "stdio",
      text: json({
        servers: {
          [name]: {
            type: "stdio",
            command: stdio.command,
            args: stdioArgs(stdio, input.plainQuery),
            ...(stdio.env.length ? { env } : {}),
          },
        },
      }),
      ...(input.gated ? { note: stdioNote } : {}),
    });
  }
  out.push({
    id: "inspector",
    title: "MCP Inspector",
    where: "a terminal (drop --cli and --method for its web page)",
    kind: "shell",
    transport: "http",
    text: [
      shell([
        "npx",
        "@modelcontextprotocol/inspector",
        "--cli",
        url,
        "--transport",
        "http",
        "--method",
        "tools/list",
      ]),
      ...(token ? [`--header "${BEARER_SHELL}"`] : []),
    ].join(" "),
  });
  if (stdio) {
    out.push({
      id: "toolsets-cli",
      title: "toolpacks toolsets",
      where: "a terminal: the same selection, what it costs, and what is missing",
      kind: "shell",
      transport: "terminal",
      text: shell([
        stdio.command,
        ...stdio.args,
        "toolsets",
        ...stdio.configs,
        ...(input.plainQuery ? ["--select", input.plainQuery] : []),
        "--live",
        ...(stdio.noToolsetsTool ? ["--no-toolsets-tool"] : []),
      ]),
    });
  }
  return out;
}

/** A server name clients accept as a key: the deployment's name when it is a plain word, else "toolpacks". */
export function clientKey(name: string): string {
  return /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name) ? name : "toolpacks";
}
