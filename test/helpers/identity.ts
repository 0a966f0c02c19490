/** The packs.yaml the identity tests serve: notes for everyone, admin by scope, eng by group claim. */
import { FIXTURE } from "./proc.js";

export interface GatedOptions {
  readonly issuer: string;
  readonly audience: string;
  /** Lines added under `auth.oauth` (indented by four spaces), e.g. `    step_up: true`. */
  readonly oauth?: string;
  /** Top-level YAML added after `auth:`, e.g. an `audit:` block. */
  readonly top?: string;
  /** A static token `${CI_TOKEN}` (subject ci, scope notes:read) beside OAuth. */
  readonly staticToken?: boolean;
  /** `default:` of the admin toolset (default true). */
  readonly adminDefault?: boolean;
  /** More upstreams and toolsets (lines indented by two spaces under `upstreams:` and `toolsets:`). */
  readonly upstreams?: string;
  readonly toolsets?: string;
}

/** notes: tools [fx/echo]; admin: requires scope admin, [fx/add]; eng: opt-in, requires groups eng, [fx/with_meta]. */
export function gatedPacks(o: GatedOptions): string {
  return `
auth:
${o.staticToken ? '  tokens:\n    - { token: "${CI_TOKEN}", subject: ci, scopes: [notes:read] }\n' : ""}  oauth:
    issuer: ${o.issuer}
    audience: ${o.audience}
    scopes_supported: [mcp]
${o.oauth ?? ""}
${o.top ?? ""}
upstreams:
  fx: { command: node, args: ["${FIXTURE}"] }
${o.upstreams ?? ""}
toolsets:
  notes:
    tools: [fx/echo]
  admin:
    default: ${o.adminDefault ?? true}
    requires: { scopes: [admin] }
    tools: [fx/add]
  eng:
    default: false
    requires: { claims: { groups: [eng] } }
    tools: [fx/with_meta]
${o.toolsets ?? ""}
`;
}
