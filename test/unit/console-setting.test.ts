/** Whether serve offers the console, and where (SPEC §17.1): `ui:` compiled, the options, and the safe default. */
import { describe, expect, test } from "vitest";
import { compileTexts } from "../../src/catalog/load.js";
import { formatConfigError } from "../../src/config/errors.js";
import { envSwitch, type UiInput, uiChoice, uiPathProblem } from "../../src/console/setting.js";

const base: UiInput = { config: {}, host: "127.0.0.1", authenticated: false, mcpPath: "/mcp" };

describe("ui: in the config", () => {
  const compile = (...texts: string[]) =>
    compileTexts(
      texts.map((text, i) => ({
        file: `/cfg/${i}.yaml`,
        text: `${text}\nupstreams:\n  u: { command: x }\n`,
      })),
      {},
    );

  test.each([
    ["ui: false", { enabled: false }],
    ["ui: true", { enabled: true }],
    ["ui: { path: /console }", { path: "/console" }],
    ["ui: { enabled: false, path: /a/b }", { enabled: false, path: "/a/b" }],
    ["name: x", {}],
  ])("%s compiles to %j", (text, ui) => {
    const r = compile(text);
    expect(r.ok && r.catalog.ui).toEqual(ui);
  });

  test("each key comes from the first file that sets it", () => {
    const r = compile("ui: { path: /first }", "ui: false");
    expect(r.ok && r.catalog.ui).toEqual({ path: "/first", enabled: false });
  });

  test.each([["ui: yes please"], ["ui: { path: console }"], ["ui: { pth: /x }"]])(
    "%s is an error at its place",
    (text) => {
      const r = compile(text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors.map(formatConfigError).join("\n")).toMatch(/^\/cfg\/0\.yaml:1:\d+: /);
    },
  );
});

describe("the console's setting", () => {
  test("on by default on loopback, and elsewhere with auth:", () => {
    expect(uiChoice(base)).toEqual({ on: true, path: "/ui" });
    expect(uiChoice({ ...base, host: "::1" })).toEqual({ on: true, path: "/ui" });
    expect(uiChoice({ ...base, host: "0.0.0.0", authenticated: true })).toEqual({ on: true, path: "/ui" });
  });

  test("off by default on another address without auth:, saying how to turn it on", () => {
    const c = uiChoice({ ...base, host: "0.0.0.0" });
    expect(c.on).toBe(false);
    expect("why" in c && c.why).toMatch(/--ui, TOOLPACKS_UI=1 or ui: true/);
  });

  test("asked for, it is on anywhere; refused, it is off anywhere; an option beats the config", () => {
    expect(uiChoice({ ...base, host: "10.0.0.5", config: { enabled: true } }).on).toBe(true);
    expect(uiChoice({ ...base, config: { enabled: false } }).on).toBe(false);
    expect(uiChoice({ ...base, config: { enabled: false }, flag: true }).on).toBe(true);
    expect(uiChoice({ ...base, config: { enabled: true }, flag: false }).on).toBe(false);
  });

  test("the path: the option, then the config, then /ui", () => {
    expect(uiChoice({ ...base, config: { path: "/c" } })).toEqual({ on: true, path: "/c" });
    expect(uiChoice({ ...base, config: { path: "/c" }, path: "/d" })).toEqual({ on: true, path: "/d" });
  });

  test.each([
    ["/mcp", "/mcp"],
    ["/toolsets", "/toolsets"],
    ["/oauth/x", "/oauth"],
    ["/.well-known", "/.well-known"],
    ["/a", "/a/mcp"],
  ])("%s cannot be the console's path (it takes %s)", (path, route) => {
    expect(uiPathProblem(path, route === "/a/mcp" ? "/a/mcp" : "/mcp")).toContain(`route ${route}`);
  });

  test.each([["ui"], ["/"], ["/a/"], ["/a//b"], ["/a/../b"], ["/a?b"]])("%s is no path", (path) => {
    expect(uiPathProblem(path, "/mcp")).toMatch(/^the console path must be/);
  });

  test("TOOLPACKS_UI reads yes and no words; anything else says nothing", () => {
    expect(["1", "true", "ON", " yes "].map(envSwitch)).toEqual([true, true, true, true]);
    expect(["0", "false", "off", "no"].map(envSwitch)).toEqual([false, false, false, false]);
    expect([undefined, "", "maybe"].map(envSwitch)).toEqual([undefined, undefined, undefined]);
  });
});
