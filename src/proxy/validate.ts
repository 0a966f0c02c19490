/** @module Tool arguments checked against the tool's inputSchema before they are forwarded. */

import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import { rpcError } from "./errors.js";

const options = { allErrors: true, strict: false, validateFormats: false, validateSchema: false } as const;
/**
 * ajv's compiler loads at the first call that has a schema, not at start (~90 ms of CPU on the path of the first
 * tools/list). It is CommonJS, so it loads synchronously, where it is needed.
 */
let compilers: { draft2020: Ajv; draft7: Ajv } | undefined;
function compilerFor(dialect: string): Ajv {
  if (!compilers) {
    const require = createRequire(import.meta.url);
    const { Ajv } = require("ajv") as typeof import("ajv");
    const { Ajv2020 } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
    compilers = { draft2020: new Ajv2020(options), draft7: new Ajv(options) };
  }
  return /draft-0[4-7]/.test(dialect) ? compilers.draft7 : compilers.draft2020;
}
/** One compiled validator per definition object: definitions are replaced when an inventory is refreshed. */
const cache = new WeakMap<object, ValidateFunction | null>();

function validatorFor(definition: object, schema: unknown): ValidateFunction | null {
  let v = cache.get(definition);
  if (v !== undefined) return v;
  v = null;
  if (schema && typeof schema === "object") {
    const dialect = String((schema as { $schema?: unknown }).$schema ?? "");
    try {
      // A schema ajv cannot compile is not ours to reject: the upstream stays the judge of its arguments.
      v = compilerFor(dialect).compile(schema as object);
    } catch {
      v = null;
    }
  }
  cache.set(definition, v);
  return v;
}

function describe(e: ErrorObject): string {
  const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "arguments";
  if (e.keyword === "required")
    return `${field === "arguments" ? "" : `${field}.`}${String(e.params.missingProperty)} is required`;
  if (e.keyword === "additionalProperties")
    return `${field} has an unknown property "${String(e.params.additionalProperty)}"`;
  return `${field} ${e.message ?? "is invalid"}`;
}

/** Throws -32602 naming the field and the reason when the arguments do not fit the tool's inputSchema. */
export function checkArguments(route: Route, args: unknown): void {
  const validate = validatorFor(route.definition, route.definition.inputSchema);
  if (!validate || validate(args ?? {})) return;
  const first = validate.errors?.[0];
  throw rpcError(
    ErrorCode.InvalidParams,
    `Invalid arguments for tool ${route.name}: ${first ? describe(first) : "they do not match its inputSchema"}`,
    {
      errors: validate.errors?.map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message })),
    },
  );
}
