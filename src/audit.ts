/**
 * @module The audit log: one JSON line per call (a tool, a prompt, a resource read; who, what, where, how it
 * ended, refusals included) and per change of an
 * upstream OAuth grant, appended to a file or written to stderr; and how a subject is written everywhere (as is,
 * or as a digest). Never a token.
 */
import { createHash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import type { Principal } from "./auth/types.js";
import type { AuditSettings } from "./catalog/types.js";
import type { Logger } from "./log.js";
import type { Outcome } from "./metrics.js";

/** What the audit log has a line for: a tool call (built-ins included), a prompt got, a resource read. */
export type AuditMethod = "tools/call" | "prompts/get" | "resources/read";

/**
 * Why a call was refused before anything ran: a tool the session does not offer (unknown, or of a toolset the
 * caller may not use), one that waits for the caller's authorization, a handle that names nothing, arguments its
 * schema refuses, a prompt or a resource the session does not have.
 */
export type Refusal =
  | "unknown_tool"
  | "authorization_required"
  | "bad_handle"
  | "invalid_arguments"
  | "unknown_prompt"
  | "unknown_resource";

/** One call, as the audit log writes it (after `time`). */
export interface AuditEntry {
  /** The subject as configured (plain or digest); null when nobody is signed in (no `auth:`, stdio). */
  readonly subject: string | null;
  /** The session's canonical selection (its active toolsets). */
  readonly selection: string;
  /** The toolset it counts under; null for a built-in tool, or a name the session does not have. */
  readonly toolset: string | null;
  readonly method: AuditMethod;
  /** tools/call: the tool's name as the client sent it (bounded). */
  readonly tool?: string | null;
  /** prompts/get: the prompt's name. */
  readonly prompt?: string | null;
  /** resources/read: the URI. */
  readonly uri?: string | null;
  /** The upstream it ran on; null when it ran on none (a built-in, a refusal before routing). */
  readonly upstream: string | null;
  /** As in metrics, or `refused` (with its `reason`): nothing ran. */
  readonly outcome: Outcome | "refused";
  readonly reason?: Refusal;
  readonly duration_ms: number;
  /** The session, by the digest logs use. */
  readonly session: string;
  readonly request_id?: string;
  /** Only with `audit.arguments: true`. */
  readonly arguments?: unknown;
}

/** A change of an upstream OAuth grant (SPEC §11.7), as the audit log writes it (after `time`). */
export interface GrantAuditEntry {
  readonly event: "oauth_grant";
  readonly upstream: string;
  readonly mode: "shared" | "per-user";
  readonly action: "authorized" | "dropped";
  /** Whose grant: the principal's subject (as configured); null for a shared upstream's, the deployment's. */
  readonly subject: string | null;
  /** Who made it: the subject that started the flow, "toolpacks login" (the operator), or null (toolpacks dropped it). */
  readonly by: string | null;
  readonly via: "page" | "login" | "toolpacks";
  readonly reason?: string;
}

/** What a session's calls need of the audit log (the gateway's `AuditLog`; tests use fakes). */
export interface CallAudit {
  /** The subject as logs, metrics and the audit log write it; undefined without a principal. */
  subjectOf(principal: Principal | undefined): string | undefined;
  readonly withArguments: boolean;
  record(entry: AuditEntry): void;
}

/**
 * `sub:` and 16 hex digits of a domain-separated SHA-256: tells subjects apart and joins one subject's lines,
 * without writing it. Not keyed, so it is a pseudonym: whoever knows a subject can recognise its digest.
 */
export function subjectDigest(subject: string): string {
  return `sub:${createHash("sha256").update(`toolpacks subject\0${subject}`).digest("hex").slice(0, 16)}`;
}

export class AuditLog implements CallAudit {
  private stream: WriteStream | undefined;
  private broken = false;

  constructor(
    private settings: AuditSettings,
    private readonly deps: { readonly logger?: Logger; readonly stderr?: (line: string) => void } = {},
  ) {}

  /** A reload: the new settings apply to the next call; a different file is opened on its first line. */
  configure(settings: AuditSettings): void {
    if (JSON.stringify(settings.sink) !== JSON.stringify(this.settings.sink)) {
      void this.end();
      this.broken = false;
    }
    this.settings = settings;
  }

  get withArguments(): boolean {
    return this.settings.arguments && this.settings.sink !== undefined;
  }

  subjectOf(principal: Principal | undefined): string | undefined {
    if (!principal) return undefined;
    return this.named(principal.subject);
  }

  /** A subject as logs, metrics and the audit log write it. */
  named(subject: string): string {
    return this.settings.subject === "digest" ? subjectDigest(subject) : subject;
  }

  record(entry: AuditEntry | GrantAuditEntry): void {
    const sink = this.settings.sink;
    if (!sink) return;
    const line = `${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`;
    if ("stderr" in sink) (this.deps.stderr ?? ((l: string) => process.stderr.write(l)))(line);
    else this.file(sink.file)?.write(line);
  }

  /** The file, opened for appending (0600) on first use; after a failure, warned once, nothing more is tried. */
  private file(path: string): WriteStream | undefined {
    if (this.broken) return undefined;
    if (!this.stream) {
      const stream = createWriteStream(path, { flags: "a", mode: 0o600 });
      stream.on("error", (err: NodeJS.ErrnoException) => {
        this.broken = true;
        if (this.stream === stream) this.stream = undefined;
        this.deps.logger?.error("audit log cannot be written; audit lines are dropped", {
          file: path,
          error: err.code ?? err.message,
        });
      });
      this.stream = stream;
    }
    return this.stream;
  }

  /** Flushes and closes the file (shutdown, or a reload that moves it). */
  async end(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (stream) await new Promise<void>((done) => stream.end(() => done()));
  }
}
