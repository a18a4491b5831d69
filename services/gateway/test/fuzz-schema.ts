import { ID_PREFIXES } from '@svc/ids';
import fc from 'fast-check';

// The fuzz's reading of the gateway's OpenAPI document (fuzz.test.ts): its operations, and values
// that fit their JSON Schemas, so a generated request is often wrong in one place only and gets
// past the checks before it (a fully random one stops at the first).

/** The part of JSON Schema the gateway's document uses. */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  description?: string;
}

export interface Parameter {
  name: string;
  schema: Schema;
}

/** One operation of the OpenAPI document, as much of it as the fuzz needs. */
export interface Operation {
  method: string;
  /** The OpenAPI path, `{id}` placeholders left in. */
  path: string;
  query: Parameter[];
  headers: Parameter[];
  /** The JSON body's schema; undefined when the operation takes no body. */
  body?: Schema;
  /** The HTTP statuses the document lists for it. */
  statuses: string[];
}

interface DocOperation {
  parameters?: { name?: string; in?: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, unknown>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(doc: { paths: Record<string, Record<string, DocOperation>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const op = item[method] as DocOperation;
      const parameters = (where: string) =>
        (op.parameters ?? [])
          .filter((p) => p.in === where && p.name)
          .map((p) => ({ name: p.name as string, schema: p.schema ?? {} }));
      return {
        method: method.toUpperCase(),
        path,
        query: parameters('query'),
        headers: parameters('header'),
        body: op.requestBody?.content?.['application/json']?.schema,
        statuses: Object.keys(op.responses ?? {}),
      };
    }),
  );
}

/** What the fuzz knows of the running stack: real ids to put where ids go, so inputs reach past lookups. */
export interface Known {
  /** Real ids by prefix (`ws` → the fuzz workspaces...), for paths of non-destructive calls and values. */
  ids: Record<string, string[]>;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.split('');

/** An id of the right shape that names nothing (25 base62 digits after the prefix). */
export const unknownId = (prefix: string) =>
  fc
    .string({ unit: fc.constantFrom(...BASE62), minLength: 25, maxLength: 25 })
    .map((tail) => `${prefix}_${tail}`);

/** The prefix of the id a schema describes (`"description": "workspace id"`). */
const PREFIX_BY_NOUN: Record<string, string> = {
  workspace: ID_PREFIXES.workspace,
  account: ID_PREFIXES.account,
  media: ID_PREFIXES.media,
  post: ID_PREFIXES.post,
  conversation: ID_PREFIXES.conversation,
  message: ID_PREFIXES.message,
  event: ID_PREFIXES.event,
};

/**
 * An id of the kind the description (`workspace id`) or the name (`X-Service-Workspace`) names:
 * a real one when the stack has one, else an unknown one.
 */
function idFor(name: string, description: string, known: Known): fc.Arbitrary<string> | undefined {
  const noun = /\b(\w+) id\b/.exec(description)?.[1] ?? /(\w+)$/.exec(name)?.[1]?.toLowerCase();
  const prefix = noun ? PREFIX_BY_NOUN[noun] : undefined;
  if (!prefix) return undefined;
  const real = known.ids[prefix] ?? [];
  return real.length ? fc.oneof(fc.constantFrom(...real), unknownId(prefix)) : unknownId(prefix);
}

/**
 * URLs that answer at once: a closed loopback port (refused), and a name under `.example`, which
 * never resolves; a URL that hangs (a black-holed address) would test the network, not the gateway.
 */
const URLS = ['http://127.0.0.1:1/x.png', 'https://a.example', 'https://a.example/cb?x=1'];

function plausibleString(schema: Schema, name: string, known: Known): fc.Arbitrary<string> {
  if (schema.format === 'date-time')
    return fc
      .date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  const id = idFor(name, schema.description ?? '', known);
  if (id) return id;
  if (/url|origin/i.test(`${name} ${schema.description ?? ''}`)) return fc.constantFrom(...URLS);
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 40, 40)) });
}

/** A value that fits the schema, as JSON text (`name` is the property's, for hints like "url"). */
export function plausibleOf(schema: Schema, name: string, known: Known): fc.Arbitrary<string> {
  if (schema.const !== undefined) return fc.constant(JSON.stringify(schema.const));
  if (schema.enum?.length) return fc.constantFrom(...schema.enum.map((v) => JSON.stringify(v)));
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices?.length) return fc.oneof(...choices.map((choice) => plausibleOf(choice, name, known)));
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type) => plausibleOf({ ...schema, type }, name, known)));
  switch (schema.type) {
    case 'string':
      return plausibleString(schema, name, known).map((s) => JSON.stringify(s));
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1_000 }).map(String);
    case 'number':
      return fc
        .double({ min: schema.minimum ?? 0, max: schema.maximum ?? 1_000, noNaN: true })
        .map((n) => JSON.stringify(n));
    case 'boolean':
      return fc.boolean().map(String);
    case 'null':
      return fc.constant('null');
    case 'array':
      return fc
        .array(plausibleOf(schema.items ?? {}, name, known), {
          minLength: schema.minItems ?? 0,
          maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 4)),
        })
        .map((items) => `[${items.join(',')}]`);
    case 'object':
      if (schema.properties) return plausibleObjectOf(schema, known);
      return fc
        .dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }))
        .map((o) => JSON.stringify(o));
    default:
      return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v));
  }
}

/** An object of the schema: required properties (almost always), optional ones (half the time). */
function plausibleObjectOf(schema: Schema, known: Known): fc.Arbitrary<string> {
  const required = schema.required ?? [];
  const entries = Object.entries(schema.properties ?? {}).map(([name, property]) =>
    fc
      .option(plausibleOf(property, name, known), { nil: undefined, freq: required.includes(name) ? 12 : 2 })
      .map((value) => (value === undefined ? undefined : `${JSON.stringify(name)}:${value}`)),
  );
  return fc.tuple(...entries).map((list) => `{${list.filter((e) => e !== undefined).join(',')}}`);
}

/** A query parameter's value as it appears in a query string (no JSON quotes around a string). */
export function plausibleQueryValue(parameter: Parameter, known: Known): fc.Arbitrary<string> {
  return plausibleOf(parameter.schema, parameter.name, known).map((text) => {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** String query parameters by name (for routes outside the document). */
export const parameters = (...names: string[]): Parameter[] =>
  names.map((name) => ({ name, schema: { type: 'string' } }));

/** An object schema of string properties. */
export const strings = (...names: string[]): Schema => ({
  type: 'object',
  properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])),
});
