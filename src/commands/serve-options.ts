/** @module The options of `toolpacks serve`, as commander hands them over (strings until checked). */
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
