/** `state:` and `tracing:` in packs.yaml (and their environment variables): plans, defaults, positioned errors. */
import { describe, expect, test } from "vitest";
import { compileTexts } from "../../src/catalog/load.js";
import type { Catalog } from "../../src/catalog/types.js";
import { formatConfigError } from "../../src/config/errors.js";

const FILE = "/cfg/packs.yaml";
const UP = "upstreams: { u: { command: x } }\n";

function compiled(yaml: string, env: Record<string, string> = {}): Catalog {
  const r = compileTexts([{ file: FILE, text: UP + yaml }], env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.catalog;
}

function errors(yaml: string, env: Record<string, string> = {}): string[] {
  const r = compileTexts([{ file: FILE, text: UP + yaml }], env);
  return r.ok ? [] : r.errors.map(formatConfigError);
}

describe("state:", () => {
  test("without it the store is memory with 8 MiB per session and 256 MiB in total, and tracing is off", () => {
    const c = compiled("");
    expect(c.state).toMatchObject({
      kind: "memory",
      limits: { maxOwnerBytes: 8 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 },
    });
    expect(c.stateMaxBytes).toBe(8 * 1024 * 1024);
    expect(c.tracing).toBeUndefined();
  });

  test("a Redis URL takes its password from the environment, is namespaced by name:, and is shown redacted", () => {
    const c = compiled(
      "name: prod-gw\nstate:\n  store: redis://:${REDIS_PASSWORD}@redis:6379/2\n  max_session_bytes: 2048\n  max_total_bytes: 4096\n",
      { REDIS_PASSWORD: "s3cret-pass" },
    );
    expect(c.state).toMatchObject({
      kind: "redis",
      url: "redis://:s3cret-pass@redis:6379/2",
      description: "redis://:***@redis:6379/2",
      name: "prod-gw",
      limits: { maxOwnerBytes: 2048, maxTotalBytes: 4096 },
    });
    expect(c.secrets.get("s3cret-pass")).toBe("${REDIS_PASSWORD}");
  });

  test("TOOLPACKS_STATE_STORE overrides state.store; rediss:// is accepted", () => {
    const c = compiled("state: { store: memory }\n", {
      TOOLPACKS_STATE_STORE: "rediss://cache.internal:6380/0",
    });
    expect(c.state).toMatchObject({ kind: "redis", description: "rediss://cache.internal:6380/0" });
  });

  test("a store that is not memory or a Redis URL is refused at its key, without the password", () => {
    expect(errors("state:\n  store: 'http://:${PW}@x:1/0'\n", { PW: "hunter22" })).toEqual([
      "/cfg/packs.yaml:3:10: state.store: unsupported store http (use memory, redis://HOST:PORT/DB or rediss://HOST:PORT/DB)",
    ]);
    expect(errors("state: { store: 'redis://x:1/db' }\n")).toEqual([
      expect.stringMatching(/^\/cfg\/packs\.yaml:2:17: state\.store: database "db" is not a number/),
    ]);
  });

  test("a malformed TOOLPACKS_STATE_STORE is reported naming the variable, at the state: section or the file", () => {
    expect(errors("state: { max_session_bytes: 2048 }\n", { TOOLPACKS_STATE_STORE: "postgres://x" })).toEqual(
      [expect.stringMatching(/^\/cfg\/packs\.yaml:2:1: TOOLPACKS_STATE_STORE: unsupported store postgres/)],
    );
    expect(errors("", { TOOLPACKS_STATE_STORE: "not a url" })).toEqual([
      expect.stringMatching(/^\/cfg\/packs\.yaml:1:1: TOOLPACKS_STATE_STORE: "not a url" is not a URL/),
    ]);
  });

  test("a total budget below one session's budget is refused at max_total_bytes", () => {
    expect(errors("state:\n  max_session_bytes: 8192\n  max_total_bytes: 4096\n")).toEqual([
      "/cfg/packs.yaml:4:20: state.max_total_bytes: 4096 is below state.max_session_bytes (8192) (make the total at least one owner's budget)",
    ]);
  });

  test("an unknown key or a budget under 1 KiB is a schema error", () => {
    expect(errors("state: { stor: memory, max_total_bytes: 10 }\n").join("\n")).toMatch(/stor/);
    expect(errors("state: { max_total_bytes: 10 }\n").join("\n")).toMatch(/max_total_bytes/);
  });

  test("each key comes from the first file that sets it", () => {
    const r = compileTexts(
      [
        { file: "/a.yaml", text: `${UP}state: { max_session_bytes: 2048 }\n` },
        { file: "/b.yaml", text: "state: { store: 'redis://r:6379/0', max_session_bytes: 4096 }\n" },
      ],
      {},
    );
    if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
    expect(r.catalog.state).toMatchObject({ kind: "redis", limits: { maxOwnerBytes: 2048 } });
  });
});

describe("tracing:", () => {
  test("an endpoint turns tracing on, exporting to its /v1/traces", () => {
    const c = compiled("tracing: { endpoint: 'http://otel:4318/', service_name: gw, sample_ratio: 0.25 }\n");
    expect(c.tracing).toEqual({ url: "http://otel:4318/v1/traces", serviceName: "gw", sampleRatio: 0.25 });
  });

  test("OTEL_EXPORTER_OTLP_ENDPOINT turns it on without tracing:, OTEL_SDK_DISABLED turns it off", () => {
    expect(compiled("", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).tracing).toMatchObject({
      url: "http://c:4318/v1/traces",
      serviceName: "toolpacks",
    });
    expect(
      compiled("tracing: { endpoint: 'http://c:4318' }\n", { OTEL_SDK_DISABLED: "true" }).tracing,
    ).toBeUndefined();
  });

  test("an endpoint that is not http(s) is refused at its key", () => {
    expect(errors("tracing: { endpoint: 'grpc://c:4317' }\n")).toEqual([
      expect.stringMatching(
        /^\/cfg\/packs\.yaml:2:22: tracing\.endpoint: "grpc:\/\/c:4317" is not an http\(s\) URL/,
      ),
    ]);
    expect(errors("tracing: { endpoint: 'http://c', sample_ratio: 2 }\n").join("\n")).toMatch(/sample_ratio/);
  });
});
