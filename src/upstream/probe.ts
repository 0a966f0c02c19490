/**
 * @module What a `server/discover` probe's outcome says about an upstream's era, as the SDK v2 client reads it
 * (client/src/client/probeClassifier.ts): a DiscoverResult sharing a version is modern; `-32022` listing a modern
 * version we speak is a retry at it (once); an auth refusal, a 5xx, or an HTTP silence is a failure, never an era;
 * everything else is legacy. Pure, and light (no SDK import): the stdio probe runs before the SDK loads.
 */
import { isRecord, META_KEYS, MODERN_VERSION } from "../modern/wire.js";

/** A `server/discover` result, as the probe found it. */
export interface Discover {
  readonly supportedVersions: readonly string[];
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly instructions?: string;
  /** The whole result as the upstream sent it (`_meta` with its serverInfo, cache hints, unknown keys). */
  readonly result: Readonly<Record<string, unknown>>;
}

/** One probe exchange, normalized (HTTP and stdio alike). */
export type ProbeOutcome =
  | { readonly kind: "result"; readonly result: unknown }
  /** A JSON-RPC error, in band or as the body of an HTTP refusal. */
  | { readonly kind: "rpc-error"; readonly code: number; readonly message: string; readonly data?: unknown }
  /** A non-2xx answer whose body is no JSON-RPC error (`body`: the start of it). */
  | { readonly kind: "http-error"; readonly status: number; readonly body: string }
  /** No answer: refused, reset, DNS, TLS. */
  | { readonly kind: "network-error"; readonly message: string }
  /** The stdio probe process exited, or closed its output, before answering. */
  | { readonly kind: "closed" }
  | { readonly kind: "timeout"; readonly ms: number };

export type ProbeVerdict =
  | { readonly kind: "modern"; readonly version: string; readonly discover: Discover }
  /** `-32022` naming a modern version we speak: send the probe again at it, once. */
  | { readonly kind: "corrective"; readonly version: string }
  /** Speak 2025 (`initialize`); `why` says what the probe saw, for the log. */
  | { readonly kind: "legacy"; readonly why: string }
  /**
   * Not an era: the upstream is unavailable for now (`auth`: it refused our credentials; `aborted`: the probe
   * was stopped because the instance that ran it closed, which says nothing of the upstream).
   */
  | { readonly kind: "error"; readonly message: string; readonly auth?: boolean; readonly aborted?: boolean };

/** The modern versions toolpacks speaks, in preference order. */
const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];

/** A result with the DiscoverResult shape (supportedVersions: string[], capabilities: object), or undefined. */
export function readDiscover(result: unknown): Discover | undefined {
  if (!isRecord(result)) return undefined;
  const { supportedVersions, capabilities, instructions } = result;
  if (!Array.isArray(supportedVersions) || !supportedVersions.every((v) => typeof v === "string")) return;
  if (!isRecord(capabilities)) return undefined;
  return {
    supportedVersions: supportedVersions as string[],
    capabilities,
    ...(typeof instructions === "string" ? { instructions } : {}),
    result,
  };
}

const UNSUPPORTED_VERSION = -32022;

/** Who toolpacks is to an upstream: the envelope of every request it sends it on its own behalf. */
export interface ProbeIdentity {
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  readonly clientInfo: { readonly name: string; readonly version: string };
}

/** The id of a probe (a string, as the SDK's: it never collides with a numeric id). */
const PROBE_ID = "tp:discover";

/** The probe request at `version`. */
export function discoverMessage(version: string, who: ProbeIdentity): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id: PROBE_ID,
    method: "server/discover",
    params: {
      _meta: {
        [META_KEYS.protocolVersion]: version,
        [META_KEYS.clientCapabilities]: who.clientCapabilities,
        [META_KEYS.clientInfo]: who.clientInfo,
      },
    },
  };
}

/** The outcome a message stands for when it is the response to the probe; undefined for any other. */
export function probeAnswer(message: unknown): ProbeOutcome | undefined {
  if (!isRecord(message) || message.id !== PROBE_ID || message.method !== undefined) return undefined;
  if (isRecord(message.error)) {
    const { code, message: text, data } = message.error;
    return {
      kind: "rpc-error",
      code: typeof code === "number" ? code : 0,
      message: typeof text === "string" ? text : "",
      ...(data !== undefined ? { data } : {}),
    };
  }
  return { kind: "result", result: message.result };
}

/**
 * Runs a probe exchange and follows one `-32022` correction (the spec's select-and-continue); a second
 * correction is an error.
 */
export async function probeWith(
  exchange: (version: string) => Promise<ProbeOutcome>,
  transport: "http" | "stdio",
): Promise<ProbeVerdict> {
  let version = MODERN_VERSIONS[0]!;
  for (let attempt = 0; ; attempt++) {
    const verdict = classifyProbe(await exchange(version), transport);
    if (verdict.kind !== "corrective") return verdict;
    if (attempt > 0)
      return { kind: "error", message: `server/discover refused version ${version} twice (-32022)` };
    version = verdict.version;
  }
}

export function classifyProbe(
  outcome: ProbeOutcome,
  transport: "http" | "stdio",
  versions: readonly string[] = MODERN_VERSIONS,
): ProbeVerdict {
  switch (outcome.kind) {
    case "result": {
      const discover = readDiscover(outcome.result);
      if (!discover)
        return { kind: "legacy", why: "server/discover answered something that is no DiscoverResult" };
      const shared = versions.find((v) => discover.supportedVersions.includes(v));
      if (shared) return { kind: "modern", version: shared, discover };
      return {
        kind: "legacy",
        why: `server/discover lists no version toolpacks speaks (${discover.supportedVersions.join(", ")})`,
      };
    }
    case "rpc-error":
      return rpcError(outcome, versions);
    case "http-error":
      return httpError(outcome, versions);
    case "network-error":
      return { kind: "error", message: `server/discover failed: ${outcome.message}` };
    case "closed":
      // A stdio server that exits on the unknown request (rmcp does) is a 2025 server.
      return transport === "stdio"
        ? { kind: "legacy", why: "the probe process exited without answering server/discover" }
        : { kind: "error", message: "the connection closed during server/discover" };
    case "timeout":
      // Silence on a local pipe is a 2025 server; an HTTP server that does not answer is down.
      return transport === "stdio"
        ? { kind: "legacy", why: `no answer to server/discover within ${outcome.ms} ms` }
        : { kind: "error", message: `server/discover timed out after ${outcome.ms} ms` };
  }
}

function rpcError(outcome: { code: number; message: string; data?: unknown }, versions: readonly string[]) {
  const why = `server/discover answered ${outcome.code} ${outcome.message}`.trim();
  if (outcome.code !== UNSUPPORTED_VERSION) return { kind: "legacy", why } as const;
  const listed = isRecord(outcome.data) ? outcome.data.supported : undefined;
  if (!Array.isArray(listed) || listed.length === 0 || !listed.every((v) => typeof v === "string")) {
    return { kind: "legacy", why } as const;
  }
  const mutual = versions.find((v) => listed.includes(v));
  if (mutual) return { kind: "corrective", version: mutual } as const;
  const modern = listed.filter((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= MODERN_VERSION);
  if (modern.length > 0) {
    return {
      kind: "error",
      message: `the upstream speaks only ${modern.join(", ")}, which toolpacks does not (-32022)`,
    } as const;
  }
  return { kind: "legacy", why } as const;
}

function httpError(outcome: { status: number; body: string }, versions: readonly string[]): ProbeVerdict {
  const { status } = outcome;
  if (status === 401 || status === 403) {
    const what = status === 401 ? "requires authorization" : "denied access";
    return {
      kind: "error",
      auth: true,
      message: `the server ${what} (HTTP ${status}) to server/discover; check the upstream's headers (credentials)`,
    };
  }
  if (status >= 500)
    return { kind: "error", message: `the server answered server/discover with HTTP ${status}` };
  const body = jsonRpcError(outcome.body);
  if (body) return rpcError(body, versions);
  return { kind: "legacy", why: `server/discover answered HTTP ${status}` };
}

function jsonRpcError(body: string): { code: number; message: string; data?: unknown } | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (!isRecord(error) || typeof error.code !== "number") return undefined;
    return {
      code: error.code,
      message: typeof error.message === "string" ? error.message : "",
      ...(error.data !== undefined ? { data: error.data } : {}),
    };
  } catch {
    return undefined;
  }
}
