/** @module The `state:` setting as written (YAML, after `${VAR}` interpolation) and the plan it compiles to. */
import { SettingError } from "../config/setting-error.js";
import { redactUrl } from "./errors.js";

/**
 * `state:` in packs.yaml:
 *
 * ```yaml
 * state:
 *   store: memory                                   # default; or redis://HOST:PORT/DB, rediss://… (TLS)
 *   # store: redis://:${REDIS_PASSWORD}@redis:6379/0  # a password comes from the environment
 *   max_session_bytes: 8388608                      # per owner (session, credential or principal)
 *   max_total_bytes: 268435456                      # all owners together, across replicas
 * ```
 *
 * `TOOLPACKS_STATE_STORE` (environment) overrides `store`.
 */
export interface StateConfig {
  readonly store?: string;
  readonly max_session_bytes?: number;
  readonly max_total_bytes?: number;
}

export interface StateLimits {
  /** Stored bytes one owner may hold. */
  readonly maxOwnerBytes: number;
  /** Stored bytes all owners together may hold. */
  readonly maxTotalBytes: number;
  /** Ended session ids remembered (locally, and in Redis); an id issued before the oldest is not rebuilt. */
  readonly maxEnded: number;
  /** Largest value `kvPut` accepts. */
  readonly maxRecordBytes: number;
  /** Most records the memory store's kv keeps (oldest dropped first); Redis relies on TTLs. */
  readonly maxRecords: number;
}

export const DEFAULT_LIMITS: StateLimits = Object.freeze({
  maxOwnerBytes: 8 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
  maxEnded: 10_000,
  maxRecordBytes: 64 * 1024,
  maxRecords: 100_000,
});

/** What `openStateStore` builds. `name` is the deployment's `name:`: Redis keys start `toolpacks:<name>:`. */
export type StatePlan =
  | { readonly kind: "memory"; readonly limits: StateLimits }
  | {
      readonly kind: "redis";
      readonly url: string;
      /** The URL with its password redacted: what logs and errors show. */
      readonly description: string;
      readonly name: string;
      readonly limits: StateLimits;
      /** Every Redis command settles within this (default 2000 ms). */
      readonly timeoutMs: number;
    };

const STORE_ENV = "TOOLPACKS_STATE_STORE";

/** Compiles the setting (and `TOOLPACKS_STATE_STORE`) into a plan; throws `SettingError` when malformed. */
export function planState(
  config: StateConfig | undefined,
  name: string,
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<StateLimits> & { timeoutMs?: number } = {},
): StatePlan {
  const fromEnv = env[STORE_ENV]?.trim();
  const store = fromEnv || config?.store || "memory";
  const where = fromEnv ? STORE_ENV : "state.store";
  const { timeoutMs = 2000, ...limitOverrides } = overrides;
  const limits: StateLimits = Object.freeze({
    ...DEFAULT_LIMITS,
    ...(config?.max_session_bytes !== undefined && { maxOwnerBytes: config.max_session_bytes }),
    ...(config?.max_total_bytes !== undefined && { maxTotalBytes: config.max_total_bytes }),
    ...withoutUndefined(limitOverrides),
  });
  for (const [key, value] of [
    ["state.max_session_bytes", limits.maxOwnerBytes],
    ["state.max_total_bytes", limits.maxTotalBytes],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1024) {
      throw new SettingError(key, `must be an integer of at least 1024, not ${value}`, "a byte count");
    }
  }
  if (limits.maxTotalBytes < limits.maxOwnerBytes) {
    throw new SettingError(
      "state.max_total_bytes",
      `${limits.maxTotalBytes} is below state.max_session_bytes (${limits.maxOwnerBytes})`,
      "make the total at least one owner's budget",
    );
  }
  if (store === "memory") return Object.freeze({ kind: "memory", limits });
  let url: URL;
  try {
    url = new URL(store);
  } catch {
    throw new SettingError(where, `"${redactUrl(store)}" is not a URL`, "use memory or redis://HOST:PORT/DB");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new SettingError(
      where,
      `unsupported store ${url.protocol.replace(/:$/, "")}`,
      "use memory, redis://HOST:PORT/DB or rediss://HOST:PORT/DB",
    );
  }
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db)) {
    throw new SettingError(where, `database "${db}" is not a number`, "e.g. redis://redis:6379/0");
  }
  return Object.freeze({
    kind: "redis",
    url: store,
    description: redactUrl(store),
    name,
    limits,
    timeoutMs,
  });
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
