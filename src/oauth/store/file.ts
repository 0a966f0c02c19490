/**
 * @module The encrypted file token store: one AES-256-GCM file per entry under `STATE/oauth` (0700, files 0600),
 * named by an HMAC of the entry's key (no principal or issuer in a file name), written to a temp file and renamed.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
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

function seal(key: Buffer, aad: string, plain: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Undefined when the file was not sealed with this key for this entry (wrong key, altered, or moved). */
function unseal(key: Buffer, aad: string, data: Buffer): string | undefined {
  if (data.length < 29 || data[0] !== VERSION) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, data.subarray(1, 13)).setAAD(Buffer.from(aad));
    decipher.setAuthTag(data.subarray(13, 29));
    return Buffer.concat([decipher.update(data.subarray(29)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
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

  async put(key: string, value: string): Promise<void> {
    await writeAtomic(this.dir, this.fileOf(key), seal(this.encKey, key, value));
  }

  async delete(key: string): Promise<void> {
    await unlink(join(this.dir, this.fileOf(key))).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}
