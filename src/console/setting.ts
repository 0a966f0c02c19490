/**
 * @module Whether `serve` offers the browser console, and where: on by default only where nobody else can read it
 * without a token (a loopback bind, or `auth:`); elsewhere only when asked for. Options beat the config.
 */
import type { UiSettings } from "../catalog/types.js";
import { isLoopback } from "../http/guard.js";

const DEFAULT_UI_PATH = "/ui";

/** Routes of toolpacks the console may not take, nor sit under. */
const TAKEN = ["/toolsets", "/healthz", "/readyz", "/metrics", "/oauth", "/.well-known"];
const PATH_RULE = /^(\/[A-Za-z0-9._~-]+)+$/;

export interface UiInput {
  /** `--ui` (true), `--no-ui` (false), else `TOOLPACKS_UI`; undefined: not said. */
  readonly flag?: boolean | undefined;
  /** `--ui-path` / `TOOLPACKS_UI_PATH`. */
  readonly path?: string | undefined;
  readonly config: UiSettings;
  /** The address `serve` binds. */
  readonly host: string;
  /** `auth:` asks every request for a bearer token. */
  readonly authenticated: boolean;
  /** Where MCP is served (`--path`). */
  readonly mcpPath: string;
}

export type UiChoice =
  | { readonly on: true; readonly path: string }
  | { readonly on: false; readonly why: string }
  | { readonly on: false; readonly problem: string };

/** `TOOLPACKS_UI`: 1/true/yes/on or 0/false/no/off; anything else (or nothing) says nothing. */
export function envSwitch(value: string | undefined): boolean | undefined {
  const v = (value ?? "").trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  return undefined;
}

/** Why a console path cannot be used (it is no path, or one of toolpacks' routes is or lies under it), or undefined. */
export function uiPathProblem(path: string, mcpPath: string): string | undefined {
  if (!PATH_RULE.test(path) || path.split("/").some((s) => s === "." || s === ".."))
    return `the console path must be /segment[/segment…] of letters, digits, ".", "_", "~", "-", not ${JSON.stringify(path)}`;
  const clash = [mcpPath, ...TAKEN].find(
    (r) => r === path || r.startsWith(`${path}/`) || path.startsWith(`${r}/`),
  );
  return clash
    ? `the console path ${path} collides with toolpacks' route ${clash} (choose another with --ui-path or ui: { path })`
    : undefined;
}

export function uiChoice(input: UiInput): UiChoice {
  const asked = input.flag ?? input.config.enabled;
  const path = input.path ?? input.config.path ?? DEFAULT_UI_PATH;
  if (asked === false) return { on: false, why: "turned off (--no-ui, TOOLPACKS_UI=0 or ui: false)" };
  const problem = uiPathProblem(path, input.mcpPath);
  if (problem) return { on: false, problem };
  if (asked === true || isLoopback(input.host.toLowerCase()) || input.authenticated)
    return { on: true, path };
  return {
    on: false,
    why: `not served on ${input.host} without auth: (anyone who reaches this address could read it); --ui, TOOLPACKS_UI=1 or ui: true serves it anyway`,
  };
}
