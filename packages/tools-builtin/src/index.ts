export { createBuiltinTools } from './builtin-tools';
