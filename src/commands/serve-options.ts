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
}
