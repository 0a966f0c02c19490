/**
 * A real authorization server (oidc-provider 9, in process, 127.0.0.1 port 0), the OAuth-protected MCP fixture
 * (a child process), and a user agent that signs in and consents through oidc-provider's dev interactions.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type Provider from "oidc-provider";
import { findAccount, loadOidcProvider } from "./oidc-provider.js";
import { ROOT } from "./proc.js";

export const PRE_REGISTERED = {
  client_id: "toolpacks-pre",
  client_secret: "pre-registered-secret-7f3a9c1e5b",
  machine_id: "toolpacks-machine",
  machine_secret: "machine-secret-2d8e6b4a0c",
};

export interface AuthServer {
  readonly issuer: string;
  readonly provider: Provider;
  /** Every request the AS received: method and path (no query, no body). */
  readonly requests: { method: string; path: string }[];
  stop(): Promise<void>;
}

/** The AS, issuing JWT access tokens for `resource()` (scopes mcp:tools, mcp:admin), refresh tokens rotated. */
export async function startAuthServer(opts: {
  resource: () => string;
  accessTokenTTL?: number;
}): Promise<AuthServer> {
  const { default: Provider, errors } = await loadOidcProvider();
  // Keys of its own: oidc-provider's built-in development keys come with a warning.
  const jwk = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ttl = opts.accessTokenTTL ?? 300;
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...jwk, kid: "as-1", alg: "RS256", use: "sig" }] },
    findAccount,
    clients: [
      {
        client_id: PRE_REGISTERED.client_id,
        client_secret: PRE_REGISTERED.client_secret,
        redirect_uris: ["http://127.0.0.1/oauth/callback"],
        application_type: "native",
        grant_types: ["authorization_code", "refresh_token"],
      },
      {
        client_id: PRE_REGISTERED.machine_id,
        client_secret: PRE_REGISTERED.machine_secret,
        redirect_uris: [],
        response_types: [],
        grant_types: ["client_credentials"],
      },
    ],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== opts.resource()) throw new errors.InvalidTarget();
          return {
            scope: "mcp:tools mcp:admin",
            audience: indicator,
            accessTokenTTL: ttl,
            accessTokenFormat: "jwt",
          };
        },
      },
    },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ttl,
      AuthorizationCode: 60,
      ClientCredentials: ttl,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
  });
  const requests: { method: string; path: string }[] = [];
  const handle = provider.callback();
  server.on("request", (req, res) => {
    requests.push({ method: req.method ?? "", path: new URL(req.url ?? "/", issuer).pathname });
    handle(req, res);
  });
  return {
    issuer,
    provider,
    requests,
    stop: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/**
 * A browser: follows the authorization URL, signs in as `login` and consents on oidc-provider's dev interaction
 * pages, and returns the URL the AS redirects to (not followed). Cookies are kept per agent.
 */
export async function authorizeAs(authorizeUrl: string, login = "alice"): Promise<URL> {
  const jar = new Map<string, string>();
  const start = new URL(authorizeUrl);
  const go = async (url: URL, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...init.headers, cookie } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return res;
  };
  let res = await go(start);
  for (let hop = 0; hop < 12; hop++) {
    const location = res.headers.get("location");
    if (!location) throw new Error(`the AS answered ${res.status} without a redirect: ${await res.text()}`);
    const next = new URL(location, start);
    if (next.origin !== start.origin) return next;
    if (!next.pathname.startsWith("/interaction/")) {
      res = await go(next);
      continue;
    }
    const form = await (await go(next)).text();
    const action = /<form[^>]*action="([^"]+)"/.exec(form)?.[1];
    if (!action) throw new Error("no form on the interaction page");
    const body = new URLSearchParams(
      [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map(
        (m): [string, string] => [m[1]!, m[2]!],
      ),
    );
    if (form.includes('name="login"')) {
      body.set("login", login);
      body.set("password", "any");
    }
    res = await go(new URL(action, start), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
  }
  throw new Error("too many redirects");
}

export interface Protected {
  readonly url: string;
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

/** The OAuth-protected MCP fixture, trusting `issuer`. */
export async function startProtectedServer(issuer: string, flags: string[] = []): Promise<Protected> {
  const proc = spawn(process.execPath, [join(ROOT, "test/fixtures/oauth-mcp-server.mjs"), issuer, ...flags], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  const url = await new Promise<string>((ok, fail) => {
    proc.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      const m = /listening on (\S+)/.exec(err);
      if (m) ok(m[1]!);
    });
    proc.once("exit", (code) => fail(new Error(`fixture exited with ${code}: ${err}`)));
  });
  const exited = new Promise<void>((ok) => proc.once("exit", () => ok()));
  return {
    url,
    proc,
    stop: async () => {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      await exited;
    },
  };
}

/** The cookies a response sets, as `name=value` pairs. */
const setCookies = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]!);

/**
 * Opens toolpacks' start page (no bearer: the URL's ticket says who) and answers its question as a person would:
 * continues as the principal it names, or (a shared upstream) signs in with an administrator's `token`. Returns
 * the start page's redirect to the AS (303), or its refusal.
 */
export async function confirmStart(startUrl: string, token?: string): Promise<Response> {
  const page = await fetch(startUrl, { redirect: "manual" });
  if (page.status !== 200) return page;
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
  const confirm = /name="confirm" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !confirm) throw new Error(`the start page asked nothing: ${html}`);
  const form = new URLSearchParams({ confirm, ...(token ? { token } : {}) });
  return fetch(new URL(action, startUrl), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: setCookies(page).join("; ") },
    body: form,
  });
}

/**
 * A principal's browser through toolpacks' own start page: confirms it (see confirmStart), signs in and consents
 * at the AS as `login`, and lands on toolpacks' callback with the binding cookie.
 */
export async function authorizeThrough(startUrl: string, login: string, token?: string): Promise<Response> {
  const start = await confirmStart(startUrl, token);
  if (start.status !== 303 && start.status !== 302)
    throw new Error(`the start page answered ${start.status}: ${await start.text()}`);
  const callback = await authorizeAs(start.headers.get("location")!, login);
  return fetch(callback, { headers: { cookie: setCookies(start).join("; ") } });
}
