import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { OUTCOME_FIELDS, REASON_CODES, type ToolResultItem } from '@veetbot/domain';
import type { EventRow } from '@veetbot/ports';
import { openTestDatabase, type Driver, type TestDatabase } from '../src/test-database';
import { openMcpScene, type McpScene, type McpSceneOptions } from '../src/mcp-harness';
import { killStrayServerChildren, stopAllServers } from '../src/mcp-servers';

/**
 * One database per driver per file, a fresh scene (tenant, adapter, session, run) per test.
 * afterEach closes every scene (adapter shutdown: its stdio children exit), stops every server
 * process the test started, and kills any server child that outlived both: no orphans.
 */
export function useMcpSuite(driver: Driver): { open(options: McpSceneOptions): Promise<McpScene>; database(): TestDatabase } {
  let database: TestDatabase | undefined;
  const scenes: McpScene[] = [];
  beforeAll(async () => {
    database = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await database?.close();
  });
  afterEach(async () => {
    const open = scenes.splice(0);
    await Promise.allSettled(open.map((scene) => scene.close()));
    await stopAllServers();
    expect(killStrayServerChildren(), 'no server process outlived its adapter').toEqual([]);
  });
  return {
    database() {
      if (database === undefined) throw new Error('no database outside a test');
      return database;
    },
    async open(options) {
      if (database === undefined) throw new Error('no database outside a test');
      const scene = await openMcpScene(database, options);
      scenes.push(scene);
      return scene;
    },
  };
}

/** Hard gate 4 on the way: six fields, and the table's message for the code. */
export function expectOutcome(item: ToolResultItem, status: string, reasonCode: string): void {
  expect({ status: item.outcome.status, reason_code: item.outcome.reason_code }).toEqual({ status, reason_code: reasonCode });
  expect(Object.keys(item.outcome).sort()).toEqual([...OUTCOME_FIELDS].sort());
  const entry = (REASON_CODES as Record<string, { message: string }>)[reasonCode];
  expect(item.outcome.message).toBe(entry?.message);
}

/** Every string anywhere inside a value (event payloads are checked for leaked text and for hashes). */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** Events whose payload mentions `text` anywhere. */
export function eventsMentioning(events: readonly EventRow[], text: string): EventRow[] {
  return events.filter((event) => JSON.stringify(event.payload).includes(text));
}

export const ALL_STEPS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
