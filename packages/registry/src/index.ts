export { InMemoryToolRegistry } from './in-memory-tool-registry';
