/** @module The 2025 handshake: what a session advertises, and its answer to `initialize`. */
import type { ClientCapabilities, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import { errors } from "../wire/errors.js";
import type { Params } from "./peer.js";

/** What a session advertises: tools always; prompts, resources, completions, logging as its upstreams offer. */
export function capabilitiesOf(upstreams: readonly ServerCapabilities[]): ServerCapabilities {
  const any = (f: (c: ServerCapabilities) => unknown) => upstreams.some((c) => !!f(c));
  return {
    tools: { listChanged: true },
    ...(any((c) => c.prompts) ? { prompts: { listChanged: true } } : {}),
    ...(any((c) => c.resources)
      ? {
          resources: {
            listChanged: true,
            ...(any((c) => c.resources?.subscribe) ? { subscribe: true } : {}),
          },
        }
      : {}),
    ...(any((c) => c.completions) ? { completions: {} } : {}),
    ...(any((c) => c.logging) ? { logging: {} } : {}),
  };
}

/** The answer to `initialize`: the version negotiated (the client's if served, else the latest). */
export function initializeResult(
  params: Params,
  capabilities: ServerCapabilities,
  serverInfo: { name: string; version: string },
  instructions: string | undefined,
): {
  result: Params;
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: { name: string; version: string };
} {
  const requested = params.protocolVersion;
  const caps = params.capabilities;
  const info = params.clientInfo as { name?: unknown; version?: unknown } | undefined;
  if (typeof requested !== "string" || !caps || typeof caps !== "object" || typeof info?.name !== "string") {
    throw errors.initializeParams();
  }
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;
  return {
    protocolVersion,
    clientCapabilities: caps as ClientCapabilities,
    clientInfo: { name: info.name, version: String(info.version ?? "") },
    result: { protocolVersion, capabilities, serverInfo, ...(instructions ? { instructions } : {}) },
  };
}
