/** `upstreams.NAME.oauth`: how it compiles, and every mistake reported at its line and column. */
import { describe, expect, test } from "vitest";
import { catalogOf, errorsOf } from "../helpers/catalog.js";

const AUTH = 'auth: { tokens: ["token-of-at-least-8"] }\n';

describe("upstreams.NAME.oauth", () => {
  test("a per-user block compiles with its values; the grant defaults to authorization_code", () => {
    const u = catalogOf(
      `${AUTH}upstreams:\n  notion:\n    url: https://mcp.notion.com/mcp\n    oauth:\n      mode: per-user\n      scopes: [read]\n`,
    ).upstreams.get("notion")!;
    expect(u.oauth).toEqual({ mode: "per-user", grant: "authorization_code", scopes: ["read"] });
  });

  test("a pre-registered client takes its secret from the environment, and the catalog knows it as a secret", () => {
    const c = catalogOf(
      "upstreams:\n  asana:\n    url: https://mcp.asana.com/v2/mcp\n    oauth:\n      mode: shared\n      client_id: abc\n      client_secret: ${ASANA_SECRET}\n      issuer: https://app.asana.com\n",
      { ASANA_SECRET: "s3cret-value-123" },
    );
    expect(c.upstreams.get("asana")!.oauth).toMatchObject({
      client_id: "abc",
      client_secret: "s3cret-value-123",
    });
    expect(c.secrets.get("s3cret-value-123")).toBe("${ASANA_SECRET}");
    expect(c.upstreams.get("asana")!.display.oauth?.client_secret).toBe("${ASANA_SECRET}");
  });

  test("an unknown key, a bad mode and a non-https issuer are reported where they are written", () => {
    expect(
      errorsOf(
        "upstreams:\n  n:\n    url: https://x/mcp\n    oauth:\n      mode: everyone\n      scope: [a]\n      issuer: ftp://x\n",
      ),
    ).toEqual([
      expect.stringMatching(/^packs\.yaml:5:13: .*mode/),
      expect.stringMatching(/^packs\.yaml:6:7: .*scope.*did you mean "scopes"/),
    ]);
    expect(
      errorsOf(
        "upstreams:\n  n:\n    url: https://x/mcp\n    oauth:\n      mode: shared\n      issuer: ftp://x\n",
      ),
    ).toEqual(["packs.yaml:6:15: upstreams.n.oauth.issuer must be an https URL"]);
  });

  test("client_credentials needs a client id and secret, and a shared mode", () => {
    expect(
      errorsOf(
        `${AUTH}upstreams:\n  n:\n    url: https://x/mcp\n    oauth:\n      mode: per-user\n      grant: client_credentials\n`,
      ),
    ).toEqual([
      expect.stringMatching(
        /^packs\.yaml:6:7: upstreams\.n\.oauth: grant client_credentials needs client_id and client_secret/,
      ),
      expect.stringMatching(
        /^packs\.yaml:6:13: upstreams\.n\.oauth: client_credentials is machine to machine/,
      ),
    ]);
  });

  test("oauth on a stdio upstream is refused at its key", () => {
    expect(errorsOf("upstreams:\n  n:\n    command: x\n    oauth: { mode: shared }\n")).toEqual([
      "packs.yaml:4:5: oauth applies to HTTP upstreams (url), not command (a stdio server takes its credentials from env:)",
    ]);
  });

  test("an upstream with oauth may not also send or forward an Authorization header", () => {
    expect(
      errorsOf(
        "upstreams:\n  n:\n    url: https://x/mcp\n    headers: { Authorization: Bearer x }\n    forward_headers: [authorization]\n    oauth: { mode: shared }\n",
      ),
    ).toEqual([
      expect.stringMatching(/^packs\.yaml:4:16: upstream "n" sets an Authorization header and oauth/),
      expect.stringMatching(/^packs\.yaml:5:22: upstream "n" forwards the client's Authorization header/),
    ]);
  });

  test("per-user without auth: is refused (toolpacks could not tell who is asking)", () => {
    expect(errorsOf("upstreams:\n  n:\n    url: https://x/mcp\n    oauth: { mode: per-user }\n")).toEqual([
      expect.stringMatching(
        /^packs\.yaml:2:3: upstream "n" is oauth mode per-user, but toolpacks does not know who is asking \(no auth:\)/,
      ),
    ]);
  });
  test("admins of a shared grant are identities auth: can prove, each mistake at its line", () => {
    const auth = 'auth:\n  tokens:\n    - { token: "token-of-at-least-8", subject: ops }\n';
    const up = (admins: string, extra = "") =>
      `upstreams:\n  n:\n    url: https://x/mcp\n    oauth:\n      mode: shared\n${extra}      admins: ${admins}\n`;
    expect(catalogOf(`${auth}${up('["static:ops"]')}`).upstreams.get("n")!.oauth?.admins).toEqual([
      "static:ops",
    ]);
    expect(errorsOf(`${auth}${up('["ops", "static:nobody", "oauth:248289"]')}`)).toEqual([
      expect.stringMatching(
        /^packs\.yaml:9:16: .*admins\[0\] must name an identity: static:SUBJECT or oauth:SUB/,
      ),
      expect.stringMatching(
        /^packs\.yaml:9:23: no token of auth\.tokens has the subject "nobody" \(subjects: ops\)/,
      ),
      expect.stringMatching(
        /^packs\.yaml:9:40: oauth:248289 names a user of auth\.oauth's issuer, but there is no auth\.oauth/,
      ),
    ]);
    expect(errorsOf(up('["static:ops"]'))).toEqual([expect.stringMatching(/admins needs auth:/)]);
    expect(
      errorsOf(
        `${auth}${up('["static:ops"]', "      grant: client_credentials\n      client_id: a\n      client_secret: b\n")}`,
      ),
    ).toEqual([expect.stringMatching(/admins: nobody authorizes a client_credentials grant/)]);
    expect(
      errorsOf(
        `${auth}upstreams:\n  n:\n    url: https://x/mcp\n    oauth: { mode: per-user, admins: ["static:ops"] }\n`,
      ),
    ).toEqual([expect.stringMatching(/admins applies to mode: shared/)]);
  });
});
