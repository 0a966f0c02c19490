/** What the console offers to paste into each client (SPEC §17.2): the selection's URL or stdio form, never a token. */
import { describe, expect, test } from "vitest";
import {
  clientKey,
  clientSnippets,
  type SnippetInput,
  shellWord,
  stdioArgs,
} from "../../src/console/snippets.js";
import { shellWords } from "../helpers/paste.js";

const STDIO = {
  command: "/usr/bin/node",
  args: ["/opt/toolpacks/dist/cli.js"],
  configs: ["/home/me/my packs.yaml"],
  env: [],
  noToolsetsTool: false,
};
const INPUT: SnippetInput = {
  name: "toolpacks-example",
  url: "http://127.0.0.1:4040/mcp?notes&without=files",
  plainQuery: "notes&without=files",
  token: false,
  stdio: STDIO,
};
const byId = (input: SnippetInput) => new Map(clientSnippets(input).map((s) => [s.id, s]));

describe("client snippets", () => {
  test("every client is offered, HTTP ones with the URL as it is, stdio ones with the same selection in --toolsets", () => {
    const s = byId(INPUT);
    expect([...s.keys()]).toEqual([
      "claude-desktop",
      "claude-code",
      "cursor",
      "vscode-http",
      "vscode-stdio",
      "inspector",
      "toolsets-cli",
    ]);
    expect(JSON.parse(s.get("claude-desktop")!.text)).toEqual({
      mcpServers: {
        "toolpacks-example": {
          command: "/usr/bin/node",
          args: [
            "/opt/toolpacks/dist/cli.js",
            "serve",
            "--transport",
            "stdio",
            "--toolsets",
            "notes&without=files",
            "/home/me/my packs.yaml",
          ],
        },
      },
    });
    expect(JSON.parse(s.get("cursor")!.text)).toEqual({
      mcpServers: { "toolpacks-example": { url: INPUT.url } },
    });
    expect(JSON.parse(s.get("vscode-http")!.text)).toEqual({
      servers: { "toolpacks-example": { type: "http", url: INPUT.url } },
    });
    expect(JSON.parse(s.get("vscode-stdio")!.text).servers["toolpacks-example"]).toMatchObject({
      type: "stdio",
      command: "/usr/bin/node",
    });
  });

  test("shell commands read back, word for word, as the command meant (the URL's & and ? quoted)", () => {
    const s = byId(INPUT);
    expect(shellWords(s.get("claude-code")!.text)).toEqual([
      "claude",
      "mcp",
      "add",
      "--transport",
      "http",
      "toolpacks-example",
      INPUT.url,
    ]);
    expect(shellWords(s.get("inspector")!.text)).toEqual([
      "npx",
      "@modelcontextprotocol/inspector",
      "--cli",
      INPUT.url,
      "--transport",
      "http",
      "--method",
      "tools/list",
    ]);
    expect(shellWords(s.get("toolsets-cli")!.text)).toEqual([
      "/usr/bin/node",
      "/opt/toolpacks/dist/cli.js",
      "toolsets",
      "/home/me/my packs.yaml",
      "--select",
      "notes&without=files",
      "--live",
    ]);
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWords(shellWord("it's"))).toEqual(["it's"]);
  });

  test("with auth: a token is read from the client's environment or asked for, never written", () => {
    const s = byId({ ...INPUT, token: true });
    const text = [...s.values()].map((x) => x.text).join("\n");
    expect(s.get("claude-code")!.text).toContain('--header "Authorization: Bearer $TOOLPACKS_TOKEN"');
    expect(JSON.parse(s.get("cursor")!.text).mcpServers["toolpacks-example"].headers).toEqual({
      Authorization: "Bearer ${env:TOOLPACKS_TOKEN}",
    });
    const vscode = JSON.parse(s.get("vscode-http")!.text);
    expect(vscode.servers["toolpacks-example"].headers).toEqual({
      Authorization: "Bearer ${input:toolpacks-token}",
    });
    expect(vscode.inputs).toEqual([
      { type: "promptString", id: "toolpacks-token", description: "toolpacks token", password: true },
    ]);
    expect(text).not.toMatch(/Bearer [A-Za-z0-9]/);
  });

  test("the stdio forms say which variables the config reads, and that a stdio process has no token", () => {
    const s = byId({
      ...INPUT,
      gated: true,
      stdio: { ...STDIO, env: ["GITHUB_TOKEN"], noToolsetsTool: true },
    });
    const desktop = s.get("claude-desktop")!;
    expect(JSON.parse(desktop.text).mcpServers["toolpacks-example"].env).toEqual({
      GITHUB_TOKEN: "<GITHUB_TOKEN>",
    });
    expect(desktop.note).toContain("GITHUB_TOKEN");
    expect(desktop.note).toContain("no token");
    expect(JSON.parse(s.get("vscode-stdio")!.text).servers["toolpacks-example"].env).toEqual({
      GITHUB_TOKEN: "${env:GITHUB_TOKEN}",
    });
    expect(stdioArgs({ ...STDIO, noToolsetsTool: true }, "")).toEqual([
      "/opt/toolpacks/dist/cli.js",
      "serve",
      "--transport",
      "stdio",
      "--no-toolsets-tool",
      "/home/me/my packs.yaml",
    ]);
  });

  test("without a way to start the server (not on loopback, or embedded) only the HTTP forms are offered", () => {
    expect([...byId({ ...INPUT, stdio: undefined }).keys()]).toEqual([
      "claude-code",
      "cursor",
      "vscode-http",
      "inspector",
    ]);
  });

  test("the server's key in a config is its name when clients take it, else toolpacks", () => {
    expect(clientKey("toolpacks-example")).toBe("toolpacks-example");
    expect(clientKey("my gateway")).toBe("toolpacks");
    expect(clientKey("9lives")).toBe("toolpacks");
  });
});
