/**
 * Identity in the pure core and the config: `auth:`, `requires:` and `audit:` compile (or fail at their
 * position); a principal's grants narrow a selection; resolutions are keyed by grants, never by principal;
 * the report says forbidden; a session's calls are logged and audited for its subject.
 */
import { describe, expect, test } from "vitest";
import { accessKey, namedRequirements, resolutionKey, withAccess } from "../../src/access.js";
import { AuditLog, subjectDigest } from "../../src/audit.js";
import { identityKey, parsePrincipalJson } from "../../src/auth/requirements.js";
import type { Principal } from "../../src/auth/types.js";
import { compileTexts } from "../../src/catalog/load.js";
import { formatConfigError } from "../../src/config/errors.js";
import { createToolpacks } from "../../src/index.js";
import { toolsetsReport } from "../../src/report.js";
import { resolve } from "../../src/resolve.js";
import { parseQuery, select } from "../../src/selection.js";
import { catalogOf, errorsOf, inventoryOf } from "../helpers/catalog.js";
import { FakeHost, sdkClient } from "../helpers/session-host.js";

const OAUTH = "  oauth: { issuer: 'https://login.example.com/', audience: 'https://mcp.example.com/mcp' }\n";
const GATED = `auth:
  tokens: ['\${T}']
${OAUTH}upstreams:
  u: { command: x }
toolsets:
  notes: { tools: [u/echo] }
  admin:
    requires: { scopes: [admin, ops] }
    tools: [u/add]
  eng:
    default: false
    requires: { claims: { groups: [eng] } }
    tools: [u/deploy]
  root:
    always: true
    requires: { scopes: [root] }
    tools: [u/reboot]
`;
const ENV = { T: "static-token-1" };
const catalog = catalogOf(GATED, ENV);
const inventory = inventoryOf({ u: ["echo", "add", "deploy", "reboot"] });

const who = (claims: Record<string, unknown>): Principal => parsePrincipalJson(JSON.stringify(claims));
const selected = (query: string, principal?: Principal) => {
  const r = select(catalog, query);
  if (!r.ok) throw new Error(r.error);
  return withAccess(catalog, r.selection, principal);
};

describe("auth:, requires: and audit: in the config", () => {
  test("a bare string token stays valid beside token mappings and the resource server", () => {
    const c = catalogOf(
      `auth:\n  tokens:\n    - '\${T}'\n    - { token: '\${U}', subject: ci, scopes: [notes:read] }\n${OAUTH}`,
      { T: "static-token-1", U: "static-token-2" },
    );
    expect(c.auth?.tokens).toEqual([
      "static-token-1",
      { token: "static-token-2", subject: "ci", scopes: ["notes:read"] },
    ]);
    expect(c.auth?.oauth?.audience).toBe("https://mcp.example.com/mcp");
    expect(catalog.toolset.get("admin")?.requires).toEqual({ scopes: ["admin", "ops"] });
  });

  test.each([
    [
      "requires: without auth: (nobody could meet it)",
      "upstreams: { u: { command: x } }\ntoolsets:\n  t:\n    requires: { scopes: [a] }\n    tools: [u/x]\n",
      /^packs\.yaml:4:5: requires: needs auth: \(without it no request has an identity\)/,
    ],
    [
      "a plain-http issuer that is not loopback",
      "auth:\n  oauth: { issuer: 'http://login.example.com', audience: 'https://mcp.example.com/mcp' }\n",
      /^packs\.yaml:2:20: the issuer must be an https URL/,
    ],
    [
      "an audience with a query",
      "auth:\n  oauth: { issuer: 'https://a.example', audience: 'https://mcp.example.com/mcp?x' }\n",
      /^packs\.yaml:2:51: the audience must be this server's https URL/,
    ],
    [
      "alg none",
      "auth:\n  oauth: { issuer: 'https://a.example', audience: 'https://b.example/mcp', algorithms: [none] }\n",
      /^packs\.yaml:2:89: auth\.oauth\.algorithms\.0 must be one of RS256/,
    ],
    [
      "offline_access as a resource scope",
      "auth:\n  oauth:\n    issuer: https://a.example\n    audience: https://b.example/mcp\n    scopes_supported: [mcp, offline_access]\n",
      /^packs\.yaml:5:29: offline_access is not a resource scope/,
    ],
    [
      "a token listed twice",
      "auth: { tokens: ['${T}', '${T}'] }\n",
      /^packs\.yaml:1:26: this token is listed twice/,
    ],
    [
      "a token item that is neither a string nor a mapping with token",
      "auth: { tokens: [42] }\n",
      /^packs\.yaml:1:18: auth\.tokens\.0 must be a token string or a mapping with "token"/,
    ],
    [
      "an empty claim list",
      "auth: { tokens: ['${T}'] }\nupstreams: { u: { command: x } }\ntoolsets:\n  t:\n    requires: { claims: { groups: [] } }\n    tools: [u/x]\n",
      /^packs\.yaml:5:35: toolsets\.t\.requires\.claims\.groups must NOT have fewer than 1 items/,
    ],
    [
      "a secret variable in requires (clients read it)",
      "auth: { tokens: ['${T}'] }\nupstreams: { u: { command: x } }\ntoolsets:\n  t:\n    requires: { claims: { org: ['${ORG}'] } }\n    tools: [u/x]\n",
      /^packs\.yaml:5:33: toolsets\.t\.requires\.claims\.org\.0 uses \$\{ORG\}, but clients read this text/,
    ],
    [
      "forward_headers: [authorization] while only the resource server is on",
      `auth:\n${OAUTH}upstreams:\n  gh: { url: 'https://x/mcp', forward_headers: [Authorization] }\n`,
      /^packs\.yaml:4:3: upstream "gh" forwards the Authorization header/,
    ],
    [
      "inherit_env of the introspection secret",
      "auth:\n  oauth:\n    issuer: https://a.example\n    audience: https://b.example/mcp\n    introspection: { url: 'https://a.example/i', client_id: tp, client_secret: '${SECRET}' }\nupstreams:\n  u: { command: x, inherit_env: [SECRET] }\n",
      /^packs\.yaml:7:34: inherit_env lists SECRET, the proxy's own bearer token or secret/,
    ],
    [
      "an audit log with both a file and stderr",
      "audit: { file: a.jsonl, stderr: true }\n",
      /^packs\.yaml:1:25: audit: has both file and stderr/,
    ],
    [
      "audit.arguments with nowhere to write",
      "audit: { arguments: true }\n",
      /^packs\.yaml:1:10: audit\.arguments needs somewhere to write/,
    ],
  ])("%s is an error at its position", (_what, yaml, error) => {
    const errors = errorsOf(yaml, { T: "static-token-1", SECRET: "s3cret-value", ORG: "acme" });
    expect(errors).toEqual([expect.stringMatching(error)]);
    expect(errors.join("\n")).not.toContain("static-token-1");
  });

  test("a requires: written in any file applies to the toolset; two different ones are an error naming both", () => {
    const base = {
      file: "a.yaml",
      text: "auth: { tokens: ['${T}'] }\nupstreams: { u: { command: x } }\ntoolsets:\n  t: { tools: [u/x] }\n",
    };
    const more = {
      file: "b.yaml",
      text: "toolsets:\n  t:\n    requires: { scopes: [a] }\n    tools: [u/y]\n",
    };
    const r = compileTexts([base, more], ENV);
    if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
    expect(r.catalog.toolset.get("t")?.requires).toEqual({ scopes: ["a"] });
    const other = { file: "c.yaml", text: "toolsets:\n  t:\n    requires: { scopes: [b] }\n" };
    expect(errorsOf([base, more, other], ENV)).toEqual([
      'c.yaml:3:5: toolset "t" requires something else here than at b.yaml:3:5 (write requires: once, or the same in every file)',
    ]);
  });

  test("an audit file is taken from its config file's folder; subjects are plain unless asked", () => {
    const r = compileTexts([
      { file: "/etc/tp/packs.yaml", text: "audit: { file: logs/audit.jsonl, subject: digest }\n" },
    ]);
    if (!r.ok) throw new Error("did not compile");
    expect(r.catalog.audit).toEqual({
      sink: { file: "/etc/tp/logs/audit.jsonl" },
      arguments: false,
      subject: "digest",
    });
    expect(catalogOf("upstreams: { u: { command: x } }\n").audit).toEqual({
      arguments: false,
      subject: "plain",
    });
  });
});

describe("a principal's grants narrow what a URL selects", () => {
  test("a toolset the principal does not meet is never active, whatever made it requested (name, default, always)", () => {
    const s = selected("eng", who({ scope: "mcp" }));
    expect(s.active).toEqual(["notes"]);
    expect(s.forbidden).toEqual(["admin", "eng", "root"]);
    expect(selected("eng", who({ scope: "ops root", groups: ["eng"] })).active).toEqual([
      "notes",
      "admin",
      "eng",
      "root",
    ]);
  });

  test("requires: is all-of across keys and any-of within a list; a bare static token has every scope and no claims", () => {
    const staticToken: Principal = { subject: "token:1", scopes: "all", claims: {}, via: "token" };
    expect(selected("eng", staticToken).active).toEqual(["notes", "admin", "root"]);
    expect(selected("eng", who({ scp: ["admin"], groups: "eng" })).active).toEqual(["notes", "admin", "eng"]);
  });

  test("without a principal no gated toolset is active", () => {
    expect(selected("only=admin,eng").active).toEqual([]);
    expect(selected("only=admin,eng").forbidden).toEqual(["admin", "eng", "root"]);
  });

  test("a catalog that gates nothing gives every principal the URL's selection unchanged", () => {
    const open = catalogOf("upstreams: { u: { command: x } }\n");
    const r = select(open, "");
    if (!r.ok) throw new Error(r.error);
    expect(withAccess(open, r.selection, who({ scope: "x" }))).toBe(r.selection);
  });

  test("applying the narrowing again (a reload) starts from what was requested", () => {
    const once = selected("eng", who({ scope: "mcp" }));
    expect(withAccess(catalog, once, who({ scope: "admin root", groups: ["eng"] })).active).toEqual([
      "notes",
      "admin",
      "eng",
      "root",
    ]);
  });

  test("resolutions are keyed by grants: two subjects with the same grants share a key, other grants never do", () => {
    const a = selected("eng", who({ sub: "alice", scope: "admin" }));
    const b = selected("eng", who({ sub: "bob", scope: "ops" }));
    const c = selected("eng", who({ sub: "carol", scope: "mcp" }));
    expect(resolutionKey(a)).toBe(resolutionKey(b));
    expect(resolutionKey(a)).not.toBe(resolutionKey(c));
    expect(resolutionKey(a)).not.toContain("alice");
    // What the report shows differs with grants on toolsets the URL did not request, too.
    expect(accessKey(selected("", who({ scope: "admin" })))).not.toBe(
      accessKey(selected("", who({ scope: "admin", groups: ["eng"] }))),
    );
  });

  test("a URL's named gated toolsets are what a challenge asks for; without= and defaults are not", () => {
    const named = (q: string) => {
      const p = parseQuery(q);
      if (!p.ok) throw new Error(p.error);
      return namedRequirements(catalog, p.query).map((n) => n.name);
    };
    expect(named("admin&eng")).toEqual(["admin", "eng"]);
    expect(named("without=admin")).toEqual([]);
    expect(named("")).toEqual([]);
    expect(named("only=eng&admin")).toEqual(["eng"]);
  });
});

describe("what a principal is told", () => {
  test("a forbidden toolset is unavailable with reason forbidden and what it needs, never its tools or figures", () => {
    const s = selected("eng", who({ scope: "mcp" }));
    const r = resolve(catalog, s, inventory);
    expect(r.tools.map((t) => t.name)).toEqual(["echo"]);
    const report = toolsetsReport(
      catalog,
      s,
      r,
      [],
      resolve(
        catalog,
        selected("only=notes,admin,eng,root", who({ scope: "admin root", groups: ["eng"] })),
        inventory,
      ),
    );
    expect(report.unavailable).toContainEqual({
      name: "eng",
      reason: "forbidden",
      missing: [],
      detail: "needs groups eng",
      requires: { claims: { groups: ["eng"] } },
    });
    const admin = report.toolsets.find((t) => t.name === "admin")!;
    expect(admin).toMatchObject({ forbidden: true, active: false, requires: { scopes: ["admin", "ops"] } });
    expect(admin).not.toHaveProperty("schema_bytes");
    expect(JSON.stringify(report)).not.toContain("deploy");
  });

  test("a forbidden toolset never makes another conflict: its names are not taken", () => {
    const c = catalogOf(
      `auth: { tokens: ['\${T}'] }\nupstreams:\n  a: { command: x }\n  b: { command: y }\ntoolsets:\n  secret:\n    requires: { scopes: [s] }\n    tools: [a/*]\n  open:\n    tools: [b/*]\n`,
      ENV,
    );
    const r = select(c, "");
    if (!r.ok) throw new Error(r.error);
    const s = withAccess(c, r.selection, who({ scope: "x" }));
    const res = resolve(c, s, inventoryOf({ a: ["search"], b: ["search"] }));
    expect(res.active).toEqual(["open"]);
    expect(res.unavailable.map((u) => u.reason)).toEqual(["forbidden"]);
  });

  test("activeFor(url, principal) answers for a principal without starting anything", async () => {
    const tp = createToolpacks(catalog, { logger: false });
    expect(tp.activeFor("/mcp?eng", who({ scope: "admin", groups: ["eng"] }))).toEqual({
      active: ["notes", "admin", "eng"],
      unknown: [],
      forbidden: ["root"],
    });
    expect(tp.activeFor("/mcp?nope").forbidden).toEqual(["admin", "root"]);
    await tp.close();
  });
});

describe("who a principal is", () => {
  test("a static token named like an issuer's user is another identity; one issuer's tokens are one", () => {
    const staticAlice: Principal = { subject: "alice", scopes: "all", claims: {}, via: "token" };
    const jwtAlice = who({ sub: "alice" });
    const introspectedAlice: Principal = { ...jwtAlice, via: "introspection" };
    expect(identityKey(staticAlice)).not.toBe(identityKey(jwtAlice));
    expect(identityKey(introspectedAlice)).toBe(identityKey(jwtAlice));
  });
});

describe("a session keeps its principal", () => {
  test("a session's calls are audited and logged for its subject, as a digest when asked, arguments only when asked", async () => {
    const lines: string[] = [];
    const host = new FakeHost(catalog);
    const audit = new AuditLog(
      { sink: { stderr: true }, arguments: false, subject: "digest" },
      { stderr: (l) => void lines.push(l) },
    );
    Object.assign(host, { audit });
    const session = host.open(
      "",
      { u: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } },
      "k1",
      who({ sub: "alice@example.com", scope: "mcp" }),
    );
    const client = await sdkClient(session);
    await client.callTool({ name: "echo", arguments: { text: "secret plans" } });
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({
      subject: subjectDigest("alice@example.com"),
      selection: "notes",
      toolset: "notes",
      tool: "echo",
      upstream: "u",
      outcome: "ok",
      session: "k1",
    });
    expect(lines[0]).not.toContain("alice");
    expect(lines[0]).not.toContain("secret plans");
    audit.configure({ sink: { stderr: true }, arguments: true, subject: "plain" });
    await client.callTool({ name: "echo", arguments: { text: "plans" } });
    expect(JSON.parse(lines[1]!)).toMatchObject({
      subject: "alice@example.com",
      arguments: { text: "plans" },
    });
    await client.close();
  });
});
