import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  inParallel,
  judge,
  listScenarios,
  loadExpectedFailures,
  REVISIONS,
  runScenario,
  type ExpectedFailures,
} from '@veetbot/conformance';
import { beforeAll, describe, expect, it } from 'vitest';

/*
 * The official MCP conformance suite's CLIENT scenarios against our MCP client adapter, at both
 * protocol revisions (docs/adr/0059). The client is the operator command `veetbot mcp check`,
 * built as `pnpm start` builds it and run as a real process for each scenario
 * (test/conformance-client.mjs says which calls each scenario gets); every scenario server is
 * the suite's own, started by the suite. tooling/conformance/expected-failures.json names every
 * scenario that still fails and why; a failure not on it fails the test, and so does a listed
 * scenario that passes (the list only shrinks).
 */

const REPO = resolve(import.meta.dirname, '../../..');
const DRIVER = join(REPO, 'apps/cli/test/conformance-client.mjs');

describe('the MCP conformance suite against the client adapter (veetbot mcp check)', () => {
  let expected: ExpectedFailures;

  beforeAll(async () => {
    // The bundle the driver runs, built from the code under test (docs/adr/0041).
    await promisify(execFile)(process.execPath, ['scripts/build-apps.mjs', 'cli'], { cwd: REPO });
    expected = await loadExpectedFailures();
  }, 120_000);

  for (const revision of REVISIONS) {
    it(`every client scenario at ${revision} passes or is on the expected-failures list with its reason`, {
      timeout: 600_000,
    }, async () => {
      const scenarios = await listScenarios('client', revision);
      expect(scenarios.length).toBeGreaterThan(20);
      const results = await inParallel(scenarios, 4, (scenario) =>
        runScenario('client', revision, scenario, { command: `"${process.execPath}" "${DRIVER}"` }),
      );
      const verdict = judge(results, expected.client[revision]);
      const failing = Object.fromEntries(results.filter((r) => !r.passed).map((r) => [r.scenario, r.failures[0] ?? '']));
      console.info(
        `conformance client ${revision}: ${verdict.passed} of ${verdict.total} pass; failing: ${JSON.stringify(failing, null, 1)}`,
      );
      expect(verdict.unexpected.map((r) => `${r.scenario}: ${r.failures.join(' | ')}`)).toEqual([]);
      expect(verdict.nowPassing, 'listed as failing but passes: take it off expected-failures.json').toEqual([]);
      expect(verdict.unknown, 'listed but not a scenario of this revision').toEqual([]);
    });
  }
});
