/**
 * @module The console's static files, as the build wrote them (dist/ui: built by `npm run build`, shipped in the
 * package, never fetched from elsewhere): read and compressed once, at the first request for each, and answered
 * with an ETag, the encoding the browser takes, and headers that let no inline script or other origin in.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { packageFile } from "../paths.js";

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** File name under the console's path ("" is the page itself) → its file in dist/ui and its type. */
const FILES: Readonly<Record<string, readonly [string, string]>> = {
  "": ["index.html", "text/html; charset=utf-8"],
  "console.js": ["console.js", "text/javascript; charset=utf-8"],
  "console.css": ["console.css", "text/css; charset=utf-8"],
  "icon.svg": ["icon.svg", "image/svg+xml"],
};

/**
 * No inline script or style, no other origin, no plugin, no frame around it, and Trusted Types: a string assigned
 * to innerHTML (or any other HTML sink) throws, so nothing an upstream wrote can become markup by mistake.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

interface Asset {
  readonly type: string;
  readonly etag: string;
  readonly bodies: Readonly<Record<"identity" | "br" | "gzip", Buffer>>;
}

/** The encoding to send: brotli, else gzip, else none, as the request's Accept-Encoding allows. */
export function encodingFor(accept: string | undefined): "br" | "gzip" | "identity" {
  const allowed = new Set(
    (accept ?? "")
      .split(",")
      .map((part) => part.trim().split(";"))
      .filter(([, q]) => !q || Number(q.trim().replace(/^q=/, "")) > 0)
      .map(([name]) => (name ?? "").trim().toLowerCase()),
  );
  return allowed.has("br") ? "br" : allowed.has("gzip") ? "gzip" : "identity";
}

export class Assets {
  private readonly loaded = new Map<string, Promise<Asset | undefined>>();

  has(name: string): boolean {
    return Object.hasOwn(FILES, name);
  }

  private load(name: string): Promise<Asset | undefined> {
    let p = this.loaded.get(name);
    if (!p) {
      const [file, type] = FILES[name]!;
      p = readFile(packageFile(`dist/ui/${file}`)).then(
        async (body) => {
          const [br, gzipped] = await Promise.all([
            brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
            gz(body, { level: 9 }),
          ]);
          const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
          return { type, etag, bodies: { identity: body, br, gzip: gzipped } };
        },
        () => undefined,
      );
      this.loaded.set(name, p);
    }
    return p;
  }

  /** Answers GET of a file; 503 when the build did not write it (the page names the fix). */
  async send(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const asset = await this.load(name);
    if (!asset) {
      this.loaded.delete(name);
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", ...SECURITY_HEADERS });
      res.end("The console's files are not built: run npm run build (they are written to dist/ui).\n");
      return;
    }
    const headers = {
      ...SECURITY_HEADERS,
      "content-type": asset.type,
      etag: asset.etag,
      "cache-control": "no-cache",
      vary: "accept-encoding",
    };
    if (req.headers["if-none-match"] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const encoding = encodingFor(req.headers["accept-encoding"]);
    const body = asset.bodies[encoding];
    res.writeHead(200, {
      ...headers,
      ...(encoding !== "identity" ? { "content-encoding": encoding } : {}),
      "content-length": body.length,
    });
    res.end(body);
  }
}
