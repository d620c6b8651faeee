/**
 * A worker process that makes one governed MCP call and is SIGKILLed by its test while the call
 * is in flight (issue 25 item 2; mcp-replay-crash.test.ts): the real pipeline (executeToolCall,
 * all fourteen steps) over the PostgreSQL database the test created, the real McpAdapter, and
 * one server. It prints one JSON line once the call's identity is fixed — the tenant, session
 * and run it created and the call's id and step — and then submits the call. Nothing after the
 * kill runs: the row stays RUNNING with its watermark, the lease unreleased.
 *
 *   node --import tsx mcp-replay-child.ts '{"databaseUrl":…,"server":{…},"toolName":…,"arguments":{…}}'
 */
import { writeSync } from 'node:fs';
import { createStores, openDatabase } from '@veetbot/store-postgres';
import type { McpServerConfig } from '@veetbot/mcp-adapter';
import { openMcpScene } from './mcp-harness';

const job = JSON.parse(process.argv[2] ?? '{}') as {
  databaseUrl: string;
  server: McpServerConfig;
  toolName: string;
  arguments: Record<string, unknown>;
};
const database = await openDatabase({ url: job.databaseUrl, poolSize: 4 });
const scene = await openMcpScene(
  { driver: 'postgres', database, stores: createStores(database), url: job.databaseUrl, close: () => database.close() },
  { servers: [job.server], owner: `replay-child-${process.pid}` },
);
const request = scene.call(job.toolName, job.arguments);
// Synchronous: the line is in the pipe before the call starts.
writeSync(
  1,
  `${JSON.stringify({
    ready: true,
    status: scene.preparation.servers[0]?.status ?? null,
    tenantId: scene.tenantId,
    sessionId: scene.sessionId,
    runId: scene.runId,
    callId: request.callId,
    stepNumber: request.stepNumber,
  })}\n`,
);
const result = await scene.execute(request);
writeSync(1, `${JSON.stringify({ finished: result.kind })}\n`);
await scene.close();
await database.close();
process.exit(0);
