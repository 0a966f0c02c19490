/** @module Tool search: ranking over a small fixed catalog, the toolset filter, limits, totals, order and empty queries. */

import MiniSearch, { type QueryCombination } from "minisearch";
import { describe, expect, it } from "vitest";
import { AddedMatches } from "../../src/search/added.js";
import {
  BUILD_CHUNK,
  buildIndex,
  buildIndexAsync,
  DEFAULT_RANKING,
  paramsText,
  splitDescription,
} from "../../src/search/build.js";
import { nameWords, unmatchedNameWords } from "../../src/search/names.js";
import { planQuery } from "../../src/search/query.js";
import { EXPANSION_WORDS } from "../../src/search/synonyms.js";
import { normalize, tokenize } from "../../src/search/tokenize.js";
import type { SearchEntry } from "../../src/search/types.js";

const github = {
  toolset: "github",
  toolsetTitle: "GitHub",
  toolsetDescription: "Issues and pull requests on GitHub",
};
const files = { toolset: "files", toolsetTitle: "Files", toolsetDescription: "Read and write local files" };
const chat = { toolset: "chat", toolsetTitle: "Slack", toolsetDescription: "Messages in Slack channels" };

const CATALOG: readonly SearchEntry[] = [
  {
    name: "create_issue",
    title: "Create issue",
    description: "Create a new issue in a repository",
    inputSchema: {
      type: "object",
      properties: { owner: { type: "string" }, repo: { type: "string" }, title: { type: "string" } },
    },
    ...github,
  },
  { name: "list_issues", description: "List the issues of a repository, filtered by state", ...github },
  { name: "get_issue", description: "Get one issue by number", ...github },
  { name: "add_issue_comment", description: "Add a comment to an existing issue", ...github },
  { name: "create_pull_request", description: "Open a pull request from a branch", ...github },
  { name: "merge_pull_request", description: "Merge a pull request", ...github },
  { name: "read_file", description: "Read the contents of a file", ...files },
  { name: "write_file", description: "Write text to a file, replacing it", ...files },
  {
    name: "listDirectory",
    description: "Entries of a directory",
    inputSchema: { type: "object", properties: { path: { type: "string", description: "Folder to list" } } },
    ...files,
  },
  { name: "searchFiles", description: "Find files whose names match a glob pattern", ...files },
  { name: "slack_post_message", description: "Post a message to a channel", ...chat },
];

const index = buildIndex(CATALOG);
const first = (query: string, toolset?: string) =>
  index.search(query, toolset === undefined ? { limit: 5 } : { limit: 5, toolset }).tools[0]?.name;

describe("ranking", () => {
  it.each([
    ["create an issue", "create_issue"],
    ["open an issue about the broken login page in my repo", "create_issue"],
    ["comment on issue 42", "add_issue_comment"],
    ["merge the pull request", "merge_pull_request"],
    ["what files are in the docs folder", "listDirectory"],
    ["list directory", "listDirectory"],
    ["listDirectory", "listDirectory"],
    ["list-directory", "listDirectory"],
    ["find files matching *.png", "searchFiles"],
    ["post a message in the releases channel", "slack_post_message"],
    ["send something to slack", "slack_post_message"],
    ["list the open issues", "list_issues"],
    ["create_issue", "create_issue"],
  ])("%j finds %s first", (query, expected) => {
    expect(first(query)).toBe(expected);
  });

  it("camelCase names are split into words, and the whole name is matched too", () => {
    expect(index.search("directory", { limit: 5 }).tools.map((t) => t.name)).toContain("listDirectory");
    expect(first("search files")).toBe("searchFiles");
  });

  it("plural and -ing forms meet their stems", () => {
    expect(first("creating issues")).toBe("create_issue");
  });

  it("an acronym's plural finds what the acronym names (PRs → pull requests)", () => {
    const index = buildIndex([
      { name: "list_commits", description: "List commits of a branch", toolset: "git" },
      { name: "list_pull_requests", description: "List pull requests of a repository", toolset: "git" },
      { name: "list_tags", description: "List tags, newest first", toolset: "git" },
    ]);
    expect(index.search("which PRs are still waiting", { limit: 1 }).tools[0]?.name).toBe(
      "list_pull_requests",
    );
  });

  it("a tool whose name adds a word the query lacks ranks below its sibling", () => {
    // The sibling's shorter summary would put it first on BM25 alone; "reverse" is a word the query lacks.
    const maps = buildIndex([
      { name: "maps_reverse_geocode", description: "Geocode coordinates into an address", toolset: "maps" },
      {
        name: "maps_geocode",
        description: "Geocode an address or place name into latitude and longitude coordinates",
        toolset: "maps",
      },
      { name: "maps_directions", description: "Directions between two addresses", toolset: "maps" },
    ]);
    const names = maps.search("geocode this address", { limit: 5 }).tools.map((t) => t.name);
    expect(names).toEqual(["maps_geocode", "maps_reverse_geocode", "maps_directions"]);
  });

  it("the server prefix of a name is not a word the query lacks", () => {
    const index = buildIndex([
      { name: "github_create_issue", description: "Create an issue in a repository", toolset: "github" },
      { name: "create_issue_template", description: "Create an issue template", toolset: "tracker" },
    ]);
    const names = index.search("create an issue", { limit: 5 }).tools.map((t) => t.name);
    expect(names).toEqual(["github_create_issue", "create_issue_template"]);
  });

  it("parameter descriptions are searched", () => {
    expect(first("folder")).toBe("listDirectory");
  });
});

describe("building in chunks", () => {
  it("an index built a chunk at a time answers as one built at once", async () => {
    const many: SearchEntry[] = Array.from({ length: BUILD_CHUNK * 2 + 7 }, (_, i) => ({
      ...CATALOG[i % CATALOG.length]!,
      name: `${CATALOG[i % CATALOG.length]!.name}_${i}`,
      toolset: `t${i % 3}`,
    }));
    const now = buildIndex(many);
    const later = await buildIndexAsync(many);
    expect(later.size).toBe(now.size);
    for (const q of ["create an issue", "list directory", "post a message", ""]) {
      expect(later.search(q, { limit: 10, toolset: "t1" })).toEqual(
        now.search(q, { limit: 10, toolset: "t1" }),
      );
    }
  });
});

describe("an upstream's definitions, however large", () => {
  it("a parameter with an enum of 150,000 values is indexed without overflowing the stack, and found", () => {
    const values = Array.from({ length: 150_000 }, (_, i) => `value${i}`);
    const index = buildIndex([
      {
        name: "pick_colour",
        description: "Pick a colour",
        inputSchema: {
          type: "object",
          properties: { colour: { type: "string", enum: ["vermilion", ...values] } },
        },
        toolset: "t",
      },
    ]);
    expect(index.search("vermilion", { limit: 1 }).tools.map((t) => t.name)).toEqual(["pick_colour"]);
  });
});

describe("query expansion", () => {
  it("a word that expands into several words counts as one word matched, not as several", () => {
    const two = buildIndex([
      { name: "show_invoice", description: "Show an invoice", toolset: "t" },
      { name: "invoice_viewer", description: "Get or view invoice records", toolset: "t" },
    ]);
    // "show" adds get, list, read and view: matching two of them is still matching one word of the user's.
    expect(two.search("show invoice", { limit: 2 }).tools.map((t) => t.name)).toEqual([
      "show_invoice",
      "invoice_viewer",
    ]);
  });

  it("a filler word that says what is wanted still expands (which … → list)", () => {
    const chat = buildIndex([
      {
        name: "channel_history",
        description: "Messages of a channel, for channels and threads",
        toolset: "t",
      },
      { name: "list_channels", description: "Channels of the workspace", toolset: "t" },
    ]);
    expect(chat.search("which channels", { limit: 1 }).tools[0]?.name).toBe("list_channels");
  });
});

describe("expansion words searched once per index", () => {
  const QUERIES = [
    "show invoice",
    "which channels",
    "make a new ticket for the repo",
    "forget that file",
    "drop the comment on the issue",
    "open a PR from my branch",
    "what folders are there",
    "remove",
  ];

  it("an index answers every query the same once its expansion words are kept as before any was", () => {
    const warm = buildIndex(CATALOG);
    for (const q of [...QUERIES, ...QUERIES]) warm.search(q, { limit: 20 });
    for (const q of QUERIES) {
      // A fresh index keeps nothing yet: its answer is the one searched without anything kept.
      expect(warm.search(q, { limit: 20 })).toEqual(buildIndex(CATALOG).search(q, { limit: 20 }));
      expect(warm.search(q, { limit: 20, toolset: "files" })).toEqual(
        buildIndex(CATALOG).search(q, { limit: 20, toolset: "files" }),
      );
    }
  });

  it("ranks as one minisearch query of typed and expansion words did, with the same totals (an oracle)", () => {
    // The search as it ran before expansion words were kept: one OR query of both, minisearch's score divided
    // by the terms it matched and multiplied by the user's words, then the name-word penalty.
    const r = DEFAULT_RANKING;
    const ORACLE_CATALOG: readonly SearchEntry[] = [
      ...CATALOG,
      { name: "delete_comment", description: "Remove a comment from an issue", ...github },
      { name: "remove_label", description: "Delete a label from an issue", ...github },
    ];
    const fields = ["name", "title", "summary", "description", "params", "toolset"] as const;
    const docs = ORACLE_CATALOG.map((e) => ({
      name: e.name,
      title: e.title ?? "",
      ...splitDescription(e.description ?? ""),
      params: paramsText(e.inputSchema),
      toolset: [e.toolset, e.toolsetTitle, e.toolsetDescription].filter(Boolean).join("\n"),
    }));
    const mini = new MiniSearch<number>({
      fields: [...fields],
      extractField: (id, field) => (field === "id" ? id : docs[id]?.[field as (typeof fields)[number]]),
      tokenize,
      processTerm: normalize,
    });
    mini.addAll(docs.map((_, i) => i));
    const oracle = (query: string, toolset?: string) => {
      const plan = planQuery(query, r)!;
      const added: QueryCombination = {
        queries: [plan.added.join(" ")],
        combineWith: "OR",
        fields: [...r.synonymFields],
        boostTerm: () => r.synonymWeight,
      };
      const hits = mini.search(
        { combineWith: "OR", queries: plan.added.length ? [plan.typedQuery, added] : [plan.typedQuery] },
        {
          tokenize: (text: string) => text.split(" "),
          processTerm: (term: string) => term,
          boost: { ...r.boost },
          bm25: { ...r.bm25 },
          weights: { prefix: r.prefixWeight, fuzzy: r.fuzzyWeight },
          filter: (h) => toolset === undefined || ORACLE_CATALOG[h.id as number]!.toolset === toolset,
        },
      );
      const scored = hits.map((h) => {
        const n = h.queryTerms.length;
        let score = n > 1 ? (h.score / n) * plan.matchedWords(h.queryTerms) : h.score;
        const words = nameWords(ORACLE_CATALOG[h.id]!.name, ORACLE_CATALOG[h.id]!.toolset);
        const unmatched = unmatchedNameWords(words, h.match);
        if (unmatched > 0) score /= 1 + r.nameWordPenalty * unmatched;
        return { name: ORACLE_CATALOG[h.id]!.name, score };
      });
      scored.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { names: scored.slice(0, 20).map((x) => x.name), total: scored.length };
    };
    const queries = [
      ...QUERIES,
      "issue",
      "create issue",
      "list the open issues",
      "post a message to the team channel",
      // A typed word's prefix (remo → remov) that is also an expansion of another word (forget → remove).
      "forget remo",
      "forget the label",
      "show files in the docs folder",
    ];
    const warm = buildIndex(ORACLE_CATALOG);
    for (const q of queries) {
      for (const toolset of [undefined, "files", "github"]) {
        const options = toolset === undefined ? { limit: 20 } : { limit: 20, toolset };
        const got = warm.search(q, options);
        expect(
          { names: got.tools.map((t) => t.name), total: got.total },
          `${q} in ${toolset ?? "all"}`,
        ).toEqual(oracle(q, toolset));
      }
    }
  });

  it("what an index keeps of its expansion words is frozen: no session can change another's answers", () => {
    const mini = new MiniSearch<number>({
      fields: ["name"],
      extractField: (id, field) => (field === "id" ? id : ["get_issue", "list_files"][id]),
      tokenize: (text) => text.split("_"),
    });
    mini.addAll([0, 1]);
    const kept = new AddedMatches(mini, { fields: ["name"] }).of("get");
    expect(kept).toHaveLength(1);
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.isFrozen(kept[0])).toBe(true);
    expect(Object.isFrozen(kept[0]!.fields)).toBe(true);
  });

  it("a tool only an expansion word matches is found, counted in total, and left out by another toolset's filter", () => {
    const two = buildIndex([
      { name: "delete_note", description: "Delete a note", toolset: "a" },
      { name: "delete_page", description: "Delete a page", toolset: "b" },
      { name: "forget_me_not", description: "A flower", toolset: "a" },
    ]);
    // "erase" is in no definition: only its expansions (delete, remove) match.
    expect(two.search("erase", { limit: 5 })).toMatchObject({ total: 2 });
    const inB = two.search("erase", { limit: 5, toolset: "b" });
    expect(inB.tools.map((t) => t.name)).toEqual(["delete_page"]);
    expect(inB.total).toBe(1);
  });

  it("only the table's words are kept: however many other words are searched, no more lists than the table has words", () => {
    const mini = new MiniSearch<number>({
      fields: ["name"],
      extractField: (id, field) => (field === "id" ? id : ["get_issue", "list_files", "zebra"][id]),
      tokenize: (text) => text.split("_"),
    });
    mini.addAll([0, 1, 2]);
    const added = new AddedMatches(mini, { fields: ["name"] });
    expect(added.of("get").map((m) => m.id)).toEqual([0]);
    expect(added.of("get")).toBe(added.of("get"));
    for (let i = 0; i < 500; i++) added.of(`word${i}`);
    expect(added.of("zebra").map((m) => m.id)).toEqual([2]);
    expect(EXPANSION_WORDS.has("get")).toBe(true);
    expect(added.kept).toEqual({ words: 1, matches: 1 });
  });
});

describe("toolset filter", () => {
  it("keeps only the toolset's tools, and names that toolset in each hit", () => {
    const result = index.search("issue file", { limit: 20, toolset: "files" });
    expect(result.tools.length).toBeGreaterThan(0);
    for (const hit of result.tools) expect(hit.toolset).toBe("files");
    expect(result.tools.map((t) => t.name)).not.toContain("create_issue");
  });

  it("an unknown toolset finds nothing", () => {
    expect(index.search("issue", { limit: 5, toolset: "nope" })).toEqual({ tools: [], total: 0 });
  });

  it("a tool two toolsets share is one hit, found through either toolset", () => {
    const shared = buildIndex([
      { name: "ping", description: "Check the server answers", toolset: "a" },
      { name: "ping", description: "Check the server answers", toolset: "b", toolsetDescription: "health" },
      { name: "pong", description: "Unrelated", toolset: "b" },
    ]);
    expect(shared.size).toBe(2);
    expect(shared.search("ping", { limit: 5 }).tools.map((t) => [t.name, t.toolset])).toEqual([
      ["ping", "a"],
    ]);
    expect(shared.search("ping", { limit: 5, toolset: "b" }).tools[0]).toMatchObject({
      name: "ping",
      toolset: "b",
    });
    expect(shared.search("health", { limit: 5 }).tools[0]?.name).toBe("ping");
  });
});

describe("limit and total", () => {
  it("returns at most limit hits, and total counts every match before the limit", () => {
    const all = index.search("issue", { limit: 20 });
    const two = index.search("issue", { limit: 2 });
    expect(two.tools).toHaveLength(2);
    expect(two.total).toBe(all.total);
    expect(all.total).toBe(all.tools.length);
    expect(all.total).toBeGreaterThanOrEqual(4);
    expect(two.tools).toEqual(all.tools.slice(0, 2));
  });

  it("a limit below 1 still returns one hit", () => {
    expect(index.search("issue", { limit: 0 }).tools).toHaveLength(1);
  });

  it("a query's terms past the 32nd are ignored, so a pasted page costs no more than a long query", () => {
    const filler = Array.from({ length: 40 }, (_, i) => `word${i}x`).join(" ");
    expect(index.search(`${filler} merge`, { limit: 5 })).toEqual({ tools: [], total: 0 });
    expect(first(`merge ${filler}`)).toBe("merge_pull_request");
  });

  it("a query that matches nothing returns no hits and a total of 0", () => {
    expect(index.search("kubernetes", { limit: 5 })).toEqual({ tools: [], total: 0 });
  });
});

describe("order", () => {
  it("equal scores are ordered by name, whatever the input order", () => {
    const twins = (names: string[]) =>
      buildIndex(names.map((name) => ({ name, description: "Frobnicate the widget", toolset: "t" })));
    const a = twins(["zeta", "alpha", "mid"]).search("frobnicate widget", { limit: 5 });
    const b = twins(["mid", "zeta", "alpha"]).search("frobnicate widget", { limit: 5 });
    expect(a.tools.map((t) => t.name)).toEqual(["alpha", "mid", "zeta"]);
    expect(b).toEqual(a);
  });

  it("the same query on the same index gives the same answer", () => {
    const q = "open a pull request and comment on the issue";
    expect(index.search(q, { limit: 10 })).toEqual(index.search(q, { limit: 10 }));
  });
});

describe("empty query", () => {
  it.each(["", "   ", "please can you"])("%j lists tools in name order, total being all of them", (query) => {
    const result = index.search(query, { limit: 3 });
    expect(result.total).toBe(CATALOG.length);
    expect(result.tools.map((t) => t.name)).toEqual([
      "add_issue_comment",
      "create_issue",
      "create_pull_request",
    ]);
  });

  it("with a toolset, lists that toolset's tools", () => {
    const result = index.search("", { limit: 20, toolset: "files" });
    expect(result.total).toBe(4);
    expect(result.tools.map((t) => t.name)).toEqual([
      "listDirectory",
      "read_file",
      "searchFiles",
      "write_file",
    ]);
  });
});

describe("hits", () => {
  it("carry what a model needs to call the tool: name, title, description, inputSchema, toolset", () => {
    expect(index.search("create issue", { limit: 1 }).tools[0]).toEqual({
      name: "create_issue",
      title: "Create issue",
      description: "Create a new issue in a repository",
      inputSchema: CATALOG[0]?.inputSchema,
      toolset: "github",
    });
  });

  it("a tool listed without an inputSchema gets an empty object schema", () => {
    expect(index.search("merge", { limit: 1 }).tools[0]).toEqual({
      name: "merge_pull_request",
      description: "Merge a pull request",
      inputSchema: { type: "object" },
      toolset: "github",
    });
  });

  it("results are frozen: a session cannot change what another sees", () => {
    const result = index.search("issue", { limit: 2 });
    expect(Object.isFrozen(result.tools)).toBe(true);
    expect(Object.isFrozen(result.tools[0])).toBe(true);
  });
});
