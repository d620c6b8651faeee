import { describe, expect, it } from 'vitest';
import { mcpToolName, type PolicyDecision, type Principal, type ProposedAction, type ToolSpec } from '@veetbot/domain';
import type { PolicyEngine } from '@veetbot/ports';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { drivers } from '../src/test-database';
import { httpServer } from '../src/mcp-harness';
import { ScriptableHttpServer } from '../src/mcp-servers';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * § ToolExecutionContext: "Unavailable standing authority falls back to interactive approval",
 * for an MCP tool: step 6 allows a read from a real HTTP MCP server, the operator's profile is
 * reloaded before the pre-effect re-check and now asks a person for the server's tools. No
 * tools/call reaches the server until the approval is decided (docs/adr/0023).
 */

/** Step 6 answers under the shipped profile; every later evaluation under `next` (the reload). */
class ReloadedAfterStep6 implements PolicyEngine {
  #evaluations = 0;
  constructor(
    private readonly first: DefaultPolicyEngine,
    private readonly next: DefaultPolicyEngine,
  ) {}
  #current(): DefaultPolicyEngine {
    return this.#evaluations <= 1 ? this.first : this.next;
  }
  evaluate(action: ProposedAction): PolicyDecision {
    this.#evaluations += 1;
    return this.#current().evaluate(action);
  }
  offers(spec: ToolSpec, principal: Principal): boolean {
    return this.#current().offers(spec, principal);
  }
}

const ASK_FOR_MCP = new DefaultPolicyEngine({
  id: 'ask-for-mcp',
  rules: [{ id: 'mcp-needs-approval', when: { sources: ['mcp'] }, effect: 'require_approval', reason_code: 'policy.approval.denied' }],
  default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
});

describe.each(drivers())('MCP: the re-check asks a person before any request leaves (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('no tools/call before the approval; approved, exactly one', async () => {
    const server = await ScriptableHttpServer.start();
    const scene = await suite.open({
      servers: [httpServer('scripted', server.url)],
      policy: new ReloadedAfterStep6(new DefaultPolicyEngine(), ASK_FOR_MCP),
    });
    const readItem = mcpToolName('scripted', 'read_item');
    const request = scene.call(readItem, { id: 'a1' });

    const first = await scene.execute(request);
    expect(first.kind).toBe('approval_required');
    expect((await server.counts()).calls.read_item ?? 0).toBe(0);
    const [row] = (await scene.stores.invocations.listForRun(scene.tenantId, scene.runId)).filter((r) => r.callId === request.callId);
    expect(row).toMatchObject({ status: 'waiting_for_approval', effectSentAt: null, toolSource: 'mcp' });
    const approval = await scene.stores.approvals.getByInvocation(scene.tenantId, row!.id);
    expect(approval?.status).toBe('pending');

    await scene.stores.approvals.decide(
      scene.tenantId,
      approval!.id,
      { decision: 'approved', decidedBy: 'approver', decidedAt: scene.clock.now() },
      [],
    );
    const ran = await scene.execute(request);
    if (ran.kind !== 'concluded') throw new Error(`expected a conclusion, got ${ran.kind}`);
    expectOutcome(ran.item, 'succeeded', 'tool.ok');
    expect((await server.counts()).calls.read_item).toBe(1);
  });
});
