/**
 * A real authorization server (oidc-provider) in-process on 127.0.0.1, for resource-server tests: client
 * credentials for minted tokens, and authorization code + PKCE with dynamic registration for SDK clients (a
 * user signs in with `authorizeAs` from ./oauth.ts; `accounts` gives each login's extra token claims).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { findAccount, loadOidcProvider } from "./oidc-provider.js";

export const CLIENT_SECRET = "client-secret-never-logged-0123456789";
const SCOPES = "mcp notes:read notes:write admin";

export interface SigningKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  return {
    kid,
    privateKey,
    publicJwk,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" },
  };
}

interface TokenRequest {
  /**
   * `jwt` (default): a JWT access token; `opaque`: a reference token, for introspection; `toolpacks`: a JWT
   * of another client (another subject: a client-credentials token's `sub` is its client id).
   */
  readonly client?: "jwt" | "opaque" | "toolpacks";
  readonly scope?: string;
  readonly resource?: string;
  /** Added to the JWT payload (e.g. `groups`, `nbf`). */
  readonly claims?: Record<string, unknown>;
}

export interface TestIssuer {
  readonly issuer: string;
  readonly key: SigningKey;
  /** Requests by path, e.g. `/jwks`, `/.well-known/oauth-authorization-server`. */
  readonly hits: Map<string, number>;
  token(request?: TokenRequest): Promise<string>;
  /** Restarts the provider (same issuer and port) with a new signing key. */
  rotate(kid: string): Promise<SigningKey>;
  close(): Promise<void>;
}

export interface IssuerOptions {
  /** The default resource of a token request (a function when it is known only later). */
  readonly audience: string | (() => string);
  /** Paths answered 404 (e.g. the RFC 8414 document, to exercise the OpenID fallback). */
  readonly hide?: readonly string[];
  /** Serve under another issuer name (same keys), e.g. for a wrong-issuer token. */
  readonly keys?: SigningKey;
  /** Login → claims added to that user's access tokens (e.g. `{ groups: ["eng"] }`). */
  readonly accounts?: Readonly<Record<string, Record<string, unknown>>>;
}

const audienceOf = (o: IssuerOptions) => (typeof o.audience === "string" ? o.audience : o.audience());

export async function startIssuer(options: IssuerOptions): Promise<TestIssuer> {
  const { default: Provider } = await loadOidcProvider();
  const server: Server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const hits = new Map<string, number>();
  let extra: Record<string, unknown> = {};
  let key = options.keys ?? (await signingKey("key-1"));
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => {};

  const build = (k: SigningKey) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: "jwt",
          client_secret: CLIENT_SECRET,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
        },
        {
          client_id: "opaque",
          client_secret: CLIENT_SECRET,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
        },
        {
          client_id: "toolpacks",
          client_secret: CLIENT_SECRET,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
        },
      ],
      jwks: { keys: [k.privateJwk] },
      findAccount,
      ttl: {
        ClientCredentials: 300,
        AccessToken: 300,
        AuthorizationCode: 60,
        Grant: 3600,
        Interaction: 600,
        RefreshToken: 3600,
        Session: 3600,
      },
      pkce: { required: () => true },
      // SDK clients register with the scope of the first challenge (mcp), so it must be a known scope. A known
      // scope is also one a registered client may never ask beyond: the others stay resource-only, so that a
      // client can step up to them (oidc-provider refuses a known scope the registration did not name).
      scopes: ["openid", "offline_access", "mcp"],
      extraTokenClaims: (_ctx, token) => {
        const id = (token as { accountId?: string }).accountId;
        return id ? (options.accounts?.[id] ?? {}) : {};
      },
      features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true, allowedPolicy: async () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audienceOf(options),
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string, client: { clientId: string }) => ({
            scope: SCOPES,
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: client.clientId === "opaque" ? "opaque" : "jwt",
          }),
        },
      },
      formats: {
        customizers: {
          jwt: (_ctx: unknown, _token: unknown, jwt: { payload: Record<string, unknown> }) => {
            Object.assign(jwt.payload, extra);
          },
        },
      },
    }).callback();

  handler = build(key);
  server.on("request", (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (options.hide?.includes(path)) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });

  return {
    issuer,
    hits,
    get key() {
      return key;
    },
    async token(request = {}) {
      extra = request.claims ?? {};
      const client = request.client ?? "jwt";
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${client}:${CLIENT_SECRET}`).toString("base64")}`,
        },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          resource: request.resource ?? audienceOf(options),
          scope: request.scope ?? "mcp",
        }),
      });
      const body = (await res.json()) as { access_token?: string };
      extra = {};
      if (!res.ok || !body.access_token)
        throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async rotate(kid) {
      key = await signingKey(kid);
      handler = build(key);
      return key;
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
