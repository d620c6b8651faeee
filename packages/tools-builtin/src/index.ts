export { createBuiltinTools } from './builtin-tools';
export { createBuiltinReconcilers, type BuiltinReconcilersOptions } from './reconcile/builtin-reconcilers';
