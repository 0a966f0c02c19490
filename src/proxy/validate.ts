/** @module Tool arguments checked against the tool's inputSchema before they are forwarded. */

import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Route } from "../resolve.js";
import { rpcError } from "./errors.js";

const options = { allErrors: true, strict: false, validateFormats: false, validateSchema: false } as const;
const draft2020 = new Ajv2020(options);
const draft7 = new Ajv(options);
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
      v = (/draft-0[4-7]/.test(dialect) ? draft7 : draft2020).compile(schema as object);
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
