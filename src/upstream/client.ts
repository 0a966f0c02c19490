/**
 * @module The client of an upstream instance: what it declares, and the roots it answers itself. An upstream
 * decides its tool list by these (server-everything lists 13 tools to a bare client, 17 with them), so every
 * command declares the same for the same kind of instance: `serve`, `toolsets --live`, `check --live`.
 */
import type { Notification } from "@modelcontextprotocol/sdk/types.js";
import type { Root, Upstream } from "../catalog/types.js";
import { ErrorCode, McpError } from "../protocol.js";
import { configRoots, upstreamCapabilities } from "./capabilities.js";
import type { InstanceKind } from "./instance.js";
import { UpstreamRpcClient } from "./rpc-client.js";

export { configRoots, upstreamCapabilities } from "./capabilities.js";

/**
 * What the proxy answers an upstream itself, whoever the request is tied to: a shared or per-credential
 * instance's roots/list comes from the config, never from a client (one client's roots must not steer a
 * shared server).
 */
export function answerItself(
  spec: Upstream,
  kind: InstanceKind,
  method: string,
): { roots: readonly Root[] } | undefined {
  if (method !== "roots/list" || kind === "session") return undefined;
  return { roots: configRoots(spec) };
}

export interface ClientHandlers {
  onListChanged(): void;
  /** Any notification the upstream sends that no forwarded call took. */
  onNotification?(notification: Notification): void;
  /** A server→client request that no forwarded call took, and the proxy does not answer itself. */
  onServerRequest?(request: { method: string; params?: unknown }, signal: AbortSignal): Promise<unknown>;
}

/** The client of one instance: what it declares, what it answers itself, where the rest goes. */
export function upstreamClient(
  spec: Upstream,
  kind: InstanceKind,
  info: { readonly clientName: string; readonly clientVersion: string },
  handlers: ClientHandlers,
): UpstreamRpcClient {
  return new UpstreamRpcClient(
    { name: info.clientName, version: info.clientVersion },
    upstreamCapabilities(spec, kind),
    {
      onNotification: (n) => {
        if (/^notifications\/(tools|prompts|resources)\/list_changed$/.test(n.method))
          handlers.onListChanged();
        handlers.onNotification?.(n);
      },
      onRequest: async (request, signal) => {
        const own = answerItself(spec, kind, request.method);
        if (own) return own;
        if (!handlers.onServerRequest)
          throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
        return await handlers.onServerRequest(request, signal);
      },
    },
  );
}
