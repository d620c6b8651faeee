export { InMemoryToolRegistry, type ToolRegistryOptions, type BuiltinRegistrationReport } from './in-memory-tool-registry';
export { checkRegistration, type RuleContext, type RuleVerdict } from './registration-rules';
export { REGISTRATION_REASONS, type RegistryRuleCode, type RuleFailure } from './registration-codes';
export { advertised, agentEnables, environmentOffers, pinSpecs } from './specs-for-session';
export { SOURCE_TARGETS, UNSUBSCRIBE_TOOL_NAME } from './target-rules';
export { flagFor, flagEnabled, toolEnabledByFlags } from './flags';
