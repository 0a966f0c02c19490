/** @module Toolsets by identity (`requires:`) and the audit log (`audit:`), compiled with positions. */
import { dirname, resolve as resolvePath } from "node:path";
import { checkRequires } from "../auth/config-check.js";
import type { Requires } from "../auth/types.js";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { AuditSettings } from "./types.js";
import { where } from "./where.js";

/**
 * Each toolset's `requires:`. If several files declare a toolset, a `requires:` written in any of them
 * applies to the whole toolset (a later file can never drop it), and two different ones are an error
 * naming both places. Any `requires:` while no file configures `auth:` is an error: nobody could meet it.
 */
export function requirementsOf(files: readonly LoadedFile[], errors: ConfigError[]): Map<string, Requires> {
  const authOn = files.some((f) => f.config.auth);
  const out = new Map<string, { requires: Requires; where: string }>();
  for (const { source, config, broken, unresolved } of files) {
    for (const [name, spec] of Object.entries(config.toolsets ?? {})) {
      const path = ["toolsets", name, "requires"];
      const requires = spec?.requires;
      if (!requires || broken.within(path) || unresolved.within(path)) continue;
      const problems = checkRequires(requires, authOn);
      for (const p of problems) {
        errors.push(source.error(["toolsets", name, ...p.path], p.message, p.hint, p.path.length === 1));
      }
      if (problems.length) continue;
      const here = where(source.at(path, true), source.file);
      const first = out.get(name);
      if (!first) out.set(name, { requires, where: here });
      else if (JSON.stringify(first.requires) !== JSON.stringify(requires)) {
        errors.push(
          source.error(
            path,
            `toolset "${name}" requires something else here than at ${first.where}`,
            "write requires: once, or the same in every file",
            true,
          ),
        );
      }
    }
  }
  return new Map([...out].map(([name, r]) => [name, r.requires]));
}

/** `audit:` of the first file that sets it; `file` is taken from that file's folder. */
export function auditOf(files: readonly LoadedFile[], errors: ConfigError[]): AuditSettings {
  const file = files.find((f) => f.config.audit);
  const a = file?.config.audit;
  if (!file || !a) return { arguments: false, subject: "plain" };
  const { source } = file;
  if (a.file !== undefined && a.stderr) {
    errors.push(source.error(["audit", "stderr"], "audit: has both file and stderr", "choose one", true));
  }
  if (a.arguments && a.file === undefined && !a.stderr) {
    errors.push(
      source.error(
        ["audit", "arguments"],
        "audit.arguments needs somewhere to write",
        "add audit.file: PATH or audit.stderr: true",
        true,
      ),
    );
  }
  const sink =
    a.file !== undefined
      ? { file: resolvePath(dirname(resolvePath(source.file)), a.file) }
      : a.stderr
        ? { stderr: true as const }
        : undefined;
  return { ...(sink ? { sink } : {}), arguments: a.arguments === true, subject: a.subject ?? "plain" };
}
