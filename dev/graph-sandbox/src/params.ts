import type { FastifyRequest } from 'fastify';
import { invalidParam, requiredParam } from './graph-errors.ts';

/**
 * Graph reads a call's parameters from the query string and the body alike (form-encoded or
 * JSON), and non-scalar values inside form encoding arrive as JSON strings (facts §0.2).
 */
export type Params = Record<string, unknown>;

export function mergedParams(req: FastifyRequest): Params {
  const query = (req.query ?? {}) as Params;
  const body =
    req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? (req.body as Params) : {};
  return { ...query, ...body };
}

/** Form bodies: repeated keys become arrays (the consent form posts `page_id` once per page). */
export function parseForm(text: string): Params {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const prior = out[key];
    if (prior === undefined) out[key] = value;
    else out[key] = Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}

export function optionalString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) return optionalString({ v: value[0] }, 'v');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function requireString(params: Params, name: string): string {
  const value = optionalString(params, name);
  if (value === undefined) throw requiredParam(name);
  return value;
}

export function optionalBoolean(params: Params, name: string, fallback: boolean): boolean {
  const value = optionalString(params, name);
  if (value === undefined) return fallback;
  return value === 'true' || value === '1';
}

export function optionalInt(params: Params, name: string): number | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw invalidParam(`(#100) Param ${name} must be an integer`);
  return n;
}

/** A structured parameter: an object/array in a JSON body, or a JSON string in a form body. */
export function jsonParam(params: Params, name: string): unknown {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidParam(`(#100) Param ${name} must be a JSON object`);
  }
}

/** A list given as a JSON array, a comma-separated string, or repeated/indexed form keys. */
export function listParam(params: Params, name: string): string[] {
  const value = params[name];
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed.startsWith('[')) {
      const parsed = jsonParam(params, name);
      return Array.isArray(parsed) ? parsed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) : [];
    }
    return trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim());
  }
  const indexed: string[] = [];
  for (let i = 0; params[`${name}[${i}]`] !== undefined; i++) indexed.push(String(params[`${name}[${i}]`]));
  return indexed;
}

/** `access_token` parameter, or `Authorization: Bearer|OAuth <token>` (facts §0.2). */
export function accessTokenOf(req: FastifyRequest, params: Params): string | undefined {
  const header = req.headers.authorization;
  if (header) {
    const match = /^(?:Bearer|OAuth)\s+(.+)$/i.exec(header);
    if (match?.[1]) return match[1].trim();
  }
  return optionalString(params, 'access_token');
}
