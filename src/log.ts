/** @module Logs: one line each on stderr, JSON or readable; never a secret (callers pass display forms only). */

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  /**
   * Whether a line of `level` is written: a caller that builds fields for a line per call asks first. Optional (an
   * embedder's logger may not say): without it, every level is taken as written.
   */
  enabled?(level: Level): boolean;
}

export interface LoggerOptions {
  level?: Level;
  format?: "json" | "text";
  write?: (line: string) => void;
}

export function createLogger(options: LoggerOptions = {}, base: Record<string, unknown> = {}): Logger {
  const min = ORDER[options.level ?? "info"];
  const format = options.format ?? (process.stderr.isTTY ? "text" : "json");
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const all = { ...base, ...fields };
    if (format === "json") {
      write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...all })}\n`);
    } else {
      const extra = Object.entries(all)
        .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" ");
      write(`toolpacks ${level.padEnd(5)} ${msg}${extra ? ` ${extra}` : ""}\n`);
    }
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger(options, { ...base, ...fields }),
    enabled: (level) => ORDER[level] >= min,
  };
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
  enabled: () => false,
};
