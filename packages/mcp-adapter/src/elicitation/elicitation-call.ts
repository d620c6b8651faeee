import type { McpElicitationCall, ToolExecutionContext } from '@veetbot/ports';

/** The call a server's form elicitation is put to: the executing call's identity and deadline (docs/adr/0060). */
export function elicitationCall(ctx: ToolExecutionContext, toolName: string, serverId: string): McpElicitationCall {
  return {
    tenantId: ctx.tenantId,
    sessionId: ctx.sessionId,
    runId: ctx.runId,
    invocationId: ctx.invocationId,
    callId: ctx.callId,
    stepNumber: ctx.stepNumber,
    principal: ctx.principal,
    toolName,
    serverId,
    deadlineAt: ctx.deadlineAt,
  };
}
