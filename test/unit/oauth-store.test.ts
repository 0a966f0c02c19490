/** The encrypted file token store, on a real file system in a temp directory. */
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { OAuthFlowError } from "../../src/oauth/errors.js";
import { EncryptedFileTokenStore } from "../../src/oauth/store/file.js";
import { MemoryTokenStore } from "../../src/oauth/store/memory.js";
import { openTokenStore } from "../../src/oauth/store/open.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import type { GrantRecord, OAuthUpstream } from "../../src/oauth/types.js";
import { tempDir } from "../helpers/proc.js";

const dirs: ReturnType<typeof tempDir>[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.dir;
};

const PRINCIPAL = "alice@example.com";
const ISSUER = "https://as.example.com/tenant-7";
const grant: GrantRecord = {
  issuer: ISSUER,
  token_endpoint: `${ISSUER}/token`,
  client: {
    source: "registered",
    client_id: "client-abc",
    method: "client_secret_basic",
    slot: "loopback/cb",
  },
  resource: "https://mcp.example.com/mcp",
  grant: "authorization_code",
  scopes: ["mcp:tools"],
  access_token: "at_Q2x9Lm4Rt8Vb1Nc6",
  refresh_token: "rt_Hy7Kd3Pw0Zs5Fe2J",
  obtained_at: 1,
};

describe("encrypted file store", () => {
  test("files are 0600 in a 0700 directory, named by digests, and hold no readable plaintext", async () => {
    const state = fresh();
    const store = await EncryptedFileTokenStore.open(state, randomBytes(32));
    await new CredentialRecords(store).putGrant("github", PRINCIPAL, grant);
    const dir = join(state, "oauth");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files.filter((f) => f.endsWith(".tok"))).toHaveLength(1);
    for (const f of files) {
      expect(f).toMatch(/^([0-9a-f]{64}\.tok|key-check)$/);
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      const bytes = readFileSync(join(dir, f));
      for (const plain of [
        grant.access_token,
        grant.refresh_token!,
        PRINCIPAL,
        ISSUER,
        "github",
        "access_token",
      ]) {
        expect(bytes.includes(Buffer.from(plain))).toBe(false);
        expect(bytes.toString("base64").includes(Buffer.from(plain).toString("base64"))).toBe(false);
      }
    }
  });

  test("what is put comes back; deleted is gone; no temp file is left behind", async () => {
    const state = fresh();
    const store = await EncryptedFileTokenStore.open(state, randomBytes(32));
    await store.put("k", "v1");
    await store.put("k", "v2");
    expect(await store.get("k")).toBe("v2");
    expect(await store.get("other")).toBeUndefined();
    await store.delete("k");
    await store.delete("k");
    expect(await store.get("k")).toBeUndefined();
    expect(readdirSync(join(state, "oauth")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  test("a different key is refused clearly at open, without showing either key", async () => {
    const state = fresh();
    const key = randomBytes(32);
    await (await EncryptedFileTokenStore.open(state, key)).put("k", "secret value");
    const other = randomBytes(32);
    const err = await EncryptedFileTokenStore.open(state, other).catch((e) => e);
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(err.message).toMatch(/TOOLPACKS_TOKEN_KEY is not the key the credentials in .* were written with/);
    for (const k of [key, other])
      for (const form of [k.toString("hex"), k.toString("base64"), k.toString("base64url")])
        expect(err.message).not.toContain(form);
    await expect((await EncryptedFileTokenStore.open(state, key)).get("k")).resolves.toBe("secret value");
  });

  test("a file moved to another entry's name does not decrypt as that entry", async () => {
    const state = fresh();
    const store = await EncryptedFileTokenStore.open(state, randomBytes(32));
    const records = new CredentialRecords(store);
    await records.putGrant("github", "mallory", { ...grant, access_token: "mallory-token" });
    await records.putGrant("github", "alice", grant);
    const dir = join(state, "oauth");
    const before = new Set(readdirSync(dir));
    await records.putGrant("github", "bob", grant);
    const bobs = readdirSync(dir).find((f) => !before.has(f))!;
    // Another principal's file copied over Bob's: the ciphertext is bound to its entry, so it is refused.
    const another = [...before].find((f) => f.endsWith(".tok"))!;
    copyFileSync(join(dir, another), join(dir, bobs));
    await expect(records.grant("github", "bob")).rejects.toMatchObject({ code: "store" });
  });

  test("entries past their expiry (abandoned flows) are swept; others stay", async () => {
    const state = fresh();
    const store = await EncryptedFileTokenStore.open(state, randomBytes(32));
    await store.put("grant", "kept");
    await store.put("flow-old", "abandoned", { expiresAt: 1_000 });
    await store.put("flow-new", "in progress", { expiresAt: Date.now() + 600_000 });
    await store.sweep();
    expect(await store.get("grant")).toBe("kept");
    expect(await store.get("flow-old")).toBeUndefined();
    expect(await store.get("flow-new")).toBe("in progress");
    expect(readdirSync(join(state, "oauth")).filter((f) => f.endsWith(".tok"))).toHaveLength(2);
  });

  test("a directory left readable by others is closed to 0700 on open", async () => {
    const state = fresh();
    mkdirSync(join(state, "oauth"), { mode: 0o755 });
    chmodSync(join(state, "oauth"), 0o755);
    await EncryptedFileTokenStore.open(state, randomBytes(32));
    expect(statSync(join(state, "oauth")).mode & 0o777).toBe(0o700);
  });
});

describe("the store serving opens", () => {
  const up = (oauth: OAuthUpstream["oauth"]): OAuthUpstream => ({ name: "gh", url: "https://x/mcp", oauth });

  test("per-user OAuth refuses to start without TOOLPACKS_TOKEN_KEY, naming it and the upstream", async () => {
    const err = await openTokenStore(fresh(), {}, [up({ mode: "per-user" })]).catch((e) => e);
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(err.message).toMatch(/TOOLPACKS_TOKEN_KEY is not set: OAuth for upstream gh \(per-user\)/);
  });

  test("a malformed key is an error even where memory would do", async () => {
    const cc = up({ mode: "shared", grant: "client_credentials", client_id: "a", client_secret: "b" });
    await expect(openTokenStore(fresh(), { TOOLPACKS_TOKEN_KEY: "short" }, [cc])).rejects.toThrow(
      /not a 32-byte key/,
    );
    expect(await openTokenStore(fresh(), {}, [cc])).toBeInstanceOf(MemoryTokenStore);
    expect(await openTokenStore(fresh(), {}, [])).toBeUndefined();
  });

  test("with the key, credentials go to encrypted files", async () => {
    const env = { TOOLPACKS_TOKEN_KEY: randomBytes(32).toString("base64") };
    expect(await openTokenStore(fresh(), env, [up({ mode: "per-user" })])).toBeInstanceOf(
      EncryptedFileTokenStore,
    );
  });
});
