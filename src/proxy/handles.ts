/**
 * @module Large values out of the model's context: captured results kept in the state store under their
 * owner (a session, or a credential or principal), passed by `@state:` handle. Only a request that uses a
 * handle, inspects, or returns a result to capture touches the store: every other call never waits on it.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import type { ToolDef } from "../catalog/inventory.js";
import type { Logger } from "../log.js";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import { StoreUnavailableError } from "../state/errors.js";
import type { StateStore, StoredValue } from "../state/types.js";
import { rpcError } from "./errors.js";
import { HANDLE_PREFIX, INSPECT_TOOL, inspectLimit, parseOr, reply, sliceOf } from "./inspect.js";

export { INSPECT_TOOL, inspectToolDef } from "./inspect.js";

const PREVIEW_CHARS = 240;
/** A captured value lives this long after its capture unless its owner ends (or the budgets evict it) first. */
const VALUE_TTL_MS = 60 * 60 * 1000;

type Result = Record<string, unknown>;

export interface HandleStoreOptions {
  readonly store: StateStore;
  /** The per-owner budget, as the store enforces it (what inspect_state reports as `max_bytes`). */
  readonly maxOwnerBytes: number;
  readonly logger: Logger;
  readonly ttlMs?: number;
  /**
   * What the owner of a 2026-07-28 caller's values is derived from, with its credential values: the session
   * secret replicas share, so each finds the same owner (default: a random key of this process).
   */
  readonly secret?: string;
}

/** The owner of a 2025 session's values: a digest of its id (never the id; unguessable like it). */
function sessionOwner(sessionKey: string): string {
  return `s.${createHash("sha256").update(sessionKey).digest("base64url")}`;
}

/**
 * The owner given for a 2026-07-28 request with neither credential values nor identity: each value it
 * captures belongs to whoever holds its handle, which carries 128 random bits (`@state:~RANDOM/scope`).
 */
export const BEARER_OWNER = "*";
const BEARER_MARK = "~";

/** A fresh 128-bit name: what makes a handle that is not a session's unguessable. */
const randomName = () => randomBytes(16).toString("base64url");
/**
 * Every bearer value lives under one store owner, so callers without credentials share one per-owner budget
 * (`max_session_bytes`) and cannot crowd out sessions' values; a value's key is a digest of its random name
 * (the name itself is in no store key).
 */
const BEARER_STORE = "b.bearer";
const bearerKey = (name: string, scope: string) =>
  `${createHash("sha256").update(name).digest("base64url")}/${scope}`;

/** Where a handle's value lives: a bearer handle in the bearer store; any other the caller's. Empty: none. */
function locate(owner: string, key: string): { owner: string; key: string } | undefined {
  if (!key || key.length > 1024) return undefined;
  if (!key.startsWith(BEARER_MARK)) return owner === BEARER_OWNER ? undefined : { owner, key };
  const slash = key.indexOf("/");
  if (slash < 2 || slash === key.length - 1) return undefined;
  return { owner: BEARER_STORE, key: bearerKey(key.slice(1, slash), key.slice(slash + 1)) };
}

/** A request with no owner (a `--stateless` request) neither captures nor uses handles. */
function noOwner(what: string): Error {
  return rpcError(
    ErrorCode.InvalidParams,
    `${what}: this request has no captured values (toolpacks keeps them for a session, or for a 2026-07-28 request's credential values or identity)`,
  );
}

/** A session's owner of captured values: the one given, else a digest of its key; none when given `null`. */
export function ownerOfValues(given: string | null | undefined, sessionKey: string): string | undefined {
  return given === null ? undefined : (given ?? sessionOwner(sessionKey));
}

const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

function textOf(result: Result): string {
  const content = Array.isArray(result.content)
    ? (result.content as { type?: string; text?: unknown }[])
    : [];
  return content
    .filter((c) => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text as string)
    .join("\n");
}

/** True when an argument object has a top-level value that is a handle: only then is the store asked. */
export function mentionsHandle(args: unknown): boolean {
  if (!args || typeof args !== "object" || Array.isArray(args)) return false;
  for (const v of Object.values(args)) if (typeof v === "string" && v.startsWith(HANDLE_PREFIX)) return true;
  return false;
}

/** The store is down: a JSON-RPC error that names it (password redacted) and what could not be done. */
function unavailable(e: StoreUnavailableError, what: string): Error {
  return rpcError(
    ErrorCode.InternalError,
    `${what}: the state store ${e.store} is unavailable; try again when it is back`,
    { store: e.store },
  );
}

/** Captured values of every owner, in one state store: bounded per owner and in total by the store. */
export class HandleStore {
  private readonly ttlMs: number;
  private readonly ownerKey: Buffer;
  /** A capture that failed because the store is down is logged once until one succeeds again. */
  private quiet = false;

  constructor(private readonly options: HandleStoreOptions) {
    this.ttlMs = options.ttlMs ?? VALUE_TTL_MS;
    this.ownerKey = options.secret
      ? createHmac("sha256", "toolpacks handle owners").update(options.secret).digest()
      : randomBytes(32);
  }

  /**
   * The owner of the values of 2026-07-28 requests that carry these credential values and identity
   * (`binding`, their digest), on any selection and any replica that shares the secret: a keyed digest, so neither the values
   * nor their plain digest can be read back from the store's keys, and nobody without the values can name it.
   */
  credentialOwner(binding: string): string {
    return `c.${createHmac("sha256", this.ownerKey).update(binding).digest("base64url")}`;
  }

  /**
   * Replaces a large result with a compact one that names its handle; small results pass untouched (and the
   * store is not asked). A result the store refuses (too large) or cannot take (down) is returned as sent.
   */
  async capture(owner: string | undefined, route: Route, result: Result): Promise<Result> {
    const over = route.captureOverBytes;
    if (over === undefined || result.isError === true || owner === undefined) return result;
    const text = textOf(result);
    const structuredJson =
      result.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent);
    const bytes = Math.max(byteLength(text), byteLength(structuredJson));
    if (bytes <= over) return result;
    const scope = `${route.toolsets[0] ?? route.upstream}/${route.name}`;
    const value: StoredValue = {
      text: text || structuredJson,
      ...(result.structuredContent !== undefined && { structured: result.structuredContent }),
      bytes,
      meta: { tool: route.name },
    };
    let key: string;
    try {
      // A session's handles count up (they are its own); any other owner's carry 128 random bits, and a
      // bearer value is stored in the bearer store under a digest of its name.
      let into = owner;
      let stored: string;
      if (owner === BEARER_OWNER) {
        const name = randomName();
        into = BEARER_STORE;
        stored = bearerKey(name, scope);
        key = `${BEARER_MARK}${name}/${scope}`;
      } else if (owner.startsWith("s.")) {
        key = stored = `${scope}/${await this.options.store.next(owner, scope, this.ttlMs)}`;
      } else {
        key = stored = `${scope}/${randomName()}`;
      }
      const put = await this.options.store.put(into, stored, value, this.ttlMs);
      this.quiet = false;
      // A value larger than a whole budget is not kept: the model gets it as the upstream sent it.
      if (!put.stored) return result;
    } catch (e) {
      if (!(e instanceof StoreUnavailableError)) throw e;
      if (!this.quiet) {
        this.options.logger.warn("result not captured: the state store is unavailable", {
          store: e.store,
          tool: route.name,
        });
      }
      this.quiet = true;
      return result;
    }
    const handle = `${HANDLE_PREFIX}${key}`;
    const preview = value.text.slice(0, PREVIEW_CHARS);
    const note =
      `[toolpacks: this result is ${bytes} bytes, kept out of your context as ${handle}. ` +
      `Pass "${handle}" as an argument to any tool to use the whole value; call ${INSPECT_TOOL} to read parts of it.]`;
    // Only text and structured content are kept behind the handle: images, audio, resource links and embedded
    // resources reach the client as they came, beside it.
    const rest = Array.isArray(result.content)
      ? (result.content as { type?: string }[]).filter((c) => c.type !== "text")
      : [];
    return {
      content: [
        {
          type: "text",
          text: `${preview}${preview.length < value.text.length ? "…" : ""}\n\n${note}`,
        },
        ...rest,
      ],
      _meta: { ...(result._meta as object | undefined), "toolpacks/handle": { handle, bytes } },
    };
  }

  /**
   * Replaces every top-level argument whose value is exactly a handle of this owner: a string parameter gets
   * the stored text, an object or array parameter the structured content. An unknown or evicted handle is
   * -32602 naming it; a store that is down is -32603 naming the store. Without a handle: `args` as given.
   */
  async substitute(owner: string | undefined, definition: ToolDef, args: unknown): Promise<unknown> {
    if (!mentionsHandle(args)) return args;
    if (owner === undefined) throw noOwner("a handle was passed");
    const out = { ...(args as Record<string, unknown>) };
    const props =
      (definition.inputSchema as { properties?: Record<string, { type?: unknown }> } | undefined)
        ?.properties ?? {};
    for (const [name, value] of Object.entries(out)) {
      if (typeof value !== "string" || !value.startsWith(HANDLE_PREFIX)) continue;
      const stored = await this.read(owner, value, `argument ${name}`);
      if (!stored) {
        throw rpcError(
          ErrorCode.InvalidParams,
          `Unknown or expired handle ${value} (argument ${name}); call ${INSPECT_TOOL} to list the handles this session holds`,
          { handle: value },
        );
      }
      const type = props[name]?.type;
      const wantsData =
        type === "object" || type === "array" || (Array.isArray(type) && !type.includes("string"));
      out[name] = wantsData ? (stored.structured ?? parseOr(stored.text)) : stored.text;
    }
    return out;
  }

  /** inspect_state: list the owner's handles, or read a slice of one (a line range, or a JSON path), size-limited. */
  async inspect(owner: string | undefined, args: Record<string, unknown>): Promise<Result> {
    if (owner === undefined) throw noOwner(INSPECT_TOOL);
    const raw = typeof args.handle === "string" ? args.handle : undefined;
    const store = this.options.store;
    // A caller without credentials or identity holds no list: only the handles it was given.
    if (!raw && owner === BEARER_OWNER) {
      return reply({ handles: [], total_bytes: 0, max_bytes: this.options.maxOwnerBytes });
    }
    if (!raw) {
      try {
        const [values, usage] = await Promise.all([store.list(owner), store.usage(owner)]);
        const handles = values.map((v) => ({
          handle: `${HANDLE_PREFIX}${v.key}`,
          tool: v.meta.tool,
          bytes: v.bytes,
        }));
        return reply({ handles, total_bytes: usage.owner, max_bytes: this.options.maxOwnerBytes });
      } catch (e) {
        if (e instanceof StoreUnavailableError) throw unavailable(e, `${INSPECT_TOOL} cannot list handles`);
        throw e;
      }
    }
    const handle = raw.startsWith(HANDLE_PREFIX) ? raw : `${HANDLE_PREFIX}${raw}`;
    const stored = await this.read(owner, handle, INSPECT_TOOL);
    if (!stored) throw rpcError(ErrorCode.InvalidParams, `Unknown or expired handle ${raw}`, { handle: raw });
    return sliceOf(handle, stored, args, inspectLimit(args));
  }

  /** Drops every value of an owner (its session ended). A store that is down is left to the values' TTL. */
  async forget(owner: string | undefined): Promise<void> {
    if (owner !== undefined && owner !== BEARER_OWNER) await this.options.store.clear(owner).catch(() => {});
  }

  private async read(owner: string, handle: string, what: string): Promise<StoredValue | undefined> {
    try {
      // A caller without an owner of its own holds only bearer handles; an empty or malformed key names nothing.
      const at = locate(owner, handle.slice(HANDLE_PREFIX.length));
      return at ? await this.options.store.get(at.owner, at.key) : undefined;
    } catch (e) {
      if (e instanceof StoreUnavailableError) throw unavailable(e, `${handle} (${what}) cannot be read`);
      throw e;
    }
  }
}
