import {
  canonicalJson,
  CONTROL_TOOL_NAMES,
  minimumTrust,
  renderInline,
  TOOL_CALL_NAME,
  type RenderedContentPart,
  type ToolSpec,
  type TrustLevel,
} from '@veetbot/domain';
import type { ToolRegistry } from '@veetbot/ports';
import type { SessionView } from '../pipeline-deps';
import { concludeWithoutExecution, type Concluded } from '../render-item';
import type { ToolCallRequest } from '../tool-call-request';
import type { SchemaValidator } from '@veetbot/ports';
import { pinnedSpecOf, resolveTool } from './step-01-resolve-tool';
import { checkEnabled } from './step-02-check-enabled';
import { validateArguments } from './step-04-validate-arguments';

/**
 * What the unwrap decided:
 * - `as_is`: not a tool.call; steps 1–14 run on the request unchanged.
 * - `unwrapped`: a tool.call naming an offered tool; the call continues AS that tool, with the
 *   model's call id (§ Control tools).
 * - `refused`: concluded under tool.call's own name, before step 1 of the named tool; `spec` is
 *   the pinned tool.call spec (null when tool.call itself does not resolve).
 */
export type Unwrapped =
  | { readonly kind: 'as_is'; readonly request: ToolCallRequest }
  | { readonly kind: 'unwrapped'; readonly request: ToolCallRequest; readonly wrapper: ToolCallRequest }
  | { readonly kind: 'refused'; readonly concluded: Concluded; readonly spec: ToolSpec | null };

/**
 * Step 0, before step 1 (§ Control tools: "The pipeline unwraps it before step 1"). tool.call
 * never executes. Its wrapper resolves and is checked like any tool (steps 1–2 on tool.call
 * itself: it must be in the session's pin), its arguments {name, arguments} are validated
 * against the pinned tool.call spec by the same validator as step 4, and the named tool must be
 * in the run's pinned set and not a control tool. Then the request continues as that tool:
 * every later step, event, approval and row carries the deferred tool's own name and arguments.
 *
 * The unwrap lives here, in the one pipeline function's path, so the runtime's dry run of
 * steps 1–7 (batch planning, the breaker, the parallel check) and the durable run see the same
 * unwrapped call (docs/adr/0035).
 */
export function unwrapToolCall(
  registry: ToolRegistry,
  validator: SchemaValidator,
  session: SessionView,
  request: ToolCallRequest,
): Unwrapped {
  if (request.toolName !== TOOL_CALL_NAME) return { kind: 'as_is', request };
  // tool.call itself outside the pin (or unregistered): the ordinary step-1/2 refusal, under its name.
  const resolved = resolveTool(registry, session.pinned, TOOL_CALL_NAME, request.callId);
  if (!resolved.ok) return { kind: 'refused', concluded: resolved.concluded, spec: null };
  const spec = resolved.value.spec;
  const disabled = checkEnabled(session.agent, session.pinned, spec, request.callId);
  if (disabled) return { kind: 'refused', concluded: disabled, spec };

  // "A malformed wrapper fails with tool.arguments_invalid ... under tool.call's name."
  const wrapper = validateArguments(validator, spec, request.arguments, request.callId);
  if (!wrapper.ok) return { kind: 'refused', concluded: wrapper.concluded, spec };
  const { name, arguments: inner } = wrapper.value as { name: unknown; arguments: unknown };
  if (typeof name !== 'string' || typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
    // Only a tool.call spec that does not require {name: string, arguments: object} gets here.
    return { kind: 'refused', concluded: concludeWithoutExecution(request.callId, spec.name, 'tool.arguments_invalid', 'failed'), spec };
  }

  // "A name the run does not offer is denied with tool.not_found.not_offered": outside the pin,
  // or a control tool (tool.call cannot reach ask_user, delegate.run, ... nor itself). Outside a
  // session (no pin: the CLI's dry run) every registered non-control tool is offered, as step 2
  // treats it. The requested name is model text and is not echoed.
  const offeredSpec = session.pinned === null ? null : pinnedSpecOf(session.pinned, name);
  const control = CONTROL_TOOL_NAMES.has(name) || offeredSpec?.kind === 'control';
  if (control || (session.pinned !== null && offeredSpec === undefined)) {
    return {
      kind: 'refused',
      concluded: concludeWithoutExecution(request.callId, spec.name, 'tool.not_found.not_offered', 'denied'),
      spec,
    };
  }

  const { argumentTrust, ...rest } = request;
  const innerTrust = unwrappedArgumentTrust(argumentTrust, inner as Record<string, unknown>);
  return {
    kind: 'unwrapped',
    wrapper: request,
    request: { ...rest, toolName: name, arguments: inner, ...(innerTrust === undefined ? {} : { argumentTrust: innerTrust }) },
  };
}

/**
 * A caller's per-argument labels were stated for the wrapper's own keys, `name` and
 * `arguments`. The named tool's arguments all came through those two, so each of its top-level
 * keys takes the lowest label stated for either (never a higher one than the caller said).
 */
function unwrappedArgumentTrust(
  stated: Readonly<Record<string, TrustLevel>> | undefined,
  inner: Record<string, unknown>,
): Record<string, TrustLevel> | undefined {
  if (stated === undefined) return undefined;
  const labels = [stated.name, stated.arguments].filter((l): l is TrustLevel => l !== undefined);
  if (labels.length === 0) return undefined;
  const label = minimumTrust(labels, 'platform');
  return Object.fromEntries(Object.keys(inner).map((key) => [key, label]));
}

/**
 * "Invalid arguments for the named tool return that tool's input schema, because its definition
 * never reached the provider." Step 4's refusal, with two parts added: a platform note naming
 * the tool, and the schema as canonical JSON. The schema's label is its author's: a builtin spec
 * was written by the platform (PLATFORM); any other source — an MCP server above all — wrote its
 * own schema, so it is EXTERNAL_UNTRUSTED and enveloped like any untrusted text (docs/adr/0035).
 */
export function withInputSchema(concluded: Concluded, spec: ToolSpec): Concluded {
  const trust: TrustLevel = spec.source === 'builtin' ? 'platform' : 'external_untrusted';
  const schema: RenderedContentPart[] = renderInline([{ type: 'text', text: canonicalJson(spec.input_schema) }], {
    source: spec.name,
    trust,
  });
  const content: RenderedContentPart[] = [
    ...concluded.item.content,
    {
      type: 'text',
      text: `Input schema of ${spec.name} (reached through tool.call; its definition was not advertised):`,
      trust: 'platform',
    },
    ...schema,
  ];
  return { ...concluded, item: { ...concluded.item, content, trust: minimumTrust([concluded.item.trust, trust], 'platform') } };
}
