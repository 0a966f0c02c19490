/**
 * The test authorization servers (test/helpers/oidc.ts, test/helpers/oauth.ts: real oidc-provider) say nothing
 * about what the tests do on purpose (Node 20, state in memory, dev interactions, their own accounts and keys),
 * so a warning in the test output is one worth reading; a warning nobody provoked on purpose still shows.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, expect, test, vi } from "vitest";

const warned: string[] = [];
const spy = vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
  warned.push(args.map(String).join(" "));
});
const infos = vi.spyOn(console, "info").mockImplementation((...args: unknown[]) => {
  warned.push(args.map(String).join(" "));
});
afterAll(() => {
  spy.mockRestore();
  infos.mockRestore();
});

test("the test authorization servers print no oidc-provider warning for what the tests do on purpose, and still show any other", async () => {
  // Loaded after the spy: oidc-provider warns about the runtime as it loads.
  const { startAuthServer, authorizeAs } = await import("../helpers/oauth.js");
  const { startIssuer } = await import("../helpers/oidc.js");
  const resource = "http://127.0.0.1:9/mcp";
  const as = await startAuthServer({ resource: () => resource });
  const issuer = await startIssuer({ audience: resource });
  try {
    expect(await issuer.token()).toMatch(/^ey/);
    // A person signs in through the dev interactions, with a client registered on the spot.
    const reg = await fetch(`${as.issuer}/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: ["http://127.0.0.1:9/cb"],
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
      }),
    });
    const { client_id } = (await reg.json()) as { client_id: string };
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL(`${as.issuer}/auth`);
    for (const [k, v] of Object.entries({
      client_id,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:9/cb",
      scope: "openid",
      resource,
      state: "s",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(k, v);
    const back = await authorizeAs(authorize.href, "alice");
    expect(back.searchParams.get("code")).toBeTruthy();
  } finally {
    await issuer.close();
    await as.stop();
  }
  expect(warned.filter((w) => w.includes("oidc-provider"))).toEqual([]);
  console.warn("oidc-provider WARNING: already parsed request body detected (not on purpose)");
  expect(warned).toEqual(["oidc-provider WARNING: already parsed request body detected (not on purpose)"]);
});
