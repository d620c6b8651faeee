export { DEFAULT_MCP_GATEWAY_SETTINGS, McpGateway, type McpGatewayOptions, type McpGatewaySettings } from './gateway';
export { jsonRpcErrorResponse } from './json-rpc-error';
export {
  AGENT_HEADER,
  CALL_ID_META,
  CONTEXT_TRUST_META,
  DEADLINE_HEADER,
  RUN_HEADER,
  RUN_RESPONSE_HEADER,
  SESSION_RESPONSE_HEADER,
} from './wire-names';
