/**
 * The one way hand-written SQL is read (docs/architecture.md, "Reading rows"): a statement names
 * each column it returns with the field of the TypeScript type the row is read as, so
 * `query<T>()` returns `T` itself and no row is mapped or cast field by field.
 *
 * `Fields<T>` lists every field of `T` exactly once (the compiler checks both ways). `true` reads
 * the column of the same name in snake_case, as the migrations spell it; a string is the SQL
 * expression the field comes from instead (a joined column, a `coalesce`).
 */
export type Fields<T> = { readonly [K in keyof T]-?: true | string };

/** A field's column: `partnerId` → `partner_id` (our own constant names, never input). */
const columnOf = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The select (or RETURNING) list of `fields`: `t.partner_id AS "partnerId", …`. `table` qualifies
 * the columns; `prefix` goes before each output name, for two tables' fields side by side in one
 * row (read apart again with `prefixedFields`).
 */
export function selectList<T>(fields: Fields<T>, options: { table?: string; prefix?: string } = {}): string {
  const qualify = options.table ? `${options.table}.` : '';
  return Object.entries(fields)
    .map(([field, source]) => {
      const expression = source === true ? `${qualify}${columnOf(field)}` : source;
      return `${expression} AS "${options.prefix ?? ''}${field}"`;
    })
    .join(', ');
}

/** The fields a `prefix`ed select list put in `row`, under their own names again. */
export function prefixedFields<T>(row: Record<string, unknown>, fields: Fields<T>, prefix: string): T {
  const value: Record<string, unknown> = {};
  for (const field of Object.keys(fields)) value[field] = row[prefix + field];
  return value as T;
}
