/** @module The CLI's loopback redirect listener (RFC 8252 §7.3): 127.0.0.1, one callback, then it closes. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { OAuthFlowError } from "./errors.js";
import { donePage, failedPage, PAGE_HEADERS } from "./page.js";
import { OAUTH_PATHS } from "./paths.js";

export interface LoopbackListener {
  readonly redirectUri: string;
  /**
   * Waits for the callback and answers it with what `handle` decides: resolves with `handle`'s result, rejects
   * with its error (after showing it in the browser), or on timeout.
   */
  callback<T>(
    handle: (params: URLSearchParams) => Promise<T>,
    upstream: string,
    timeoutMs: number,
  ): Promise<T>;
  close(): Promise<void>;
}

export async function listenLoopback(port = 0): Promise<LoopbackListener> {
  const server: Server = createServer();
  await new Promise<void>((ok, fail) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      fail(
        err.code === "EADDRINUSE"
          ? new OAuthFlowError(
              "config",
              `port ${port} on 127.0.0.1 is in use: free it, or pass another --port`,
            )
          : err,
      ),
    );
    server.listen(port, "127.0.0.1", () => ok());
  });
  const actual = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return {
    redirectUri: `http://127.0.0.1:${actual}${OAUTH_PATHS.callback}`,
    close,
    callback: (handle, upstream, timeoutMs) =>
      new Promise((ok, fail) => {
        let settled = false;
        const timer = setTimeout(() => {
          settled = true;
          fail(
            new OAuthFlowError(
              "authorization",
              `no authorization arrived within ${Math.round(timeoutMs / 1000)} s`,
            ),
          );
        }, timeoutMs);
        server.on("request", (req, res) => {
          const url = new URL(req.url ?? "/", "http://127.0.0.1");
          if (req.method !== "GET" || url.pathname !== OAUTH_PATHS.callback || settled) {
            res.writeHead(404, PAGE_HEADERS).end(failedPage("Nothing here."));
            return;
          }
          settled = true;
          clearTimeout(timer);
          handle(url.searchParams).then(
            (result) => {
              res.writeHead(200, PAGE_HEADERS).end(donePage(upstream), () => ok(result));
            },
            (err: unknown) => {
              const text =
                err instanceof OAuthFlowError ? err.message : "the authorization could not be completed";
              res.writeHead(400, PAGE_HEADERS).end(failedPage(text), () => fail(err));
            },
          );
        });
      }),
  };
}
