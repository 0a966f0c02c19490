/** @module The shapes init works with: the plan made from a client file, and a server's --live listing. */
import type { UpstreamSpec } from "../../config/types.js";
import type { ServersKey } from "./read.js";

/** An environment variable the written file refers to. */
export interface Variable {
  readonly name: string;
  /**
   * `secret`: its value was in the client file and was not copied (kept in memory for --live only).
   * `input`: a VS Code `${input:…}` prompt. `env`: the client file already took it from the environment.
   */
  readonly kind: "secret" | "input" | "env";
  /** The value found in the client file (`secret` only). Never printed, never written. */
  readonly value?: string;
  /** Where it is used: `github env GITHUB_TOKEN`. */
  readonly where: string[];
}

export interface UpstreamPlan {
  /** A valid toolpacks upstream name. */
  readonly name: string;
  /** The name in the client file. */
  readonly original: string;
  /** Strings are toolpacks strings: `${VAR}` is a reference, a literal `$` before `{` or `$` is doubled. */
  readonly spec: Pick<UpstreamSpec, "url" | "headers" | "command" | "args" | "env" | "cwd">;
  /** Comment lines written above the upstream. */
  readonly notes: string[];
  /** Variables it refers to without a default. */
  readonly needs: string[];
}

export interface InitPlan {
  /** The client file, as given (for comments and messages). */
  readonly source: string;
  readonly key: ServersKey;
  readonly upstreams: UpstreamPlan[];
  /** Entries that were not carried over, and why. */
  readonly skipped: { original: string; reason: string }[];
  readonly variables: Map<string, Variable>;
  /** Said on stderr: things the user should know that the file cannot say. */
  readonly warnings: string[];
}

/** One server's lists, as read with --live; or why it could not be read. */
export type Listing =
  | {
      readonly ok: true;
      readonly tools: readonly { name: string; title?: string; description?: string }[];
      readonly prompts: readonly { name: string; title?: string; description?: string }[];
      readonly resources: number;
      readonly templates: number;
    }
  | { readonly ok: false; readonly reason: string };
