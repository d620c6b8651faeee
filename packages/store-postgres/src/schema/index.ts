export { tenants, apiKeys } from './tenants';
export { sessions } from './sessions';
export { runs, steps } from './runs';
export { toolInvocations } from './tool-invocations';
export { approvals } from './approvals';
export { events, eventStreams } from './events';
export { artifacts } from './artifacts';
export { mcpServers, mcpToolCatalog } from './mcp';
export { skills } from './skills';
