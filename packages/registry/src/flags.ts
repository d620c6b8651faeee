import { domainPartition, toolDomain } from '@veetbot/domain';

/**
 * Tools whose gate is narrower than their domain's. § Milestone 26: email.context and
 * email.feedback register under AGENT_EMAIL_MODE_ENABLED; § Milestone 31: email.subscriptions
 * and email.unsubscribe under AGENT_EMAIL_UNSUBSCRIBE_ENABLED. Any other tool in the email
 * domain takes the domain's gate (either flag).
 */
const TOOL_FLAGS: ReadonlyMap<string, string> = new Map([
  ['email.context', 'AGENT_EMAIL_MODE_ENABLED'],
  ['email.feedback', 'AGENT_EMAIL_MODE_ENABLED'],
  ['email.subscriptions', 'AGENT_EMAIL_UNSUBSCRIBE_ENABLED'],
  ['email.unsubscribe', 'AGENT_EMAIL_UNSUBSCRIBE_ENABLED'],
]);

/**
 * The flag expression gating a tool, or undefined when none does. An expression is flag
 * names joined by `|`, any one of which suffices (DOMAIN_PARTITIONS' `flag`).
 */
export function flagFor(name: string): string | undefined {
  return TOOL_FLAGS.get(name) ?? domainPartition(toolDomain(name))?.flag;
}

export function flagEnabled(expression: string, flags: Readonly<Record<string, boolean>>): boolean {
  return expression.split('|').some((flag) => Object.hasOwn(flags, flag) && flags[flag] === true);
}

/** True when the tool is ungated or its gate is on. */
export function toolEnabledByFlags(name: string, flags: Readonly<Record<string, boolean>>): boolean {
  const expression = flagFor(name);
  return expression === undefined || flagEnabled(expression, flags);
}
