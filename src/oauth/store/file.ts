/**
 * @module The encrypted file token store: one AES-256-GCM file per entry under `STATE/oauth` (0700, files 0600),
 * named by an HMAC of the entry's key (no principal or issuer in a file name), written to a temp file and renamed.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { OAuthFlowError } from "../errors.js";
import type { TokenStore } from "../types.js";
import { TOKEN_KEY_ENV } from "./key.js";

const VERSION = 1;
const CHECK_FILE = "key-check";
const CHECK_TEXT = "toolpacks token store";

function subkey(key: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `toolpacks token store ${label}`, 32));
}

/** Layout: version (1) | expiry, epoch ms, 0 for none (8) | iv (12) | tag (16) | ciphertext. */
const HEADER = 1 + 8;

function seal(key: Buffer, aad: string, plain: string, expiresAt = 0): Buffer {
  const head = Buffer.alloc(HEADER);
  head[0] = VERSION;
  head.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(expiresAt))), 1);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.concat([head, Buffer.from(aad)]));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return Buffer.concat([head, iv, cipher.getAuthTag(), body]);
}

/** Undefined when the file was not sealed with this key for this entry (wrong key, altered, or moved). */
function unseal(key: Buffer, aad: string, data: Buffer): string | undefined {
  if (data.length < HEADER + 28 || data[0] !== VERSION) return undefined;
  try {
    const iv = data.subarray(HEADER, HEADER + 12);
    const decipher = createDecipheriv("aes-256-gcm", key, iv).setAAD(
      Buffer.concat([data.subarray(0, HEADER), Buffer.from(aad)]),
    );
    decipher.setAuthTag(data.subarray(HEADER + 12, HEADER + 28));
    return Buffer.concat([decipher.update(data.subarray(HEADER + 28)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/** The expiry in a file's (authenticated) header; 0 when none. */
function expiryOf(head: Buffer): number {
  return head.length >= HEADER && head[0] === VERSION ? Number(head.readBigUInt64BE(1)) : 0;
}

async function writeAtomic(dir: string, name: string, data: Buffer): Promise<void> {
  const temp = join(dir, `.${name}.${randomBytes(6).toString("hex")}.tmp`);
  const fh = await open(temp, "wx", 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(temp, join(dir, name));
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

export class EncryptedFileTokenStore implements TokenStore {
  private constructor(
    readonly dir: string,
    private readonly encKey: Buffer,
    private readonly nameKey: Buffer,
  ) {}

  /** Opens (creating) `stateDir/oauth`; refuses a key that differs from the one the directory was written with. */
  static async open(stateDir: string, key: Buffer): Promise<EncryptedFileTokenStore> {
    const dir = join(stateDir, "oauth");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (((await stat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700);
    const store = new EncryptedFileTokenStore(dir, subkey(key, "encryption"), subkey(key, "names"));
    let check: Buffer | undefined;
    try {
      check = await readFile(join(dir, CHECK_FILE));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    if (!check) await writeAtomic(dir, CHECK_FILE, seal(store.encKey, CHECK_FILE, CHECK_TEXT));
    else if (unseal(store.encKey, CHECK_FILE, check) !== CHECK_TEXT)
      throw new OAuthFlowError(
        "key",
        `${TOKEN_KEY_ENV} is not the key the credentials in ${dir} were written with: use that key, or remove the directory to authorize again`,
      );
    return store;
  }

  private fileOf(key: string): string {
    return `${createHmac("sha256", this.nameKey).update(key).digest("hex")}.tok`;
  }

  async get(key: string): Promise<string | undefined> {
    let data: Buffer;
    try {
      data = await readFile(join(this.dir, this.fileOf(key)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    const plain = unseal(this.encKey, key, data);
    if (plain === undefined)
      throw new OAuthFlowError(
        "store",
        `a credentials file in ${this.dir} cannot be decrypted with ${TOKEN_KEY_ENV} (altered, or written with another key)`,
      );
    return plain;
  }

  async put(key: string, value: string, options: { readonly expiresAt?: number } = {}): Promise<void> {
    await writeAtomic(this.dir, this.fileOf(key), seal(this.encKey, key, value, options.expiresAt));
    if (options.expiresAt !== undefined && Date.now() - this.#swept > 60_000) await this.sweep();
  }

  #swept = 0;

  /** Deletes entries past their expiry (abandoned flows), reading only each file's header. */
  async sweep(now = Date.now()): Promise<void> {
    this.#swept = now;
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith(".tok")) continue;
      const path = join(this.dir, name);
      const fh = await open(path, "r").catch(() => undefined);
      if (!fh) continue;
      const head = Buffer.alloc(HEADER);
      try {
        await fh.read(head, 0, HEADER, 0);
      } finally {
        await fh.close();
      }
      const expiry = expiryOf(head);
      if (expiry !== 0 && expiry < now) await unlink(path).catch(() => {});
    }
  }

  async delete(key: string): Promise<void> {
    await unlink(join(this.dir, this.fileOf(key))).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}
