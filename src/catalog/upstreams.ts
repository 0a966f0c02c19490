/** @module One upstream declaration checked and compiled: transport, the keys that fit it, defaults applied. */
import { dirname, resolve as resolvePath } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { UpstreamSpec } from "../config/types.js";
import { compileOAuth } from "./oauth.js";
import { compileRoots } from "./roots.js";
import type { Upstream } from "./types.js";
import { where } from "./where.js";

/** Connections one instance of an HTTP upstream holds at most (`max_connections`). */
const DEFAULT_MAX_CONNECTIONS = 64;

/**
 * Requests one client may have open on one instance of an HTTP upstream: a quarter of its connections, so that
 * whatever one client holds (slow calls, calls parked for its retry) leaves the rest to the others (SPEC §7.6).
 */
export function callsPerClient(spec: Pick<Upstream, "maxConnections">): number {
  return Math.max(1, Math.floor(spec.maxConnections / 4));
}

/** The compiled upstream, or undefined with every problem of its spec pushed onto `errors`. */
export function makeUpstream(
  key: string,
  spec: UpstreamSpec,
  display: UpstreamSpec,
  file: LoadedFile,
  errors: ConfigError[],
): Upstream | undefined {
  const { source } = file;
  const path = ["upstreams", key];
  const before = errors.length;
  // A value whose `${VAR}` failed is already reported: checking what is left of it would only repeat that.
  const unresolved = (k: keyof UpstreamSpec) => file.unresolved.within([...path, k]);
  if (spec.url !== undefined && spec.command !== undefined) {
    errors.push(
      source.error(
        path,
        `upstream "${key}" has both url and command`,
        "keep one: url for HTTP, command for stdio",
        true,
      ),
    );
  } else if (spec.url === undefined && spec.command === undefined) {
    errors.push(
      source.error(
        path,
        `upstream "${key}" has neither url nor command`,
        "add url: (HTTP) or command: (stdio)",
        true,
      ),
    );
  }
  if (spec.url !== undefined && !unresolved("url")) {
    let ok = false;
    try {
      ok = ["http:", "https:"].includes(new URL(spec.url).protocol);
    } catch {}
    if (!ok)
      errors.push(source.error([...path, "url"], `url ${JSON.stringify(display.url)} is not an http(s) URL`));
  }
  if (spec.url !== undefined) {
    for (const k of ["args", "env", "cwd", "inherit_env", "max_line_bytes"] as const) {
      if (spec[k] !== undefined)
        errors.push(
          source.error([...path, k], `${k} applies to stdio upstreams (command), not url`, undefined, true),
        );
    }
  }
  if (spec.url !== undefined && spec.header_env !== undefined) {
    errors.push(
      source.error(
        [...path, "header_env"],
        "header_env applies to stdio upstreams (command), not url",
        "use forward_headers: for an HTTP upstream",
        true,
      ),
    );
  }
  if (spec.command !== undefined && spec.max_connections !== undefined) {
    errors.push(
      source.error(
        [...path, "max_connections"],
        "max_connections applies to HTTP upstreams (url), not command",
        undefined,
        true,
      ),
    );
  }
  if (spec.command !== undefined && spec.forward_headers !== undefined) {
    errors.push(
      source.error(
        [...path, "forward_headers"],
        "forward_headers applies to HTTP upstreams (url), not command",
        "use header_env: to pass a header to a stdio server",
        true,
      ),
    );
  }
  if (spec.command !== undefined) {
    if (!spec.command.trim() && !unresolved("command"))
      errors.push(source.error([...path, "command"], "command is empty"));
    if (spec.headers !== undefined) {
      errors.push(
        source.error(
          [...path, "headers"],
          "headers apply to HTTP upstreams (url), not command",
          "use env: for a stdio server's credentials",
          true,
        ),
      );
    }
  }
  if (spec.prefix !== undefined && spec.prefix !== "" && !/^[A-Za-z0-9_.-]{1,64}$/.test(spec.prefix)) {
    errors.push(source.error([...path, "prefix"], `prefix "${spec.prefix}" may hold only A-Z a-z 0-9 _ . -`));
  }
  const base = dirname(resolvePath(source.file));
  const roots = compileRoots(spec.roots ?? [], base, source, [...path, "roots"], errors);
  const oauth = compileOAuth(key, spec, file, errors);
  if (errors.length > before) return undefined;
  const at = source.at(path, true);
  return {
    name: key,
    transport: spec.url !== undefined ? "http" : "stdio",
    ...(spec.url !== undefined ? { url: spec.url } : {}),
    headers: spec.headers ?? {},
    ...(spec.command !== undefined ? { command: spec.command } : {}),
    args: spec.args ?? [],
    env: spec.env ?? {},
    inheritEnv: spec.inherit_env ?? [],
    // `${instance.dir}` is absolute once filled: a cwd that starts with it is kept as written.
    cwd: spec.cwd?.startsWith("${instance.dir}") ? spec.cwd : resolvePath(base, spec.cwd ?? "."),
    maxLineBytes: spec.max_line_bytes ?? 64 * 1024 * 1024,
    prefix: spec.prefix ?? "",
    callTimeoutMs: (spec.call_timeout ?? 60) * 1000,
    connectTimeoutMs: (spec.connect_timeout ?? 30) * 1000,
    inputTimeoutMs: (spec.input_timeout ?? 300) * 1000,
    validateArguments: spec.validate_arguments ?? true,
    forwardHeaders: (spec.forward_headers ?? []).map((h) => h.toLowerCase()),
    headerEnv: Object.fromEntries(
      Object.entries(spec.header_env ?? {}).map(([h, v]) => [h.toLowerCase(), v]),
    ),
    isolation: spec.isolation ?? "shared",
    maxInstances: spec.max_instances ?? 16,
    maxConnections: spec.max_connections ?? DEFAULT_MAX_CONNECTIONS,
    roots,
    attribution: spec.attribution ?? "tied",
    protocol: spec.protocol === undefined ? "auto" : spec.protocol === 2025 ? "2025" : spec.protocol,
    ...(spec.capture ? { captureOverBytes: spec.capture.over_bytes } : {}),
    ...(oauth ? { oauth } : {}),
    covered: false,
    display,
    where: where(at, source.file),
  };
}

/** Two files may declare one upstream: allowed when the specs agree, wherever each was written. */
export function sameSpec(a: Upstream, b: Upstream): boolean {
  const strip = ({ where: _w, display: _d, ...rest }: Upstream) => rest;
  return isDeepStrictEqual(strip(a), strip(b));
}
