import type { Context, Hono } from 'hono';
import { checkJsonValue, describeJsonPath, stringProblem, type Principal } from '@veetbot/domain';
import { EmptyBody } from '@veetbot/client';
import type { z } from 'zod';
import { ApiError, notFound } from './api-error';
import { authenticate, requireScope } from './auth';
import type { ApiDeps, ApiEnv } from './deps';
import { decodeBody, invalidInput, invalidRequest, parseJsonBody, requireJsonMediaType } from './request-validation';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface ResponseDoc {
  readonly description: string;
  /** A zod schema of the JSON body (the same one the client types with). */
  readonly schema?: z.ZodType;
  /** A non-JSON body: its media type and a raw JSON Schema. */
  readonly raw?: { readonly contentType: string; readonly schema: Record<string, unknown> };
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One route: how it is served AND how it is documented. The body and query schemas here are
 * the ones the handler's input is parsed with, and /v1/openapi.json is generated from this
 * list, so the document cannot drift from what the API accepts.
 */
export interface RouteDefinition<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
> {
  readonly method: HttpMethod;
  /** Hono syntax (`/v1/runs/:run_id`); OpenAPI gets `{run_id}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** Default true: the route needs an API key. */
  readonly auth?: boolean;
  /** A scope the principal must hold (else 403 auth.scope_missing). */
  readonly scope?: string;
  /** The JSON body; routes without one accept no body or `{}`. */
  readonly body?: B;
  /** An empty body is read as `{}` even though the route has a body schema. */
  readonly bodyOptional?: boolean;
  readonly query?: Q;
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

export interface RouteInput<B, Q> {
  readonly body: B;
  readonly query: Q;
  readonly principal: Principal;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

export type RouteHandler<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> = (
  c: Context<ApiEnv>,
  input: RouteInput<Parsed<B>, Parsed<Q>>,
) => Promise<Response>;

/** Collects every route's definition while registering it on the app. */
export class RouteTable {
  readonly definitions: RouteDefinition[] = [];
  readonly #app: Hono<ApiEnv>;
  readonly #deps: ApiDeps;

  constructor(app: Hono<ApiEnv>, deps: ApiDeps) {
    this.#app = app;
    this.#deps = deps;
  }

  /**
   * Documents a route served outside the table (the MCP endpoint speaks JSON-RPC, not this
   * table's JSON bodies): it appears in /v1/openapi.json like every other route.
   */
  document(definition: RouteDefinition): void {
    this.definitions.push(definition);
  }

  add<B extends z.ZodType | undefined, Q extends z.ZodType | undefined>(
    definition: RouteDefinition<B, Q>,
    handler: RouteHandler<B, Q>,
  ): void {
    this.definitions.push(definition as RouteDefinition);
    const auth = definition.auth ?? true;
    const handle = async (c: Context<ApiEnv>): Promise<Response> => {
      checkPathParameters(c);
      const principal = auth ? c.get('principal') : ({ tenant_id: '', principal_id: '', scopes: [] } satisfies Principal);
      if (definition.scope !== undefined) requireScope(principal, definition.scope);
      const query = definition.query === undefined ? undefined : parseQuery(c, definition.query);
      const body = definition.method === 'get' ? undefined : await parseBody(c, definition.body, definition.bodyOptional === true);
      return handler(c, { body: body as Parsed<B>, query: query as Parsed<Q>, principal });
    };
    const middleware = auth ? [authenticate(this.#deps)] : [];
    this.#app.on([definition.method.toUpperCase()], [definition.path], ...middleware, handle);
  }
}

/**
 * A path parameter with a NUL or a lone surrogate names nothing any tenant could have created:
 * the same 404 as an unknown id (ADR 0019), before any store sees it.
 */
function checkPathParameters(c: Context<ApiEnv>): void {
  for (const value of Object.values(c.req.param() as Record<string, string>)) if (stringProblem(value) !== null) throw notFound();
}

function parseQuery(c: Context<ApiEnv>, schema: z.ZodType): unknown {
  // A repeated parameter is not part of any route's contract: the last value would be a guess.
  const entries: [string, string][] = [];
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length !== 1)
      throw new ApiError(400, 'request.invalid', `Invalid request at query.${describeJsonPath([name])}: give it once.`);
    entries.push([name, values[0]!]);
  }
  // The query is a flat JSON object of strings: the same checks as a body (ADR 0019).
  const raw = Object.fromEntries(entries);
  const refused = checkJsonValue(raw);
  if (refused !== null) throw invalidInput('query', refused);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidRequest('query', parsed.error);
  return parsed.data;
}

async function parseBody(c: Context<ApiEnv>, schema: z.ZodType | undefined, optional: boolean): Promise<unknown> {
  const body = decodeBody(new Uint8Array(await c.req.arrayBuffer()));
  if (body.text !== '') requireJsonMediaType(c.req.header('content-type'));
  const value = parseJsonBody(body, schema === undefined || optional);
  const parsed = (schema ?? EmptyBody).safeParse(value);
  if (!parsed.success) throw invalidRequest('body', parsed.error);
  return schema === undefined ? undefined : parsed.data;
}
