import { nonexistingField } from './graph-errors.ts';

/**
 * Field selection (`fields=a,b{c,d},e.limit(5)`) and cursor paging (facts §0.2–0.3): only the
 * requested fields plus `id` come back, unknown fields fail with (#100), and `paging.next` is
 * absent on the last page.
 */
export interface FieldSpec {
  name: string;
  sub: FieldSpec[] | null;
  limit: number | null;
}

export function parseFields(text: string | undefined): FieldSpec[] | null {
  if (!text) return null;
  const specs: FieldSpec[] = [];
  for (const part of splitTopLevel(text)) {
    const brace = part.indexOf('{');
    const head = brace === -1 ? part : part.slice(0, brace);
    const sub = brace === -1 ? null : parseFields(part.slice(brace + 1, part.lastIndexOf('}')));
    const [name = '', ...modifiers] = head.split('.');
    const limitMod = modifiers.find((m) => m.startsWith('limit('));
    const limit = limitMod ? Number(limitMod.slice(6, -1)) : null;
    if (name.trim()) specs.push({ name: name.trim(), sub, limit: Number.isFinite(limit) ? limit : null });
  }
  return specs;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (current) parts.push(current);
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** A node's fields, each computed only when selected; an edge reads its nested selection from `spec`. */
type FieldMap = Record<string, (spec: FieldSpec) => unknown>;

export interface NodeShape {
  type: string;
  fields: FieldMap;
  defaults: string[];
}

export function renderNode(shape: NodeShape, specs: FieldSpec[] | null): Record<string, unknown> {
  const wanted = specs ?? shape.defaults.map((name) => ({ name, sub: null, limit: null }));
  const out: Record<string, unknown> = {};
  for (const spec of wanted) {
    const getter = shape.fields[spec.name];
    if (!getter) throw nonexistingField(spec.name, shape.type);
    const value = getter(spec);
    if (value !== undefined) out[spec.name] = narrow(value, spec);
  }
  const id = shape.fields.id?.({ name: 'id', sub: null, limit: null });
  if (id !== undefined) out.id = id;
  return out;
}

/** Applies a nested selection to a plain object or a `{ data: [...] }` collection. */
function narrow(value: unknown, spec: FieldSpec): unknown {
  if (!value || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (Array.isArray(record.data)) {
    const items = spec.limit === null ? record.data : record.data.slice(0, spec.limit);
    return { ...record, data: spec.sub ? items.map((item) => pick(item, spec.sub ?? [])) : items };
  }
  return spec.sub ? pick(record, spec.sub) : record;
}

function pick(value: unknown, specs: FieldSpec[]): unknown {
  if (!value || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const spec of specs)
    if (record[spec.name] !== undefined) out[spec.name] = narrow(record[spec.name], spec);
  if (record.id !== undefined) out.id = record.id;
  return out;
}

export interface PageRequest {
  limit: number;
  after: string | undefined;
  /** Absolute URL of this call without `after`, used to build `paging.next`. */
  selfUrl: URL;
}

export function paginate<T>(items: T[], request: PageRequest, render: (item: T) => unknown) {
  const start = request.after ? Number(Buffer.from(request.after, 'base64url').toString()) || 0 : 0;
  const slice = items.slice(start, start + request.limit);
  const cursor = (i: number) => Buffer.from(String(i)).toString('base64url');
  const paging: Record<string, unknown> = {
    cursors: { before: cursor(start), after: cursor(start + slice.length) },
  };
  if (start + slice.length < items.length) {
    const next = new URL(request.selfUrl);
    next.searchParams.set('limit', String(request.limit));
    next.searchParams.set('after', cursor(start + slice.length));
    paging.next = next.toString();
  }
  return { data: slice.map(render), paging };
}
