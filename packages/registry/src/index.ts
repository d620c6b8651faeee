export { ToolRegistryImpl } from './tool-registry';
