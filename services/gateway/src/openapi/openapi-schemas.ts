import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';

/**
 * Turns zod schemas into the JSON Schemas of one OpenAPI document. zod gives each conversion its
 * own `$defs` (every schema with a `.meta({ id })`: Post, Account...) and points at them with
 * `#/$defs/…`, which means nothing inside an OpenAPI document: here every such definition moves to
 * `components.schemas` once, and the references follow it. A name that two conversions define
 * differently (a request's input beside the same record's output) gets an `Input` suffix; a third
 * variant is a mistake in the schemas and stops the build.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The JSON Schema of `schema` as a request (`input`) or a response (`output`) carries it. */
  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const {
      $schema: _dialect,
      $defs,
      ...root
    } = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      target: 'draft-2020-12',
    }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const names = new Map<string, string>();
    for (const [id, definition] of Object.entries($defs ?? {})) names.set(id, this.place(id, definition, io));
    const rename = (ref: string) => `${COMPONENTS}${names.get(ref.slice('#/$defs/'.length)) ?? ref}`;
    for (const name of new Set(names.values())) {
      this.schemas[name] = rewriteRefs(this.schemas[name], rename) as JsonSchema;
    }
    return rewriteRefs(root, rename) as JsonSchema;
  }

  /** Keeps a definition under its name, or under `<name>Input` when the name holds another shape. */
  private place(id: string, definition: JsonSchema, io: 'input' | 'output'): string {
    for (const name of io === 'input' ? [id, `${id}Input`] : [id, `${id}Output`]) {
      const held = this.schemas[name];
      if (!held) {
        this.schemas[name] = definition;
        return name;
      }
      if (sameShape(held, definition)) return name;
    }
    throw new Error(`schema ${id} is defined in more than two shapes`);
  }
}

/** Compares a stored definition (references already rewritten) with a fresh one. */
function sameShape(held: JsonSchema, fresh: JsonSchema): boolean {
  const normal = (schema: unknown) => JSON.stringify(schema).replaceAll(COMPONENTS, '#/$defs/');
  return normal(held) === normal(fresh);
}

function rewriteRefs(node: unknown, rename: (ref: string) => string): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, rename));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) =>
      key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')
        ? [key, rename(value)]
        : [key, rewriteRefs(value, rename)],
    ),
  );
}
