/** @module find_tools/call_tool: definitions within 2 KB, argument parsing, the result's shape; and the tokeniser. */
import { describe, expect, it } from "vitest";
import { toolsetsToolDef } from "../../src/proxy/toolsets-tool.js";
import { nameWords, unmatchedNameWords } from "../../src/search/names.js";
import { queryTerms, stem, tokenize } from "../../src/search/tokenize.js";
import {
  deferredToolDefs,
  findToolsResult,
  MAX_QUERY_LENGTH,
  parseCallToolArgs,
  parseFindToolsArgs,
} from "../../src/search/tools.js";

describe("deferred definitions", () => {
  it("find_tools + call_tool + list_server_toolsets list in at most 2 KB, whatever the catalog", () => {
    const bytes = Buffer.byteLength(JSON.stringify({ tools: [...deferredToolDefs, toolsetsToolDef] }));
    expect(bytes).toBeLessThanOrEqual(2048);
  });

  it("find_tools is read-only, idempotent and closed-world; call_tool is neither read-only nor closed", () => {
    const [find, call] = deferredToolDefs;
    expect(find?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(call?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
  });
});

describe("parseFindToolsArgs", () => {
  it("defaults limit to 5 and keeps a toolset", () => {
    expect(parseFindToolsArgs({ query: "x" })).toEqual({ ok: true, value: { query: "x", limit: 5 } });
    expect(parseFindToolsArgs({ query: "x", limit: 20, toolset: "t" })).toEqual({
      ok: true,
      value: { query: "x", limit: 20, toolset: "t" },
    });
  });

  it.each([
    [undefined],
    [[]],
    [{}],
    [{ query: 3 }],
    [{ query: "x", limit: 0 }],
    [{ query: "x", limit: 21 }],
    [{ query: "x", limit: 2.5 }],
    [{ query: "x", limit: "5" }],
    [{ query: "x", toolset: 1 }],
    [{ query: "x", max: 3 }],
  ])("refuses %j with a message for the model", (args) => {
    const parsed = parseFindToolsArgs(args);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message.length).toBeGreaterThan(0);
  });
});

describe("find_tools' query bound", () => {
  it("a query of 1,024 characters is searched; one character more is refused, naming the bound", () => {
    expect(MAX_QUERY_LENGTH).toBe(1024);
    expect(parseFindToolsArgs({ query: "x".repeat(MAX_QUERY_LENGTH) }).ok).toBe(true);
    const over = parseFindToolsArgs({ query: "x".repeat(MAX_QUERY_LENGTH + 1) });
    expect(over).toEqual({ ok: false, message: expect.stringContaining("at most 1024 characters") });
  });

  it("the bound counts characters as JSON Schema's maxLength does (code points): 1,024 emoji pass, 1,025 do not", () => {
    expect(parseFindToolsArgs({ query: "🎉".repeat(MAX_QUERY_LENGTH) }).ok).toBe(true);
    expect(parseFindToolsArgs({ query: "🎉".repeat(MAX_QUERY_LENGTH + 1) }).ok).toBe(false);
  });

  it("find_tools' schema tells the model the bound", () => {
    const [find] = deferredToolDefs;
    expect(find?.inputSchema).toMatchObject({ properties: { query: { maxLength: MAX_QUERY_LENGTH } } });
  });
});

describe("parseCallToolArgs", () => {
  it("takes a name and an arguments object, which defaults to {}", () => {
    expect(parseCallToolArgs({ name: "a", arguments: { x: 1 } })).toEqual({
      ok: true,
      value: { name: "a", arguments: { x: 1 } },
    });
    expect(parseCallToolArgs({ name: "a" })).toEqual({ ok: true, value: { name: "a", arguments: {} } });
  });

  it.each([[null], [{}], [{ name: "" }], [{ name: "a", arguments: [] }], [{ name: "a", x: 1 }]])(
    "refuses %j",
    (args) => {
      expect(parseCallToolArgs(args).ok).toBe(false);
    },
  );

  it("a tool argument put beside name is refused with a hint to nest it", () => {
    const parsed = parseCallToolArgs({ name: "a", path: "/" });
    expect(parsed).toEqual({ ok: false, message: expect.stringContaining('"arguments"') });
  });
});

describe("findToolsResult", () => {
  it("gives the hits as structuredContent and the same JSON as text", () => {
    const result = findToolsResult({
      tools: [{ name: "a", inputSchema: { type: "object" }, toolset: "t" }],
      total: 7,
    });
    expect(result.structuredContent).toEqual({
      tools: [{ name: "a", inputSchema: { type: "object" }, toolset: "t" }],
      total: 7,
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  });
});

describe("tokenize", () => {
  it.each([
    ["createIssue", ["create", "issue", "create_issue"]],
    ["create_issue", ["create", "issue", "create_issue"]],
    ["create-issue", ["create", "issue", "create_issue"]],
    ["API-post-search", ["api", "post", "search", "api_post_search"]],
    ["getHTTPResponse", ["get", "http", "response", "get_http_response"]],
    ["list_open-PRs", ["list", "open", "pr", "list_open_prs"]],
    ["owner/repo", ["owner", "repo", "owner_repo"]],
    ["linear_getIssueById", ["linear", "get", "issue", "by", "id", "linear_get_issue_by_id"]],
    ["context7", ["context", "7", "context_7"]],
    ["version 2.0.1, please.", ["version", "2", "0", "1", "please"]],
  ])("%j → %j", (text, terms) => {
    expect(tokenize(text)).toEqual(terms);
  });

  it("an identifier of 200,000 words is split without overflowing the stack (a tool's text is an upstream's)", () => {
    const terms = tokenize("aB".repeat(200_000));
    expect(terms).toHaveLength(200_002); // a, Ba × 199,999, B, and the whole identifier
    expect(terms.slice(0, 2)).toEqual(["a", "ba"]);
  });
});

describe("name words", () => {
  it("a name's words, stemmed as the index stores them, leave out its toolset's words (a server prefix) and the whole identifier", () => {
    expect(nameWords("desktop_commander_read_file", "desktop-commander")).toEqual(["read", "fil"]);
    expect(nameWords("maps_reverse_geocode", "maps")).toEqual(["revers", "geocod"]);
  });

  it("a name word counts as matched only when the query matched it in the name field", () => {
    const words = ["revers", "geocod"];
    expect(unmatchedNameWords(words, { geocod: ["name", "summary"] })).toBe(1);
    expect(unmatchedNameWords(words, { geocod: ["summary"], revers: ["description"] })).toBe(2);
    expect(unmatchedNameWords(words, { geocod: ["name"], revers: ["name"] })).toBe(0);
  });
});

describe("stem and stop words", () => {
  it.each([
    ["issues", "issu"],
    ["issue", "issu"],
    ["creating", "creat"],
    ["created", "creat"],
    ["create", "creat"],
    ["repositories", "repository"],
    ["running", "run"],
    ["installed", "install"],
    ["status", "status"],
    ["files", "fil"],
    ["get", "get"],
    ["reviewers", "review"],
    ["installer", "install"],
    ["recently", "recent"],
  ])("%s → %s", (word, stemmed) => {
    expect(stem(word)).toBe(stemmed);
  });

  it("a request's filler words are dropped, identifiers are kept whole and marked (no word prefix reaches them)", () => {
    expect(queryTerms("Can you please open the create_issue tool for me")).toEqual([
      "open",
      "creat",
      "issu",
      "=create_issue",
      "tool",
    ]);
  });
});
