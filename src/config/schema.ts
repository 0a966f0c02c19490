/** @module Validates a parsed file against schema/packs.schema.json and turns ajv's findings into located errors. */
import { readFileSync } from "node:fs";
import type { Ajv2020, ErrorObject } from "ajv/dist/2020.js";
import { BUILT, packageFile } from "../paths.js";
import { type ConfigError, closest } from "./errors.js";
import type { Path, Source } from "./source.js";

const packsSchema = JSON.parse(readFileSync(packageFile("schema/packs.schema.json"), "utf8")) as Record<
  string,
  unknown
>;

type Validate = ReturnType<Ajv2020["compile"]>;

/**
 * The validator compiled at build time (scripts/build-validator.mjs), when present. Only its absence falls back
 * to compiling here: a prebuilt file that fails to load is an error, not a silent 120 ms at every start.
 */
const prebuilt: Validate | undefined = BUILT
  ? await import(packageFile("dist/config/packs-validator.js").href).then(
      (m: { default: Validate }) => m.default,
      (err: NodeJS.ErrnoException) => {
        if (err.code === "ERR_MODULE_NOT_FOUND" && err.message.includes("packs-validator")) return undefined;
        throw err;
      },
    )
  : undefined;

/** Without it (tests run from src/), the schema is compiled here, once. */
const compiled: Validate =
  prebuilt ??
  (await import("ajv/dist/2020.js").then(({ Ajv2020: Ajv }) =>
    new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true }).compile(packsSchema),
  ));

function validator(): Validate {
  return compiled;
}

/** A schema error and the node it is about (for an unknown key: the key's own path). */
export interface SchemaFinding {
  readonly error: ConfigError;
  readonly path: Path;
}

export function validateSource(source: Source): SchemaFinding[] {
  const validate = validator();
  if (validate(source.data)) return [];
  const errors = (validate.errors ?? []).filter((e) => !isNoise(e, validate.errors ?? [], source.data));
  const seen = new Set<string>();
  const out: SchemaFinding[] = [];
  for (const e of errors) {
    const err = toConfigError(e, source);
    const id = `${err.line}:${err.col}:${err.message}`;
    if (!seen.has(id)) {
      seen.add(id);
      const path = pathOf(e.instancePath);
      const extra = e.keyword === "additionalProperties" ? [String(e.params.additionalProperty)] : [];
      out.push({ error: err, path: [...path, ...extra] });
    }
  }
  return out;
}

function pathOf(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function valueAt(data: unknown, path: Path): unknown {
  let v = data;
  for (const seg of path)
    v = v && typeof v === "object" ? (v as Record<string | number, unknown>)[seg] : undefined;
  return v;
}

/** oneOf branches report every branch's failure; keep only the branch matching the value's kind. */
function isNoise(e: ErrorObject, all: ErrorObject[], data: unknown): boolean {
  // Names are checked by the compiler, which can say why a name is refused.
  if (e.keyword === "propertyNames" || e.propertyName !== undefined) return true;
  if (!e.schemaPath.includes("/oneOf/") && e.keyword !== "oneOf") return false;
  // A branch's own type check: the value's kind picks its branch; a value of neither kind gets the oneOf message.
  if (isBranchType(e)) return true;
  if (e.keyword !== "oneOf") return false;
  const value = valueAt(data, pathOf(e.instancePath));
  const pickable =
    typeof value === "string" || (value !== null && typeof value === "object" && !Array.isArray(value));
  const inside = (o: ErrorObject) =>
    o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`);
  return pickable && all.some((o) => o !== e && inside(o) && !isBranchType(o));
}

function isBranchType(e: ErrorObject): boolean {
  return e.keyword === "type" && /\/oneOf\/\d+\/type$/.test(e.schemaPath);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

function knownKeys(e: ErrorObject): string[] {
  const props = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props ? Object.keys(props).filter((k) => k !== "$schema") : [];
}

function toConfigError(e: ErrorObject, source: Source): ConfigError {
  const path = pathOf(e.instancePath);
  const where = path.length ? path.join(".") : "the top level";
  const value = valueAt(source.data, path);
  switch (e.keyword) {
    case "additionalProperties": {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = knownKeys(e);
      const guess = closest(key, known);
      return source.error(
        [...path, key],
        `unknown key "${key}" in ${where}`,
        guess ? `did you mean "${guess}"?` : known.length ? `known keys: ${known.join(", ")}` : undefined,
        true,
      );
    }
    case "type":
      return source.error(path, `${where} must be ${article(String(e.params.type))}, not ${describe(value)}`);
    case "required":
      return source.error(path, `${where} needs "${String(e.params.missingProperty)}"`);
    case "pattern":
    case "propertyNames":
      return source.error(path, `${where}: ${e.message ?? "invalid"}`);
    case "enum": {
      const allowed = [...new Set((e.params.allowedValues as unknown[]).map(String))];
      return source.error(path, `${where} must be one of ${allowed.join(", ")}, not ${describe(value)}`);
    }
    case "oneOf": {
      if (path[0] === "auth")
        return source.error(path, `${where} must be a token string or a mapping with "token"`);
      const kind = path.includes("prompts") ? "prompt" : "tool";
      return source.error(path, `${where} must be a string "upstream/${kind}" or a mapping with "${kind}"`);
    }
    default:
      return source.error(path, `${where} ${e.message ?? "is invalid"}`);
  }
}

function article(type: string): string {
  const names: Record<string, string> = {
    object: "a mapping",
    array: "a list",
    string: "a string",
    boolean: "true or false",
    number: "a number",
    integer: "a whole number",
  };
  return names[type] ?? type;
}
