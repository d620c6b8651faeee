import { describe, expect, it } from 'vitest';
import { CI_SOAK, formatAudit, runKillSoak } from '../src/kill-soak';

/**
 * Issue 25 item 5, the CI-sized batch of the randomized kill soak (docs/adr/0067; the long form
 * is `pnpm soak`): the api and two workers from the production bundles on PostgreSQL, six runs
 * of external writes, 30 SIGKILLs (about one in ten the api's), then a drain and the audit.
 * Done when: no effect twice, no call lost or stuck, every reconciler's answer the outbox's
 * truth, and at most 10 % of the UNCERTAIN calls left for a person.
 */
describe('the kill soak, CI batch', () => {
  it('30 randomized SIGKILLs under load: 0 duplicates, 0 lost, 0 stuck, ≤ 10 % of UNCERTAIN left for a person', async () => {
    const audit = await runKillSoak({ ...CI_SOAK, log: (line) => console.log(line) });
    const report = formatAudit(audit);
    console.log(report);
    expect(audit.kills.workers + audit.kills.api, report).toBeGreaterThanOrEqual(30);
    expect(audit.problems, report).toEqual([]);
    expect(audit.duplicates, report).toBe(0);
    expect(audit.lost, report).toBe(0);
    expect(audit.stuck, report).toBe(0);
    // The load was real, and the kills landed inside calls: some were left UNCERTAIN (about one
    // in four kills, measured), so the share below is not 0 of 0.
    expect(audit.calls, report).toBeGreaterThan(60);
    expect(audit.uncertain, report).toBeGreaterThan(0);
    expect(audit.leftForPerson / audit.uncertain, report).toBeLessThanOrEqual(0.1);
    expect(audit.settledApplied + audit.settledNotApplied + audit.leftForPerson, report).toBe(audit.uncertain);
  }, 300_000);
});
