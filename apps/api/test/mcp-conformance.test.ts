import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import {
  inParallel,
  judge,
  listScenarios,
  loadExpectedFailures,
  REVISIONS,
  runScenario,
  type ExpectedFailures,
} from '@veetbot/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiHarness, type ApiHarness } from './harness';

/*
 * The official MCP conformance suite's SERVER scenarios against the gateway face (/mcp,
 * docs/adr/0044), at both protocol revisions (docs/adr/0059): the real api composed over PGlite
 * with its worker, served over real HTTP; the suite runs as its own processes, pinned in
 * tooling/conformance. The suite's client sends no credential, so the listener adds the demo
 * tenant's API key to every request — and nothing else (no run id): a client that holds only a
 * key. tooling/conformance/expected-failures.json names every scenario that still fails and why;
 * a failure not on it fails the test, and so does a listed scenario that passes (the list only
 * shrinks).
 */

describe('the MCP conformance suite against the gateway face', () => {
  let h: ApiHarness;
  let server: HttpServer;
  let url: string;
  let expected: ExpectedFailures;

  beforeAll(async () => {
    h = await openApiHarness();
    expected = await loadExpectedFailures();
    server = createAdaptorServer({
      fetch: (request: Request) => {
        const headers = new Headers(request.headers);
        headers.set('authorization', `Bearer ${h.a.key}`);
        return h.api.app.fetch(new Request(request, { headers }));
      },
    }) as HttpServer;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    await h?.close();
  });

  for (const revision of REVISIONS) {
    it(`every server scenario at ${revision} passes or is on the expected-failures list with its reason`, {
      timeout: 300_000,
    }, async () => {
      const scenarios = await listScenarios('server', revision);
      expect(scenarios.length).toBeGreaterThan(20);
      const results = await inParallel(scenarios, 4, (scenario) => runScenario('server', revision, scenario, { url }));
      const verdict = judge(results, expected.server[revision]);
      const failing = Object.fromEntries(results.filter((r) => !r.passed).map((r) => [r.scenario, r.failures[0] ?? '']));
      console.info(
        `conformance server ${revision}: ${verdict.passed} of ${verdict.total} pass; failing: ${JSON.stringify(failing, null, 1)}`,
      );
      expect(verdict.unexpected.map((r) => `${r.scenario}: ${r.failures.join(' | ')}`)).toEqual([]);
      expect(verdict.nowPassing, 'listed as failing but passes: take it off expected-failures.json').toEqual([]);
      expect(verdict.unknown, 'listed but not a scenario of this revision').toEqual([]);
    });
  }
});
