/** @module The options of `toolpacks serve`, as commander hands them over (strings until checked). */
import { Option } from "commander";
import type { Limits } from "../catalog/limits.js";
import type { Catalog } from "../catalog/types.js";
import { envSwitch, type UiChoice, uiChoice } from "../console/setting.js";
import { trustedProxies } from "../door/client-key.js";
import type { Level } from "../log.js";

export interface ServeOptions {
  transport: "streamable-http" | "stdio";
  host: string;
  port: string;
  path: string;
  toolsets?: string;
  ignoreQueryKey: string[];
  toolsetsTool: boolean;
  name?: string;
  sessionIdleTimeout: string;
  cacheTtl: string;
  maxBodyBytes: string;
  logLevel: Level;
  allowedHost: string[];
  watch?: boolean;
  sessionSecret?: string;
  stateless?: boolean;
  allowedOrigin: string[];
  logFormat?: "json" | "text";
  /** Where browsers reach this server (OAuth pages, redirect URI, client metadata document). */
  publicUrl?: string;
  /** stdio only: the session's principal, as the JSON of its claims (`toolsets --as` spelling). */
  as?: string;
  insecureBind?: boolean;
  trustedProxy: string[];
  maxSessions?: string;
  maxSessionsPerClient?: string;
  maxBatch?: string;
  /** `--ui` (true) or `--no-ui` (false); undefined: TOOLPACKS_UI, then the config, then the default. */
  ui?: boolean;
  uiPath?: string;
}

/** Whether (and where) `serve` offers the browser console: the options, then `ui:`, then loopback or `auth:`. */
export function serveUi(opts: ServeOptions, catalog: Catalog): UiChoice {
  return uiChoice({
    flag: opts.ui ?? envSwitch(process.env.TOOLPACKS_UI),
    path: opts.uiPath,
    config: catalog.ui,
    host: opts.host,
    authenticated: catalog.auth !== undefined,
    mcpPath: opts.path,
  });
}

/** A repeatable option whose environment variable holds a comma-separated list. */
export function list(flags: string, description: string, each: (v: string) => string = (v) => v): Option {
  return new Option(flags, description)
    .argParser((v: string, all: string[] | undefined) => [
      ...(all ?? []),
      ...v
        .split(",")
        .map((x) => each(x.trim()))
        .filter(Boolean),
    ])
    .default([]);
}

const LIMIT_OPTIONS = [
  ["--max-sessions", "maxSessions", "sessions"],
  ["--max-sessions-per-client", "maxSessionsPerClient", "sessionsPerClient"],
  ["--max-batch", "maxBatch", "batch"],
] as const;

/** The limits given as options (they override the config's `limits:`). */
export function limitOverrides(opts: ServeOptions): Partial<Limits> {
  const out: Partial<Record<keyof Limits, number>> = {};
  for (const [, key, field] of LIMIT_OPTIONS) if (opts[key] !== undefined) out[field] = Number(opts[key]);
  return out;
}

/** A limit option that is not a whole number from 1, or a trusted proxy that is no address: the reason. */
export function limitProblem(opts: ServeOptions): string | undefined {
  for (const [flag, key] of LIMIT_OPTIONS) {
    const v = opts[key];
    if (v !== undefined && !(Number.isSafeInteger(Number(v)) && Number(v) >= 1))
      return `${flag} must be a whole number of at least 1, not ${v}`;
  }
  try {
    trustedProxies(opts.trustedProxy);
  } catch (err) {
    return `--trusted-proxy: ${(err as Error).message}`;
  }
  return undefined;
}

/** A problem with `--public-url`, or undefined. */
export function publicUrlProblem(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const u = new URL(value);
    if ((u.protocol === "https:" || u.protocol === "http:") && !u.search && !u.hash && !u.username)
      return undefined;
  } catch {}
  return `--public-url must be an http(s) URL without query, e.g. https://toolpacks.example.com, not ${value}`;
}
