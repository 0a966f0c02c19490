/** `serve`'s arguments read before commander loads (serve-early.ts): what prespawn needs, or nothing when unsure. */
import { Command } from "commander";
import { describe, expect, test } from "vitest";
import { registerServe } from "../../src/commands/serve.js";
import { FLAG_OPTIONS, readServeArgs, VALUE_OPTIONS } from "../../src/commands/serve-early.js";

describe("serve's arguments before commander", () => {
  test("the early reader knows every option of serve, and which take a value", () => {
    const program = new Command();
    registerServe(program);
    const serve = program.commands.find((c) => c.name() === "serve")!;
    const takesValue = serve.options.filter((o) => o.required || o.optional).map((o) => o.long);
    const flags = serve.options.filter((o) => !o.required && !o.optional).map((o) => o.long);
    expect(new Set(takesValue)).toEqual(new Set(VALUE_OPTIONS));
    expect(new Set(flags)).toEqual(new Set(FLAG_OPTIONS));
  });

  test.each([
    [
      ["--transport", "stdio", "--toolsets", "only=notes", "a.yaml"],
      { files: ["a.yaml"], stdio: true, toolsets: "only=notes" },
    ],
    [["a.yaml", "--port=0", "--watch", "b.yaml"], { files: ["a.yaml", "b.yaml"], stdio: false }],
    [
      ["--ignore-query-key", "x", "--ignore-query-key=y", "a.yaml"],
      { files: ["a.yaml"], ignoreKeys: ["x", "y"] },
    ],
    [["--toolsets", "one", "--toolsets", "two", "a.yaml"], { toolsets: "two" }],
    [["--", "-odd.yaml"], { files: ["-odd.yaml"] }],
    [["--cache-ttl", "0", "--transport=stdio", "a.yaml"], { files: ["a.yaml"], stdio: true }],
  ])("%j reads as %j", (argv, expected) => {
    expect(readServeArgs(argv, {})).toMatchObject(expected);
  });

  test.each([
    [["--help", "a.yaml"]],
    [["--trnsport", "stdio", "a.yaml"]],
    [["-h"]],
    [["--transport", "sse", "a.yaml"]],
    [["a.yaml", "--toolsets"]],
    [["--port", "4040"]],
  ])("%j is left to commander", (argv) => {
    expect(readServeArgs(argv, {})).toBeUndefined();
  });

  test("the environment gives the transport and selection unless an option does", () => {
    const env = { TOOLPACKS_TRANSPORT: "stdio", TOOLPACKS_TOOLSETS: "notes" };
    expect(readServeArgs(["a.yaml"], env)).toMatchObject({ stdio: true, toolsets: "notes" });
    expect(readServeArgs(["--transport", "streamable-http", "--toolsets", "", "a.yaml"], env)).toMatchObject({
      stdio: false,
      toolsets: "",
    });
  });
});
