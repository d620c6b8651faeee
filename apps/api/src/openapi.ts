import { ErrorBody } from '@veetbot/client';
import { SECRET_NAME_PATTERN } from '@veetbot/domain';
import { z } from 'zod';
import type { RouteDefinition } from './routing';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const document = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  // OpenAPI 3.1's schema dialect is 2020-12 already; a per-schema $schema is noise.
  const { $schema: _dialect, ...rest } = document;
  return rest;
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'request.invalid_json, request.invalid (with the path, never the value; also NUL, lone surrogates, nesting, duplicate and __proto__ keys — ADR 0019), or a route-specific code.',
  401: 'auth.missing, auth.invalid or auth.revoked.',
  403: 'auth.scope_missing.',
  404: "not_found: a missing id and another tenant's id get the same answer.",
  409: "A conflict with the resource's state (step.conflict, run.not_active, run.waiting_for_user, session.closed, approval.already_decided, question.already_answered, review.*).",
  413: 'request.too_large: bodies over 1 MiB.',
  415: 'request.unsupported_media_type: a body whose Content-Type is not JSON (UTF-8).',
  429: 'events.streams_exhausted: the tenant holds as many open event streams in this process as it may (docs/adr/0054); retryable once one closes (Retry-After).',
  500: 'internal: logged; the message says nothing more.',
  503: 'run.busy or service.unavailable: retryable (Retry-After).',
};

/**
 * /v1/openapi.json, generated from the route table: every path, method, parameter, body and
 * response schema comes from the same zod schemas the routes parse with (OpenAPI 3.1 uses JSON
 * Schema 2020-12, which is what zod emits), so the document cannot drift from the API.
 */
export function openApiDocument(definitions: readonly RouteDefinition[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of definitions) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: Record<string, unknown>[] = [];
    for (const name of [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!)) {
      parameters.push({
        name,
        in: 'path',
        required: true,
        schema:
          name === 'step_number'
            ? { type: 'integer', minimum: 0 }
            : name === 'server_id'
              ? { type: 'string' }
              : name === 'name'
                ? { type: 'string', pattern: SECRET_NAME_PATTERN.source }
                : { type: 'string', format: 'uuid' },
      });
    }
    if (route.query !== undefined) {
      const query = jsonSchema(route.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(query.properties ?? {})) {
        parameters.push({ name, in: 'query', required: (query.required ?? []).includes(name), schema });
      }
    }
    if (route.path === '/v1/events')
      parameters.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^\\d+$' } });

    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      const content =
        doc.schema !== undefined
          ? { 'application/json': { schema: jsonSchema(doc.schema, 'output') } }
          : doc.raw !== undefined
            ? { [doc.raw.contentType]: { schema: doc.raw.schema } }
            : undefined;
      responses[status] = {
        description: doc.description,
        ...(content === undefined ? {} : { content }),
        ...(doc.headers === undefined
          ? {}
          : {
              headers: Object.fromEntries(Object.entries(doc.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])),
            }),
      };
    }
    const auth = route.auth ?? true;
    const errors = new Set<number>([500]);
    if (auth) errors.add(401);
    if (route.scope !== undefined) errors.add(403);
    if (route.method !== 'get' || route.query !== undefined || route.path === '/v1/events') errors.add(400);
    if (route.method !== 'get') errors.add(413).add(415);
    if (route.path.includes(':')) errors.add(404);
    if (route.method !== 'get' && auth) errors.add(409);
    if (route.path === '/v1/events') errors.add(429);
    // answerQuestion takes the run's lease (run.busy while a step holds it).
    if (['submitStep', 'cancelRun', 'openSession', 'answerQuestion'].includes(route.operationId)) errors.add(503);
    for (const status of errors) {
      if (responses[String(status)] !== undefined) continue;
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status],
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }

    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(auth ? {} : { security: [] }),
      ...(route.scope === undefined ? {} : { 'x-required-scope': route.scope }),
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(route.body === undefined
        ? {}
        : { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'veetbot tool system API',
      version: '0.1.0',
      description:
        'The governed tool-execution layer for AI agents: sessions, runs, steps, approvals, invocations, review, artifacts, MCP servers, secrets, events.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer vbk_…' } },
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
    },
    paths,
  };
}
