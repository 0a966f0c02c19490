/**
 * @module The client profiles toolpacks knows without being told: published tool caps of well-known clients,
 * matched by the `clientInfo.name` those clients send. Each names where its cap is published (SPEC §14.4).
 */
import type { ClientSpec } from "../config/types.js";

/** A built-in entry: what a `clients:` entry would say, and where the cap is published. */
export interface BuiltinClient {
  readonly spec: ClientSpec;
  readonly source: string;
}

export const BUILTIN_CLIENTS: readonly BuiltinClient[] = Object.freeze([
  {
    // Cursor's editor sends "cursor-vscode" (the apify/mcp-client-capabilities registry, public server logs).
    spec: { client: "cursor*", max_tools: 40 },
    source:
      'Cursor docs, Model Context Protocol, Limitations: "Cursor will only send the first 40 tools to the Agent" (docs.cursor.com/context/model-context-protocol, 2025)',
  },
  {
    // VS Code sends its product name, productService.nameLong (src/vs/workbench/contrib/mcp in microsoft/vscode).
    spec: { client: ["Visual Studio Code*", "Visual-Studio-Code*"], max_tools: 128 },
    source:
      'VS Code docs, Use tools in chat: "A chat request can have a maximum of 128 tools enabled at a time" (code.visualstudio.com/docs/copilot/chat/chat-tools)',
  },
  {
    // GitHub Copilot's JetBrains plugin sends "JetBrains-<product>-copilot-intellij" (e.g. JetBrains-IU-…).
    spec: { client: "JetBrains-*-copilot-intellij", max_tools: 128 },
    source:
      'GitHub Copilot for JetBrains refuses a request over it: "You may not include more than 128 tools in your request" (github.com/microsoft/copilot-intellij-feedback/issues/1842)',
  },
]);
