import type { Context } from 'hono';
import { notFound } from './api-error';
import type { ApiEnv } from './deps';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id. Not a UUID cannot name anything: the same 404 as a missing or another tenant's id. */
export function idParam(c: Context<ApiEnv>, name: string): string {
  const value = c.req.param(name);
  if (value === undefined || !UUID.test(value)) throw notFound();
  return value.toLowerCase();
}

export function intParam(c: Context<ApiEnv>, name: string): number {
  const value = c.req.param(name);
  if (value === undefined || !/^\d{1,7}$/.test(value)) throw notFound();
  return Number(value);
}
